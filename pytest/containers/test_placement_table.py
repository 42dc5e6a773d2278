"""The placements are a table (containers/choice.py): a name, a class, and what the harness must know of the
class, said by its attributes. A new placement is its module and a row; nothing in harness/ names it."""
import pathlib
import re

import pytest

from containers.choice import CLASSES, PLACEMENTS, open_placement, placement_class
from containers.placement import PlacementError

REPO = pathlib.Path(__file__).resolve().parents[2]


class TestPlacementTable:
    def test_the_command_line_offers_every_named_placement_but_same_host(self):
        assert PLACEMENTS == ("namespaces", "containers", "nodes")
        assert set(CLASSES) == {*PLACEMENTS, "same-host"}

    def test_each_class_answers_to_its_name(self):
        assert {name: cls.name for name, cls in CLASSES.items()} == {name: name for name in CLASSES}

    @pytest.mark.parametrize("name,shares,keeps,takes", [
        ("same-host", True, True, False),
        ("namespaces", False, False, False),
        ("containers", False, False, False),
        ("nodes", True, True, True),
    ])
    def test_what_the_harness_needs_to_know_is_the_class_s_word(self, name, shares, keeps, takes):
        cls = placement_class(name)
        assert (cls.shares_network, cls.keeps_host_network, cls.takes_host_interface) == (shares, keeps, takes)

    def test_an_unknown_name_is_refused_with_the_names_there_are(self):
        with pytest.raises(PlacementError, match=r"unknown placement 'vm': one of namespaces, containers, nodes"):
            open_placement("vm")

    def test_the_harness_names_no_placement(self):
        # Its decisions come from the class's attributes; a comparison with a placement's name would be a
        # second place to edit when a placement is added.
        named = []
        for path in sorted((REPO / "harness").rglob("*.py")):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if re.search(r'placement(_name)?\s*(==|!=|in)\s*\(?"', line):
                    named.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
        assert named == []
