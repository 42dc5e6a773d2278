"""Issue 36, item 3: the resolved side is declared once ($defs/resolved of cases/manifests/manifest.schema.yaml).
The harness's writer builds its type from the declaration, the case binaries' struct and loader are generated
from it (cases/generate/generate_resolved_side.py), and a cell plan carries both sides. What a binary reads of
a record the real writer made is what the writer wrote, key by key, and a key the declaration lacks is refused
by both."""
import json
import os
import pathlib
import subprocess
import sys

import pytest
import yaml

from harness.inputs import manifest as manifest_mod
from harness.run import cell_plan

REPO = pathlib.Path(__file__).resolve().parents[2]

# Records whose keys between them take every form the declaration allows: a UET provider with every entity
# hook, one without wire or entity (tcp_rxm), one with no JobID method, one whose provider picks its port (auto),
# one with a declared address layout.
REFS = ["softuet.yaml", "tcp_rxm.yaml", "personalities/no-job-id-at-all.yaml", "personalities/own-port.yaml",
        "personalities/address-v1.yaml"]


def _as_read(value, schema: dict, defs: dict):
    """`value` as the C++ struct holds it, per the declaration's rule: null is the empty string or list (a null
    number or object stays null)."""
    if "$ref" in schema:
        schema = defs[schema["$ref"].removeprefix("#/$defs/")]
    types = schema.get("type") if isinstance(schema.get("type"), list) else [schema.get("type")]
    if value is None:
        return "" if "string" in types else [] if "array" in types else None
    if isinstance(value, dict) and "properties" in schema:
        return {k: _as_read(v, schema["properties"][k], defs) for k, v in value.items()}
    return value


def _layout_as_read(layout: dict) -> dict:
    """The address layout's keys the cases keep (its source and confidence are the report's), its choice's
    places as a set."""
    kept = {k: layout[k] for k in ("name", "declared_by", "choice", "size", "fields")}
    return dict(kept, choice_places=sorted(layout["choice_places"]))


@pytest.fixture(scope="module")
def dump(build_dir):
    binary = build_dir / "cases" / "test" / "uet_cases_resolved_dump"
    if not binary.exists():
        pytest.fail(f"{binary} is not built: run ./uet build")

    def run(plan_path):
        return subprocess.run([str(binary)], env=dict(os.environ, **{cell_plan.PLAN_VARIABLE: str(plan_path)}),
                              capture_output=True, text=True, timeout=60)
    return run


def write_plan(tmp_path, initiator: dict, target: dict, edit=None):
    """A plan of the real writer carrying both records; `edit` changes it after (what no writer would write)."""
    plan = cell_plan.make(cell="a--b", area="dump", initiator_manifest=tmp_path / "initiator.manifest.json",
                          target_manifest=tmp_path / "target.manifest.json", initiator_record=initiator,
                          target_record=target, results=tmp_path / "r.jsonl", captures=tmp_path)
    if edit:
        edit(plan)
    return cell_plan.write(tmp_path / "dump.plan.json", plan)


class TestTheWriter:
    @pytest.mark.parametrize("ref", REFS)
    def test_it_writes_every_declared_key_in_the_declared_order(self, resolved_side, ref):
        assert tuple(resolved_side(ref)) == manifest_mod.RESOLVED_FIELDS

    def test_a_key_the_declaration_lacks_is_refused(self, resolved_side):
        with pytest.raises(manifest_mod.ResolvedSideError, match="undeclared key mtu "):
            manifest_mod.resolved_record({"mtu": 9000}, {})
        record = resolved_side()
        with pytest.raises(manifest_mod.ResolvedSideError,
                           match=r"^resolved side: privileged_entity: unknown key: mtu \(its declaration: "):
            manifest_mod.validate_resolved(dict(record, privileged_entity=dict(record["privileged_entity"], mtu=1)))

    def test_a_value_of_another_type_is_refused_naming_its_key(self, resolved_side):
        with pytest.raises(manifest_mod.ResolvedSideError, match="^resolved side: port: a string where an integer is wanted "):
            manifest_mod.validate_resolved(dict(resolved_side(), port="x"))


class TestThePythonReader:
    """harness.inputs.manifest.read_resolved, the reports' and verify's one reader of a cell's record."""

    def test_it_reads_what_the_writer_wrote_where_the_cell_keeps_it(self, tmp_path):
        path = manifest_mod.resolved_path(tmp_path, "target")
        written = manifest_mod.write_resolved(manifest_mod.load(REPO / "cases" / "manifests" / "softuet.yaml"), path,
                                              build=REPO / "build", port=4794)
        assert path == tmp_path / "target.manifest.json"
        assert manifest_mod.read_resolved(path) == json.loads(json.dumps(written))

    @pytest.mark.parametrize("content", [b"[1, 2]", b"{not json", b"\xff\xfe", b"[" * 100000])
    def test_what_is_not_a_record_reads_as_none(self, tmp_path, content):
        (tmp_path / "initiator.manifest.json").write_bytes(content)
        assert manifest_mod.read_resolved(manifest_mod.resolved_path(tmp_path, "initiator")) is None

    def test_a_link_a_folder_a_missing_file_and_an_oversized_one_are_not_read(self, tmp_path):
        real = tmp_path / "real.json"
        real.write_text('{"name": "softuet"}')
        (tmp_path / "initiator.manifest.json").symlink_to(real)
        (tmp_path / "target.manifest.json").mkdir()
        big = tmp_path / "big" / "initiator.manifest.json"
        big.parent.mkdir()
        big.write_text('{"pad": "' + "x" * manifest_mod.RESOLVED_LIMIT + '"}')
        for path in (tmp_path / "initiator.manifest.json", tmp_path / "target.manifest.json", big,
                     tmp_path / "none" / "initiator.manifest.json"):
            assert manifest_mod.read_resolved(path) is None, path
        assert manifest_mod.read_resolved(real) == {"name": "softuet"}


