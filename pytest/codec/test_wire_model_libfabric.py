"""The `libfabric:` maps of spec/wire.yaml: codec/generate/wire_model.py loads the real file and rejects
bad maps with a message naming the entry, and the generator turns that into a failed build."""
import pathlib
import subprocess
import sys

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
GENERATE = REPO / "codec" / "generate"
WIRE = REPO / "spec" / "wire.yaml"
sys.path.insert(0, str(GENERATE))

from wire_model import SpecError, load  # noqa: E402


def test_spec_maps_load_with_the_expected_sizes():
    maps = load(str(WIRE)).libfabric
    assert len(maps["atomic_op"].pairs) == 20
    assert ("FI_ATOMIC_READ", "READ") in maps["atomic_op"].pairs
    assert len(maps["atomic_datatype"].pairs) == 18
    assert not any(fi.startswith("FI_FLOAT8") for fi, _ in maps["atomic_datatype"].pairs)
    errno = maps["ses_return_code_errno"]
    assert errno.default == "FI_EIO" and errno.choice == "ses-rc-fi-errno"
    assert ("RC_BAD_MKEY", "FI_EKEYREJECTED") in errno.pairs


def edited(tmp_path, edit):
    """wire.yaml with edit(doc) applied, written to tmp_path (anchors are expanded: harmless)."""
    doc = yaml.safe_load(WIRE.read_text(encoding="utf-8"))
    edit(doc)
    path = tmp_path / "wire.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def lf(doc, name):
    return doc["libfabric"][name]


@pytest.mark.parametrize("edit, message", [
    (lambda d: lf(d, "atomic_op")["pairs"].update(FI_MIN="MINIMUM"),
     "libfabric.atomic_op: FI_MIN -> MINIMUM: MINIMUM is not a value of enum amo_opcode"),
    (lambda d: lf(d, "atomic_datatype")["pairs"].update({"FI-FLOAT8": "INT8"}),
     "libfabric.atomic_datatype: FI-FLOAT8 -> INT8: FI-FLOAT8 is not a libfabric name"),
    (lambda d: lf(d, "atomic_op")["pairs"].update(FI_NOOP="MIN"),
     "libfabric.atomic_op: FI_NOOP -> MIN: MIN is mapped twice"),
    (lambda d: lf(d, "ses_return_code_errno")["pairs"].update(RC_BOGUS="FI_EIO"),
     "libfabric.ses_return_code_errno: RC_BOGUS -> FI_EIO: RC_BOGUS is not a value of enum ses_return_code"),
    (lambda d: lf(d, "ses_return_code_errno")["pairs"].update(RC_DROPPED="EIO"),
     "libfabric.ses_return_code_errno: RC_DROPPED -> EIO: EIO is not a libfabric name"),
    (lambda d: lf(d, "ses_return_code_errno").update(choice="no-such-choice"),
     "libfabric.ses_return_code_errno: cites unknown choice no-such-choice"),
    (lambda d: lf(d, "ses_return_code_errno").pop("default"),
     "libfabric.ses_return_code_errno: needs `default`"),
    (lambda d: lf(d, "atomic_op").update(enum="amo_datatype"),
     "libfabric.atomic_op: enum must be amo_opcode"),
    (lambda d: d["libfabric"].pop("atomic_datatype"), "libfabric.atomic_datatype: missing"),
])
def test_bad_map_is_rejected_naming_the_entry(tmp_path, edit, message):
    with pytest.raises(SpecError) as err:
        load(str(edited(tmp_path, edit)))
    assert message in str(err.value)


def test_a_name_given_twice_is_rejected_not_silently_overwritten(tmp_path):
    # Plain YAML keeps the last of two equal keys; the loader must refuse instead.
    text = WIRE.read_text(encoding="utf-8")
    assert text.count("FI_MAX: MAX,") == 1
    path = tmp_path / "wire.yaml"
    path.write_text(text.replace("FI_MAX: MAX,", "FI_MAX: MAX, FI_MIN: MAX,"), encoding="utf-8")
    with pytest.raises(SpecError, match="FI_MIN appears twice"):
        load(str(path))


def test_generator_fails_the_build_on_a_bad_map(tmp_path):
    path = edited(tmp_path, lambda d: lf(d, "atomic_op")["pairs"].update(FI_MIN="MINIMUM"))
    proc = subprocess.run([sys.executable, str(GENERATE / "generate_codec.py"), str(path), str(tmp_path / "gen")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert "FI_MIN -> MINIMUM" in proc.stderr
    assert not (tmp_path / "gen" / "uet" / "wire" / "libfabric_gen.hpp").exists()
