"""Issue 26, part 4: a malformed frame fails the statements its diagnostic breaks (spec/diagnostic-statements.yaml),
shown as evidence on the case whose capture held it, and the case still evaluates its own statements."""
import json
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]

from harness.inputs import catalogue  # noqa: E402
from harness.inputs.diagnostic_statements import statements_of, table  # noqa: E402
from harness.results.results import result_of_line  # noqa: E402
from harness.run.run_cases import run_manifest  # noqa: E402

SOFTUET = REPO / "cases" / "manifests" / "softuet.yaml"
TWO_DIAGNOSTICS = REPO / "cases" / "manifests" / "personalities" / "message-and-job-id-zero.yaml"
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="namespace pairs and captures need root (os.geteuid() != 0)")


class TestTheTable:
    def test_every_statement_it_names_is_in_the_catalogue(self):
        known = catalogue.load()
        named = {s for ids in list(table()["fields"].values()) + list(table()["headers"].values()) for s in ids}
        assert named and all(s in known for s in named), [s for s in named if s not in known]

    @pytest.mark.parametrize("kind, header, field, want", [
        ("invalid_value", "uet.ses.std", "uet.ses.message_id", ["2.2.10.4-a"]),
        ("invalid_value", "uet.ses.std", "uet.ses.job_id", ["2.2.4.4-a"]),
        ("reserved_nonzero", "uet.pds.rud_rod_req", None, ["2.2.10.3-a"]),
        ("trailing_bytes", "uet.ses.rendezvous", None, ["2.2.10.4-i"]),
        ("reserved_nonzero", "uet.ses.medium", None, ["2.2.10.4-a"]),
        ("invalid_value", "ip", "ip.version", ["2.2.10.1-a"]),
        ("inconsistent_length", "udp", "udp.length", []),
        ("fragment_overlap", "ip", None, []),
        ("truncated", "eth", None, []),
    ])
    def test_the_most_specific_entry_wins(self, kind, header, field, want):
        assert statements_of(kind, header, field) == want


class TestTheResult:
    def test_a_case_with_a_malformed_frame_fails_the_statements_it_breaks_too(self):
        line = {"case": "Claimed/Msg.SenddataDeliversRemoteCqData/rdm", "verdict": "fail", "statements": ["2.2.5.4.1-d"],
                "diagnostics": [{"sender": "initiator", "kind": "invalid_value", "header": "uet.ses.std",
                                 "field": "uet.ses.message_id", "offset": 60, "value": 0, "frame": "uet.ses.message_id=0x0"}]}
        r = result_of_line(line, cell="c", area="msg", binary="uet-cases-msg")
        assert r.statements == ["2.2.5.4.1-d", "2.2.10.4-a"]
        assert r.evidence["diagnostics"][0]["statements"] == ["2.2.10.4-a"]


@root_only
class TestOnTheWire:
    def test_message_id_zero_fails_2_2_10_4_a_as_evidence_and_the_case_still_checks_its_own_statement(
            self, build_dir, tmp_path):
        results = run_manifest(SOFTUET, build_dir, tmp_path, areas=["wire"], extra_env={"SOFTUET_FAULTS": "message_id_zero"},
                               case_filter="Claimed/Wire.NumberedRequestsCarryANonzeroMessageId/rdm")
        (r,) = results
        assert r.verdict == "fail" and r.blamed_side == "initiator"
        # First the frame's diagnostic, then the case's own check of the same request: both are there.
        assert r.message.index("a malformed UET frame on the wire: invalid_value in uet.ses.std.uet.ses.message_id") < \
            r.message.index("ses.message_id 0 is invalid in a numbered request")
        assert r.statements == ["2.2.10.4-a"]
        (d,) = r.evidence["diagnostics"]
        assert (d["sender"], d["kind"], d["header"], d["field"], d["value"], d["statements"]) == \
            ("initiator", "invalid_value", "uet.ses.std", "uet.ses.message_id", 0, ["2.2.10.4-a"])
        assert "uet.ses.message_id=0x0" in d["frame"]

    def test_every_diagnostic_of_every_frame_is_judged_once_with_its_frame_count(self, build_dir, tmp_path):
        """Issue 35, item 4: a request with message_id 0 and JobID 0 carries two diagnostics; each fails the
        statements it breaks, once per case (not once per frame), counted over every frame of the capture."""
        results = run_manifest(TWO_DIAGNOSTICS, build_dir, tmp_path, areas=["wire"],
                               case_filter="Claimed/Wire.NumberedRequestsCarryANonzeroMessageId/rdm")
        (r,) = results
        assert r.verdict == "fail" and r.blamed_side == "initiator"
        assert r.statements == ["2.2.10.4-a", "2.2.4.4-a"]
        got = {(d["kind"], d["field"]): d for d in r.evidence["diagnostics"]}
        assert sorted(got) == [("invalid_value", "uet.ses.message_id"), ("job_id_zero", "uet.ses.job_id")]
        assert [(d["sender"], d["header"], d["value"], d["statements"]) for d in got.values()] == [
            ("initiator", "uet.ses.std", 0, ["2.2.10.4-a"]), ("initiator", "uet.ses.std", 0, ["2.2.4.4-a"])]
        for kind, field in got:
            assert r.message.count(f"a malformed UET frame on the wire: {kind} in uet.ses.std.{field} ") == 1, r.message
        # The counts are those of an independent decode of the kept capture: every frame, not the first.
        (cap,) = r.evidence["captures"]
        decoded = subprocess.run([str(build_dir / "bin" / "uet-decode"), "--port", str(cap["port"]), cap["file"]],
                                 capture_output=True, text=True, check=True).stdout.splitlines()
        records = [json.loads(line) for line in decoded]
        for (kind, field), d in got.items():
            numbers = [rec["frame"] for rec in records
                       if any((x["kind"], x.get("field")) == (kind, field) for x in rec.get("diagnostics", []))]
            assert len(numbers) > 1 and (d["frames"], d["first_frame"]) == (len(numbers), numbers[0])
