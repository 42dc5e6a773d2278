"""A side that does not end cleanly once a case's checks are done is a note on the case; the verdict of what
the case checked stands (README "Teardown"). The close-waits personality's initiator holds its fi_close until
the target's FEP, which sent it a request, has closed: with a wait longer than the case's close deadline its
close cannot return in time, whatever the host's load (the target ends only after that deadline)."""
import pathlib

from harness.selftest.mutation import short_case as short
from harness.run.run_cases import run_manifest
from reports import view

REPO = pathlib.Path(__file__).resolve().parents[2]
CLOSE_WAITS = REPO / "cases" / "manifests" / "personalities" / "close-waits.yaml"
CASE = "DeliveryTrafficClass.DataPacketsCarryTheDefaultDataTrafficClass"


class TestTeardownNote:
    def test_a_close_past_its_deadline_leaves_the_pass_standing_with_a_note(self, build_dir, tmp_path):
        results = run_manifest(CLOSE_WAITS, build_dir, tmp_path, areas=["delivery"], case_filter=f"*{CASE}/rdm",
                               extra_env={"SOFTUET_CLOSE_WAIT_MS": "15000"})
        [r] = [r for r in results if short(r.case) == CASE]
        assert (r.verdict, r.reason) == ("pass", None), r
        assert r.notes["teardown_initiator"] == ("teardown: the initiator: its fi_close calls (endpoint, CQ, AV, "
                                                 "domain, fabric) did not return within 10 s"), r.notes
        assert "teardown_target" not in r.notes, r.notes
        # the cell page shows the note beside the pass
        [row] = view.cell_page({"results": [r.as_dict()]}, {"id": r.cell}, tmp_path, str)["rows"]
        assert (row["verdict"], row["note"]) == ("pass", r.notes["teardown_initiator"])