class TestTheBinaryReadsWhatTheWriterWrote:
    @pytest.mark.parametrize("ref", REFS)
    def test_every_declared_key_reads_as_written(self, dump, tmp_path, resolved_side, ref):
        initiator, target = resolved_side(ref), resolved_side("softuet.yaml#hpc", port=4794)
        run = dump(write_plan(tmp_path, initiator, target))
        assert run.returncode == 0, run.stderr
        read = json.loads(run.stdout)
        defs = manifest_mod.resolved_declaration()["$defs"]
        for side, written in (("initiator", initiator), ("target", target)):
            got = read[side]
            assert sorted(got) == sorted(manifest_mod.RESOLVED_FIELDS)
            for key in manifest_mod.RESOLVED_FIELDS:
                if key == "address_layout":
                    assert _layout_as_read(got[key]) == _layout_as_read(written[key]), (side, key)
                else:
                    assert got[key] == _as_read(written[key], defs["resolved"]["properties"][key], defs), (side, key)

    @pytest.mark.parametrize("where, edit", [
        ("mtu", lambda record: record.update(mtu=9000)),
        ("privileged_entity.job.mtu", lambda record: record["privileged_entity"]["job"].update(mtu=9000)),
    ])
    def test_a_key_the_declaration_lacks_ends_the_binary_naming_it(self, dump, tmp_path, resolved_side, where, edit):
        run = dump(write_plan(tmp_path, resolved_side(), resolved_side(port=4794),
                              edit=lambda plan: edit(plan["target"]["resolved"])))
        assert run.returncode == 3
        assert run.stderr == (f"uet cases: manifest {tmp_path / 'target.manifest.json'}: undeclared key '{where}' (the "
                              "resolved side is declared in cases/manifests/manifest.schema.yaml, $defs/resolved)\n")

    def test_a_record_of_another_format_is_refused(self, dump, tmp_path, resolved_side):
        run = dump(write_plan(tmp_path, resolved_side(), resolved_side(port=4794),
                              edit=lambda plan: plan["initiator"]["resolved"].update(format=2)))
        assert run.returncode == 3
        assert run.stderr == (f"uet cases: manifest {tmp_path / 'initiator.manifest.json'}: format: 2, this binary "
                              "reads 1 (rebuild the cases or the harness)\n")


class TestTheGenerator:
    def test_a_declared_value_it_has_no_cpp_type_for_fails_the_build_naming_it(self, repo_root, tmp_path):
        schema = yaml.safe_load((repo_root / "cases" / "manifests" / "manifest.schema.yaml").read_text())
        schema["$defs"]["resolved"]["properties"]["mtu"] = {"type": "number"}
        (tmp_path / "manifest.schema.yaml").write_text(yaml.safe_dump(schema, sort_keys=False))
        run = subprocess.run([sys.executable, str(repo_root / "cases" / "generate" / "generate_resolved_side.py"),
                              str(tmp_path / "manifest.schema.yaml"), str(tmp_path / "out")],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 1
        assert run.stderr.startswith(f"{tmp_path / 'manifest.schema.yaml'}: $defs/resolved.mtu: no C++ type for ")
        assert not (tmp_path / "out").exists()

    def test_a_declared_key_reaches_the_struct_and_its_loader(self, repo_root, tmp_path):
        schema = yaml.safe_load((repo_root / "cases" / "manifests" / "manifest.schema.yaml").read_text())
        schema["$defs"]["resolved"]["properties"]["mtu"] = {"type": ["integer", "null"], "x-cpp": {"type": "uint32_t"}}
        (tmp_path / "manifest.schema.yaml").write_text(yaml.safe_dump(schema, sort_keys=False))
        run = subprocess.run([sys.executable, str(repo_root / "cases" / "generate" / "generate_resolved_side.py"),
                              str(tmp_path / "manifest.schema.yaml"), str(tmp_path / "out")],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        assert "  std::optional<uint32_t> mtu{};\n" in (tmp_path / "out" / "resolved_side_gen.hpp").read_text()
        loader = (tmp_path / "out" / "resolved_side_gen.cpp").read_text()
        assert 'if (const auto& v = j.at("mtu"); !v.is_null()) out.mtu = v.get<uint32_t>();' in loader
        assert '"predefined_service_names", "features", "mtu"}, at);' in loader
