"""Issue 35, item 3: a manifest says honestly that its provider takes no JobID (job_id_methods: [], resolved as
none, not as all three), drops the JobID hooks its `extends` gives with a null, and an indirect JobID that is no
JobID (0) or comes without the environment that assigns it is a problem `manifest check` names, not a JobID the
cases read as "not said"."""
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]

from harness.inputs import manifest as manifest_mod  # noqa: E402

SOFTUET = REPO / "cases" / "manifests" / "softuet.yaml"
NO_JOB_ID_AT_ALL = REPO / "cases" / "manifests" / "personalities" / "no-job-id-at-all.yaml"


@pytest.fixture
def vendor(tmp_path):
    """vendor(text) -> a manifest that extends softuet.yaml with `text`."""
    def make(text):
        path = tmp_path / "vendor.yaml"
        path.write_text(f"extends: {SOFTUET}\n{text}")
        return path
    return make


@pytest.fixture
def check(capsys):
    """check(path) -> (exit status, stdout, stderr) of `python3 -m harness.inputs.manifest check PATH`."""
    def run(path):
        rc = manifest_mod.main(["check", str(path)])
        out = capsys.readouterr()
        return rc, out.out, out.err
    return run


def resolved(path) -> dict:
    return manifest_mod.load(path).resolve(build=REPO / "build", port=4793)


class TestNoJobIdAtAll:
    def test_an_empty_list_resolves_as_no_method(self):
        record = resolved(NO_JOB_ID_AT_ALL)
        assert record["job_id_methods"] == []

    def test_the_hooks_extends_gave_are_dropped_by_null(self):
        record = resolved(NO_JOB_ID_AT_ALL)
        assert (record["indirect_job_id"], record["indirect_job_id_environment"],
                record["fallback_job_id_environment"], record["privileged_entity"]) == (None, {}, {}, None)

    def test_saying_nothing_is_still_all_three(self):
        assert resolved(SOFTUET)["job_id_methods"] == ["indirect", "direct", "av"]

    def test_hooks_of_a_provider_without_job_ids_are_named(self, vendor, check):
        path = vendor("job_id_methods: []\nfallback_job_id_environment: null\nprivileged_entity: null\n")
        rc, out, err = check(path)
        where = f"{path} (after extends and variant)"
        assert (rc, out) == (1, "")
        assert err == (f"{where}: indirect_job_id_environment: job_id_methods (none) claims no JobID method, so the "
                       "suite has no JobID to ask of it this way; leave indirect_job_id_environment out (null drops "
                       "what extends gives)\n"
                       f"{where}: indirect_job_id: job_id_methods (none) claims no JobID method, so the suite has no "
                       "JobID to ask of it this way; leave indirect_job_id out (null drops what extends gives)\n")


class TestIndirectJobId:
    def test_job_id_zero_without_an_environment_is_refused(self, vendor, check):
        path = vendor("indirect_job_id_environment: null\nindirect_job_id: 0\n")
        rc, out, err = check(path)
        where = f"{path} (after extends and variant)"
        assert (rc, out) == (1, "")
        assert err == (f"{where}: indirect_job_id: '0' is not a JobID (1..16777215; 0 is no JobID, choice "
                       "job-id-zero-invalid): a provider that takes no JobID says job_id_methods: []\n"
                       f"{where}: indirect_job_id and indirect_job_id_environment go together (the JobID that "
                       "environment assigns): give both, or neither\n")

    def test_an_environment_without_its_job_id_is_refused(self, vendor, check):
        path = vendor("indirect_job_id: null\n")
        rc, _, err = check(path)
        assert (rc, err) == (1, f"{path} (after extends and variant): indirect_job_id and indirect_job_id_environment "
                                "go together (the JobID that environment assigns): give both, or neither\n")

    @pytest.mark.parametrize("written,number", [("0x5A5A01", 0x5A5A01), ("7", 7), ("16777215", 16777215)])
    def test_a_job_id_resolves_to_its_number(self, vendor, written, number):
        assert resolved(vendor(f"indirect_job_id: {written}\n"))["indirect_job_id"] == number
