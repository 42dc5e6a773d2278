"""The fault-knob list (fep/src/faults.def): documented, traced to the catalogue, used by the code, each knob
proven by some case; and its one reader (fep/tools/faults_md.py), which takes every entry or says which
line it cannot."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

from harness.inputs import catalogue
from harness.results.results import short_case
from harness.selftest.mutation import WIRE_CHECKS

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "fep" / "tools"))
import faults_md  # noqa: E402

ENTRIES = faults_md.parse(faults_md.FAULTS_DEF.read_text())
CASE_SOURCES = "".join(p.read_text() for p in (REPO / "cases").rglob("*.cpp"))


def statements_cases_cover():
    """The statements some case names: covers({...}) of the case binaries, requirements(...) of the wire
    checks the mutation run runs."""
    named = re.findall(r"covers\(\{([^}]*)\}", CASE_SOURCES)
    named += re.findall(r"requirements\(([^)]*)\)", "".join((REPO / p).read_text() for p in WIRE_CHECKS))
    return {s for group in named for s in re.findall(r'"([^"]+)"', group)}


class TestFaultList:
    def test_at_least_twenty_knobs_with_distinct_names(self):
        names = [k.name for k in ENTRIES]
        assert len(names) >= 20 and len(set(names)) == len(names)

    def test_faults_md_is_generated_from_the_list(self):
        run = subprocess.run([sys.executable, str(REPO / "fep" / "tools" / "faults_md.py"), "--check"],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr

    def test_every_knob_names_a_catalogue_statement(self):
        cat = catalogue.load()
        assert [(k.name, k.statement) for k in ENTRIES if k.statement not in cat] == []

    def test_every_knob_is_used_by_the_provider(self):
        sources = "".join(p.read_text() for p in (REPO / "fep" / "src").glob("*.cpp"))
        assert [k.name for k in ENTRIES if f"Fault::{k.name}" not in sources] == []

    def test_every_named_check_is_a_case_of_the_suite(self):
        cases = {f"{s}.{n}" for s, n in re.findall(r"^TEST(?:_[PF])?\((\w+), (\w+)\)", CASE_SOURCES, re.M)}
        assert [(k.name, c) for k in ENTRIES for c in k.checks if short_case(c) not in cases] == []

    def test_every_knob_is_proven_by_its_named_checks_or_a_case_of_its_statement(self):
        # A knob that names no check is tried only on the cases of its statement: without one, the mutation
        # run falls back to every case and pytest/cases/test_mutation.py fails it, minutes later and as root.
        covered = statements_cases_cover()
        assert [(k.name, k.statement) for k in ENTRIES if not k.checks and k.statement not in covered] == []


class TestReader:
    def test_an_entry_names_its_checks_over_several_lines(self):
        text = ('SOFTUET_FAULT(no_ack, "2.2.6-b", "the target never sends an ACK (reliable delivery breaks)",\n'
                '              "Claimed/Completion.EverySendOfABurstCompletesAndArrives/rdm",\n'
                '              "ScriptedAck.ResentRequestIsAcknowledgedAgainAndDeliveredOnce")\n'
                'SOFTUET_FAULT(psn_reuse, "2.2.6-b", "every request packet of a PDC carries the same PSN")\n')
        assert faults_md.parse(text) == [
            faults_md.Knob("no_ack", "2.2.6-b", "the target never sends an ACK (reliable delivery breaks)",
                           ("Claimed/Completion.EverySendOfABurstCompletesAndArrives/rdm",
                            "ScriptedAck.ResentRequestIsAcknowledgedAgainAndDeliveredOnce")),
            faults_md.Knob("psn_reuse", "2.2.6-b", "every request packet of a PDC carries the same PSN", ())]
        assert faults_md.knobs(text) == [(k.name, k.statement, k.rule) for k in faults_md.parse(text)]
        assert faults_md.named_checks(text) == {"no_ack": list(faults_md.parse(text)[0].checks)}

    def test_an_entry_in_a_comment_is_no_knob(self):
        text = '// SOFTUET_FAULT(name, "statement", "rule broken", "check", ...)\nSOFTUET_FAULT(a, "2.2-a", "r") // why\n'
        assert faults_md.knobs(text) == [("a", "2.2-a", "r")]

    @pytest.mark.parametrize("entry, problem", [
        ('SOFTUET_FAULT(b, "2.2-b", rule_without_quotes)', 'not SOFTUET_FAULT(name, "statement", "rule", "check", ...)'),
        ('SOFTUET_FAULT(b, "2.2-b")', "b needs a statement and the rule it breaks"),
        ('SOFTUET_FAULT(b, "2.2-b", "r", "Msg Send")', "b: 'Msg Send' is not a case name"),
        ('SOFTUET_FAULT(b, "2.2-b", "r", "Msg.Send", "Msg.Send")', "b names a check twice"),
        ('SOFTUET_FAULT(a, "2.2-b", "r")', "knob a is already at line 1"),
    ])
    def test_an_entry_it_cannot_take_is_refused_with_its_line(self, entry, problem):
        with pytest.raises(faults_md.FaultsDefError) as info:
            faults_md.parse('SOFTUET_FAULT(a, "2.2-a", "r")\n' + entry + "\n")
        assert str(info.value).startswith("fep/src/faults.def:2: ") and problem in str(info.value), str(info.value)

    def test_a_broken_list_fails_the_build_step_with_its_line(self, tmp_path, monkeypatch, capsys):
        broken = tmp_path / "faults.def"
        broken.write_text('SOFTUET_FAULT(a, "2.2-a", "r")\nSOFTUET_FAULT(b, "2.2-b", r)\n')
        monkeypatch.setattr(faults_md, "FAULTS_DEF", broken)
        monkeypatch.setattr(faults_md, "FAULTS_MD", tmp_path / "FAULTS.md")
        assert faults_md.main([]) == 2
        assert capsys.readouterr().err.startswith(f"{broken}:2: not SOFTUET_FAULT(")
        assert not (tmp_path / "FAULTS.md").exists()


class TestWrite:
    def test_a_current_file_is_left_alone(self, tmp_path):
        out = tmp_path / "FAULTS.md"
        assert faults_md.write_if_changed(out, "x\n") is True
        before = os.stat(out)
        assert faults_md.write_if_changed(out, "x\n") is False
        after = os.stat(out)
        assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
        assert faults_md.write_if_changed(out, "y\n") is True and out.read_text() == "y\n"
        assert [p.name for p in tmp_path.iterdir()] == ["FAULTS.md"]

    def test_a_symlink_is_replaced_not_written_through(self, tmp_path):
        elsewhere = tmp_path / "elsewhere"
        elsewhere.write_text("keep\n")
        (tmp_path / "fep").mkdir()
        out = tmp_path / "fep" / "FAULTS.md"
        out.symlink_to(elsewhere)
        assert faults_md.write_if_changed(out, "keep\n") is True
        assert not out.is_symlink() and out.read_text() == "keep\n" and elsewhere.read_text() == "keep\n"
        out.unlink()
        out.symlink_to(elsewhere)
        faults_md.write_if_changed(out, "new\n")
        assert elsewhere.read_text() == "keep\n" and out.read_text() == "new\n"
