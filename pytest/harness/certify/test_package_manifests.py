"""The manifests ./uet certify puts in a package (harness/certify/package_manifests.py) mean there what they meant
where they lay: the suite runs on these copies and verify loads them without leaving manifests/. A copy is
byte for byte unless a path in it depends on where it lies (issue 34: an absolute `extends:` made a package
its own verify rejected)."""
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[3]
from harness.inputs import manifest as manifest_mod  # noqa: E402
from harness.certify.package_manifests import manifest_layers, copy_manifests  # noqa: E402

SOFTUET = REPO / "cases" / "manifests" / "softuet.yaml"


def copied(ref: str, staging: pathlib.Path) -> tuple[manifest_mod.Manifest, manifest_mod.Manifest]:
    """(the manifest, its copy in the package) after copy_manifests."""
    original = manifest_mod.load(ref)
    [inside] = copy_manifests([original], staging)
    return original, manifest_mod.load(str(staging / inside))


class TestCopies:
    def test_relative_extends_are_copied_byte_for_byte(self, tmp_path):
        ref = str(REPO / "cases" / "manifests" / "personalities" / "no-dgram.yaml")
        original, copy = copied(ref, tmp_path)
        assert [p.read_bytes() for p in manifest_layers(copy.ref)] == [p.read_bytes() for p in manifest_layers(ref)]
        assert (copy.name, copy.sha256, copy.data) == (original.name, original.sha256, original.data)

    def test_an_absolute_extends_names_the_copy_it_extends(self, tmp_path):
        vendor = tmp_path / "vendor"
        vendor.mkdir()
        (vendor / "child.yaml").write_text(f"extends: {SOFTUET}#hpc\nprovider_version: '7'\n")
        original, copy = copied(str(vendor / "child.yaml"), tmp_path / "staging")
        layers = manifest_layers(copy.ref, within=tmp_path / "staging" / "manifests")
        assert [p.read_bytes() for p in layers[1:]] == [SOFTUET.read_bytes()]
        assert (copy.name, copy.data) == (original.name, original.data)

    def test_a_relative_libfabric_stays_the_prefix_it_named(self, tmp_path):
        vendor = tmp_path / "vendor"
        vendor.mkdir()
        (vendor / "child.yaml").write_text(f"extends: {SOFTUET}#hpc\nlibfabric: ../prefix\n")
        original, copy = copied(str(vendor / "child.yaml"), tmp_path / "staging")
        assert copy.libfabric == original.libfabric == tmp_path / "prefix"
        assert copy.data == original.data
