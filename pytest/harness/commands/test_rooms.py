"""The Python tree's rooms: each folder of harness/ one job, at most 15 modules, imports only downwards.

A module may import one of its own room or of a room below it; a room below never imports one above, so the
runner can change without the results model, the reports or the inputs knowing. The order is the
architecture (README, "Where things are"); this test is where it is kept.
"""
import ast
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]

# Lowest first. Rooms on one line may not import each other.
LAYERS = (
    ("containers",),         # where the two sides of a cell run (its placement names: the front door's too)
    ("harness.commands",),   # the front door's usage checks: the standard library and those names only
    ("harness.files",),      # reading what the suite did not write, writing its own
    ("harness.inputs",),     # what a run is given
    ("harness.results",),    # the results model and what is derived from it alone
    ("reports",),            # the pages, from the results model and the inputs
    ("harness.trends",),     # runs against runs
    ("harness.wire",),       # captures and what is judged on them
    ("harness.shards",),     # a run cut into shards: the cut and the plan's fingerprint
    ("harness.run",),        # running the suite
    ("harness.certify", "harness.selftest", "harness.merge", "harness.engines"),
    ("harness.plugfest",),   # many labs' packages, verified as certify's verify does, in the history
)
ROOM_LIMIT = 15


def _package_of(path: pathlib.Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts[:-1])


def _room_of(module: str) -> tuple[int, str] | None:
    for level, rooms in enumerate(LAYERS):
        for room in rooms:
            if module == room or module.startswith(room + "."):
                return level, room
    return None


def _imports(path: pathlib.Path) -> set[str]:
    """Every module of the tree that `path` imports, at its head or inside a function."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if _room_of(m) and _is_module(m)}


def _is_module(dotted: str) -> bool:
    base = REPO.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _modules():
    for top in ("harness", "reports", "containers"):
        for path in sorted((REPO / top).rglob("*.py")):
            yield ".".join(path.relative_to(REPO).with_suffix("").parts), path


class TestRooms:
    def test_every_module_lives_in_a_room(self):
        homeless = [name for name, path in _modules()
                    if path.name != "__init__.py" and _room_of(name) is None]
        assert homeless == []

    def test_no_room_holds_more_than_the_limit(self):
        sizes = {}
        for name, path in _modules():
            if path.name != "__init__.py":
                sizes[_package_of(path)] = sizes.get(_package_of(path), 0) + 1
        assert {room: n for room, n in sizes.items() if n > ROOM_LIMIT and room != "containers"} == {}

    def test_no_module_imports_a_room_above_its_own_or_beside_it(self):
        wrong = []
        for name, path in _modules():
            if _room_of(name) is None:  # harness/__init__.py: the package, not a room
                continue
            level, room = _room_of(name)
            for imported in _imports(path):
                their_level, their_room = _room_of(imported)
                if their_level > level or (their_level == level and their_room != room):
                    wrong.append(f"{name} imports {imported}")
        assert wrong == []

    def test_no_import_circle(self):
        modules = dict(_modules())
        graph = {name: _imports(path) & modules.keys() for name, path in modules.items()}
        circles = []

        def visit(node, stack, done):
            if node in stack:
                circles.append(stack[stack.index(node):] + [node])
                return
            if node in done:
                return
            for nxt in sorted(graph.get(node, ())):
                visit(nxt, stack + [node], done)
            done.add(node)

        done = set()
        for node in sorted(graph):
            visit(node, [], done)
        assert circles == []


@pytest.mark.parametrize("room", sorted({_package_of(p) for _, p in _modules()}))
def test_each_room_says_what_it_is_for(room):
    init = REPO.joinpath(*room.split(".")) / "__init__.py"
    assert init.is_file() and ast.get_docstring(ast.parse(init.read_text())), room
