"""Issue 26, part 2: a provider's fi_getname layout is manifest data (spec/address-layouts.yaml, the
manifest's address_layout). The harness resolves it into the record the case binaries read, and the cases
read every address through it: a declared layout is followed, a wrong one is seen."""
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]

from harness.inputs import address_layout  # noqa: E402
from harness.inputs import manifest as manifest_mod  # noqa: E402
from harness.run.run_cases import run_manifest  # noqa: E402

SOFTUET_FIELDS = {"version": (0, 1), "flags": (1, 1), "caps": (2, 1), "fa": (4, 16), "pid_on_fep": (20, 2),
                  "start_index": (22, 2), "num_indices": (24, 2), "initiator_id": (28, 4), "udp_port": (34, 2)}


def declared(fields: dict, size: int = 40) -> str:
    """A manifest's own address_layout (no extends) in YAML flow style."""
    body = ", ".join(f"{name}: {{offset: {o}, width: {w}{', order: big' if name == 'fa' else ''}}}"
                     for name, (o, w) in fields.items())
    return f"address_layout: {{size: {size}, fields: {{{body}}}}}\n"


class TestLayoutData:
    def test_without_a_declaration_the_suite_s_choice_applies(self):
        got = address_layout.resolve(None)
        assert (got["name"], got["declared_by"], got["choice"], got["size"]) == \
            ("uet-address-layout", "default", "uet-address-layout", 32)
        assert {k: (v["offset"], v["width"]) for k, v in got["fields"].items()} == \
            {k: v for k, v in SOFTUET_FIELDS.items() if k != "udp_port"}

    def test_softuet_s_layout_is_the_choice_and_its_port(self):
        got = address_layout.resolve("softuet")
        assert (got["declared_by"], got["choice"], got["size"], got["fields"]["udp_port"]) == \
            ("named", "uet-address-layout", 40, {"offset": 34, "width": 2, "order": "host"})

    def test_a_manifest_s_own_layout_rests_on_no_choice(self):
        got = address_layout.resolve({"size": 52, "fields": {n: {"offset": o + 8, "width": w}
                                                             for n, (o, w) in SOFTUET_FIELDS.items()}})
        assert (got["name"], got["declared_by"], got["choice"], got["fields"]["initiator_id"]["offset"]) == \
            ("declared", "manifest", None, 36)

    @pytest.mark.parametrize("layout, problem", [
        ("nope", "'nope' is not a layout of address-layouts.yaml (uet-address-layout, softuet)"),
        ({"extends": "softuet", "fields": {"udp_port": {"offset": 20, "width": 2}}},
         "fields pid_on_fep and udp_port overlap at byte 20"),
        ({"extends": "softuet", "fields": {"colour": {"offset": 36, "width": 2}}}, "unknown field 'colour'"),
        ({"extends": "softuet", "fields": {"version": {"offset": 0, "width": 3}}},
         "field version: width 3 is not one of 1, 2, 4, 8"),
        ({"extends": "softuet", "fields": {"fa": {"offset": 4, "width": 8}}}, "field fa: width 8 is not one of 16, 4"),
        ({"extends": "softuet", "fields": {"udp_port": {"offset": 39, "width": 2}}},
         "field udp_port (bytes 39..40) ends past the address's 40 bytes"),
        ({"extends": "softuet", "fields": {"udp_port": {"offset": 34, "width": 2, "order": "middle"}}},
         "field udp_port: order 'middle' is not one of host, little, big"),
        ({"size": 8, "fields": {"version": {"offset": 0, "width": 1}}},
         "no flags, caps, fa, pid_on_fep, start_index, num_indices, initiator_id: every Table 2-10 field needs a place"),
        ({"extends": "elsewhere"}, "extends 'elsewhere', which is not a layout of address-layouts.yaml"),
    ])
    def test_a_layout_that_cannot_be_read_is_refused_naming_the_problem(self, layout, problem):
        with pytest.raises(address_layout.LayoutError) as err:
            address_layout.resolve(layout)
        assert problem in str(err.value)

    def test_a_bad_layout_in_a_manifest_is_refused_naming_file_and_key(self, tmp_path):
        bad = tmp_path / "bad.yaml"
        bad.write_text(f"extends: {REPO / 'cases' / 'manifests' / 'softuet.yaml'}\n"
                       "address_layout: {extends: softuet, fields: {udp_port: {offset: 20, width: 2}}}\n")
        run = subprocess.run([sys.executable, "-m", "harness.inputs.manifest", "check", str(bad)], cwd=REPO,
                             env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True, timeout=60)
        assert run.returncode == 1
        assert f"{bad}: address_layout: fields pid_on_fep and udp_port overlap at byte 20" in run.stdout + run.stderr

    def test_read_follows_the_byte_order(self):
        layout = address_layout.resolve({"extends": "softuet", "fields": {"udp_port": {"offset": 34, "width": 2,
                                                                                      "order": "big"}}})
        blob = bytes(34) + b"\x12\xb9" + bytes(4)
        assert address_layout.read(layout, blob, "udp_port") == 4793
        assert address_layout.read(layout, blob[:35], "udp_port") is None


@pytest.fixture(scope="module")
def softuet_declaring(tmp_path_factory):
    """Writes a manifest of softuet that declares `layout` (YAML text) itself; returns its path."""
    folder = tmp_path_factory.mktemp("layouts")

    def write(name: str, layout: str) -> pathlib.Path:
        path = folder / f"{name}.yaml"
        path.write_text(f"extends: {REPO / 'cases' / 'manifests' / 'softuet.yaml'}\nname: {name}\n" + layout)
        manifest_mod.load(path)  # valid
        return path
    return write


ADDRESS_CASES = ("Claimed/Discovery.GetnameReturnsTheCompleteUetAddress/rdm:"
                 "Claimed/Ep.EndpointsOfADomainHaveDistinctResourceIndices/rdm:"
                 "Claimed/Ep.AddressIsAssignedAtOpenAndComplete/rdm")


def address_results(manifest: pathlib.Path, build: pathlib.Path, out: pathlib.Path) -> dict:
    results = run_manifest(manifest, build, out, areas=["discovery", "ep"], case_filter=ADDRESS_CASES,
                           use_namespaces=False)
    return {r.case: r for r in results}


class TestCasesReadThroughTheLayout:
    def test_softuet_s_layout_declared_in_full_by_its_manifest_passes_and_rests_on_no_choice(
            self, softuet_declaring, build_dir, tmp_path):
        got = address_results(softuet_declaring("declares-its-own", declared(SOFTUET_FIELDS)), build_dir, tmp_path)
        assert sorted(got) == sorted(ADDRESS_CASES.split(":"))
        for case, r in got.items():
            assert r.verdict == "pass", (case, r.reason, r.message)
            assert "uet-address-layout" not in r.choices
            assert r.notes.get("address_layout_declares-its-own") == "the layout its manifest declares"

    def test_a_layout_that_swaps_fields_is_followed_and_its_misreading_fails(self, softuet_declaring, build_dir,
                                                                             tmp_path):
        swapped = dict(SOFTUET_FIELDS, version=(2, 1), caps=(0, 1), start_index=(20, 2), pid_on_fep=(22, 2))
        got = address_results(softuet_declaring("swaps-fields", declared(swapped)), build_dir, tmp_path)
        # The version is read from softuet's capabilities byte, the resource index from its PIDonFEP (the same
        # for both endpoints of a domain).
        discovery = got["Claimed/Discovery.GetnameReturnsTheCompleteUetAddress/rdm"]
        assert discovery.verdict == "fail" and "layout.get(a.data(), len, AddrField::version)" in discovery.message
        shared = got["Claimed/Ep.EndpointsOfADomainHaveDistinctResourceIndices/rdm"]
        assert shared.verdict == "fail" and "two endpoints of one domain share resource index" in shared.message

    def test_a_blob_shorter_than_the_declared_layout_is_a_finding_with_its_bytes(self, softuet_declaring, build_dir,
                                                                                  tmp_path):
        longer = softuet_declaring("wants-52-bytes", "address_layout: {extends: softuet, size: 52}\n")
        got = address_results(longer, build_dir, tmp_path)
        r = got["Claimed/Discovery.GetnameReturnsTheCompleteUetAddress/rdm"]
        assert r.verdict == "fail"
        assert "40 bytes, where the layout its manifest declares has 52" in r.message
        assert "the Table 2-10 fields do not fit in fi_getname's bytes: 00" in r.message


EXTENDED = REPO / "cases" / "manifests" / "personalities" / "extended-address.yaml"
NO_ADDRESS = "Claimed/Msg.SendArrivesWholeInThePostedBuffer/rdm"       # reads no field of an address
READS_CHOSEN = "Claimed/Msg.DirectedReceiveTakesOnlyItsInitiator/rdm"  # its initiator ID and PIDonFEP


class TestWhatRestsOnTheChoice:
    """Issue 35, item 11: a verdict rests on the layout choice (uet-address-layout) only where its case reads an
    address through a place the choice gives; a layout that extends the choice gives some places itself."""

    def test_the_places_each_layout_takes_from_the_choice(self):
        every = ["size", "version", "flags", "caps", "fa", "pid_on_fep", "start_index", "num_indices", "initiator_id"]
        assert address_layout.resolve(None)["choice_places"] == every
        assert address_layout.resolve("softuet")["choice_places"] == every + ["udp_port"]
        extended = manifest_mod.load(EXTENDED).resolve(build=REPO / "build", port=4793)["address_layout"]
        assert (extended["declared_by"], extended["choice"], extended["choice_places"]) == \
            ("manifest", "uet-address-layout", every[1:])
        assert address_layout.resolve({"size": 40, "fields": {n: {"offset": o, "width": w} for n, (o, w)
                                                              in SOFTUET_FIELDS.items()}})["choice_places"] == []

    def test_a_result_that_reads_no_address_rests_on_no_layout_choice(self, build_dir, tmp_path):
        results = run_manifest(EXTENDED, build_dir, tmp_path, areas=["msg"], use_namespaces=False,
                               case_filter=f"{NO_ADDRESS}:{READS_CHOSEN}")
        got = {r.case: r for r in results}
        assert sorted(got) == sorted([NO_ADDRESS, READS_CHOSEN])
        assert got[NO_ADDRESS].verdict == "pass", got[NO_ADDRESS].message
        assert "uet-address-layout" not in got[NO_ADDRESS].choices
        assert got[READS_CHOSEN].verdict == "pass", got[READS_CHOSEN].message
        assert "uet-address-layout" in got[READS_CHOSEN].choices
