"""./uet merge SHARD_DIR...: the run folders of real shards (a small run cut in two: conftest.small_shards)
merged into one run that equals the run made whole, and each merge that would give a smaller or mixed run
refused, built from those shards and tampered copies of them (changed with results.json's own writer)."""
import os
import pathlib
import shlex
import shutil

import pytest

from harness.merge import merge_run
from harness.results.results import read_results_json, schema, write_results_json
from harness.shards import fingerprint
from same_run import differences

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="softuet's cells run in namespace pairs: root")


def merge(capsys, report, *folders):
    """(exit status, what it printed on stderr) of ./uet merge --report REPORT FOLDERS, in this process."""
    status = merge_run.main(["--report", str(report), *map(str, folders)])
    return status, capsys.readouterr().err


def tampered(shard, folder: pathlib.Path, change) -> pathlib.Path:
    """A copy of a shard's run folder whose results.json change(doc) altered, written by the run's writer."""
    shutil.copytree(shard.folder, folder, symlinks=True)
    doc = read_results_json(folder)[1]
    change(doc)
    write_results_json(doc, folder / "results.json")
    return folder


def refit(doc) -> None:
    """The fingerprint made again from the (changed) parts: a shard that says it is of another run, consistently."""
    doc["run_info"]["shard"]["fingerprint"] = fingerprint.of(doc["run_info"]["shard"]["parts"])


class TestTheShardsOfARun:
    def test_the_shards_ran_and_each_ran_its_part(self, small_shards):
        records = [s.results()["run_info"]["shard"] for s in small_shards]
        assert [s.returncode for s in small_shards] == [0, 0], small_shards[0].stderr + small_shards[1].stderr
        assert [r["units"] for r in records] == [["softuet/msg"], ["softuet/av"]]
        assert records[0]["all_units"] == ["softuet/av", "softuet/msg"]  # the plan's order: the binaries'
        assert records[0]["fingerprint"] == records[1]["fingerprint"] == fingerprint.of(records[0]["parts"])
        assert [{r["area"] for r in s.results()["results"]} for s in small_shards] == [{"msg"}, {"av"}]

    def test_a_shard_s_results_keep_to_the_schema(self, small_shards, closed_schema_problems):
        assert [closed_schema_problems(schema(), s.results()) for s in small_shards] == [[], []]


class TestTheMergedRun:
    def test_it_exits_as_the_run_would(self, small_merged, small_unsharded):
        done, _ = small_merged
        assert done.returncode == small_unsharded.returncode == 0, done.stderr

    def test_it_decided_what_the_run_made_whole_decided(self, small_merged, small_unsharded):
        assert differences(small_unsharded.folder, small_merged[1]) == []

    def test_it_says_it_was_merged_and_from_which_shards(self, small_run, small_merged, small_shards):
        info = read_results_json(small_merged[1])[1]["run_info"]
        assert "shard" not in info
        assert [(s["index"], s["folder"], s["units"]) for s in info["merged"]["shards"]] == [
            (1, str(small_shards[0].folder), ["softuet/msg"]), (2, str(small_shards[1].folder), ["softuet/av"])]
        assert info["command"] == "./uet run " + " ".join(shlex.quote(a) for a in [
            *small_run, "--seed", "7", "--report", str(small_shards[0].report)])

    def test_the_shards_evidence_is_in_it_linked(self, small_merged, small_shards):
        run = small_merged[1]
        for shard, area in zip(small_shards, ("msg", "av")):
            log = run / "cells" / "softuet" / f"{area}.log"
            assert log.stat().st_ino == (shard.folder / "cells" / "softuet" / f"{area}.log").stat().st_ino
        doc = read_results_json(run)[1]
        assert all((run / r["evidence"]["log"]).is_file() for r in doc["results"] if r["area"] != "harness")

    def test_its_results_keep_to_the_schema(self, small_merged, closed_schema_problems):
        assert closed_schema_problems(schema(), read_results_json(small_merged[1])[1]) == []

    def test_it_writes_the_report_s_files(self, small_merged):
        run = small_merged[1]
        assert sorted(p.name for p in run.iterdir() if p.is_file()) == [
            "conformance.html", "index.html", "junit.xml", "results.json", "summary.txt"]
        assert (run / "conformance" / "statement.json").is_file() and (run / "cells" / "softuet.html").is_file()

    def test_a_shard_the_infrastructure_kept_from_running_merges_to_exit_4(self, small_shards, tmp_path, capsys):
        def lost(doc):  # as a shard whose placement was lost before its cases ran, after its retries
            for r in doc["results"]:
                r.update(verdict="infra_error", reason="the placement was lost", statements=[])
            doc["cells"][0]["infra_attempts"] = 2
        copy = tampered(small_shards[1], tmp_path / "shard-2", lost)
        status, err = merge(capsys, tmp_path / "runs", small_shards[0].folder, copy)
        doc = read_results_json((tmp_path / "runs" / "latest").resolve())[1]
        lost_ids = [r["id"] for r in read_results_json(copy)[1]["results"]]
        assert (status, doc["summary"]["exit_status"], doc["summary"]["infra_error"]) == (4, 4, len(lost_ids)), err
        assert [c["infra_attempts"] for c in doc["cells"]] == [2]

    def test_a_shard_that_placed_no_cell_leaves_the_run_s_placement_as_it_was(self, small_shards, tmp_path, capsys):
        copy = tampered(small_shards[1], tmp_path / "shard-2", lambda doc: doc["run_info"].update(placement="none"))
        status, err = merge(capsys, tmp_path / "runs", small_shards[0].folder, copy)
        doc = read_results_json((tmp_path / "runs" / "latest").resolve())[1]
        assert (status, doc["run_info"]["placement"]) == (0, small_shards[0].results()["run_info"]["placement"]), err

    def test_a_symbolic_link_in_a_shard_is_not_followed(self, small_shards, tmp_path, capsys):
        copy = tampered(small_shards[1], tmp_path / "shard-2", lambda doc: None)
        (copy / "cells" / "softuet" / "secret.log").symlink_to("/etc/shadow")
        status, err = merge(capsys, tmp_path / "runs", small_shards[0].folder, copy)
        assert status == 0, err
        run = (tmp_path / "runs" / "latest").resolve()
        assert not os.path.lexists(run / "cells" / "softuet" / "secret.log")
        assert f"{copy / 'cells' / 'softuet' / 'secret.log'}: not a regular file, not brought in" in err


    @pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
    def test_another_user_s_file_is_copied_not_linked(self, small_shards, tmp_path, capsys):
        copy = tampered(small_shards[1], tmp_path / "shard-2", lambda doc: None)
        theirs = copy / "cells" / "softuet" / "theirs.log"
        theirs.write_text("as the shard wrote it\n")
        os.chown(theirs, 65534, 65534)  # nobody: a link would let them change the merged run's evidence later
        status, err = merge(capsys, tmp_path / "runs", small_shards[0].folder, copy)
        assert status == 0, err
        brought = (tmp_path / "runs" / "latest").resolve() / "cells" / "softuet" / "theirs.log"
        assert (brought.read_text(), brought.stat().st_uid, brought.stat().st_ino == theirs.stat().st_ino) == \
            ("as the shard wrote it\n", 0, False)

    def test_a_shard_s_evidence_folder_that_is_a_link_is_not_followed(self, small_shards, tmp_path, capsys):
        copy = tampered(small_shards[1], tmp_path / "shard-2", lambda doc: None)
        shutil.rmtree(copy / "cells")
        (copy / "cells").symlink_to(small_shards[0].folder / "cells")
        status, err = merge(capsys, tmp_path / "runs", small_shards[0].folder, copy)
        assert status == 0, err
        assert f"{copy / 'cells'}: not a regular file, not brought in" in err
        assert not (tmp_path / "runs" / "latest" / "cells" / "softuet" / "av.log").exists()


class TestAMergeThatRefuses:
    def test_a_missing_shard_is_named_with_the_command_that_runs_it(self, small_run, small_shards, tmp_path, capsys):
        status, err = merge(capsys, tmp_path, small_shards[0].folder)
        # shard 1's --report is not shard 2's: the command leaves it out
        rerun = "./uet run " + " ".join(shlex.quote(a) for a in [*small_run, "--shard", "2/2", "--seed", "7"])
        assert (status, err) == (2, f"uet merge: shard 2/2 is missing (units: softuet/av); run it: {rerun}\n")
        assert not (tmp_path / "latest").exists()

    def test_a_shard_given_twice_is_refused(self, small_shards, tmp_path, capsys):
        status, err = merge(capsys, tmp_path, small_shards[0].folder, small_shards[1].folder, small_shards[0].folder)
        assert (status, err) == (2, f"uet merge: {small_shards[0].folder}: given twice (also as "
                                    f"{small_shards[0].folder}): its checks would be counted twice\n")

    def test_a_copy_of_a_shard_is_a_shard_given_twice(self, small_shards, tmp_path, capsys):
        copy = tampered(small_shards[0], tmp_path / "copy", lambda doc: None)
        status, err = merge(capsys, tmp_path / "runs", small_shards[0].folder, small_shards[1].folder, copy)
        assert (status, err) == (2, f"uet merge: shard 1/2 given twice: {small_shards[0].folder} and {copy}: its "
                                    "checks would be counted twice\n")

    def test_a_check_in_two_shards_is_counted_twice(self, small_shards, tmp_path, capsys):
        stolen = small_shards[0].results()["results"][0]
        copy = tampered(small_shards[1], tmp_path / "shard-2", lambda doc: doc["results"].append(stolen))
        status, err = merge(capsys, tmp_path / "runs", small_shards[0].folder, copy)
        assert (status, err) == (2, f"uet merge: {stolen['id']} is counted twice: in {small_shards[0].folder} "
                                    f"(shard 1/2) and in {copy} (shard 2/2)\n")

    def test_a_cell_s_own_error_in_each_shard_of_it_is_the_run_s_one(self, small_shards, tmp_path, capsys):
        # the cell could not run: each shard that ran some of its areas says so, as the whole run says it once
        def could_not_run(words):
            def change(doc):
                doc["results"].append({"id": "softuet/harness/softuet (cell)", "cell": "softuet", "area": "harness",
                                       "binary": "-", "case": "softuet (cell)", "verdict": "error",
                                       "reason": f"the cell could not run: {words}", "judged_by": "harness"})
            return change
        copies = [tampered(s, tmp_path / f"shard-{i}", could_not_run(f"shard {i}"))
                  for i, s in enumerate(small_shards, 1)]
        status, err = merge(capsys, tmp_path / "runs", *copies)
        assert status == 1, err
        doc = read_results_json(tmp_path / "runs" / "latest")[1]
        errors = [r for r in doc["results"] if r["area"] == "harness"]
        assert [(r["reason"], doc["results"][-1] is r) for r in errors] == [("the cell could not run: shard 1", True)]

    def test_a_shard_that_left_a_unit_out_of_its_units_and_results_is_refused(self, small_shards, tmp_path, capsys):
        def smaller(doc):
            left_out = doc["run_info"]["shard"]["units"].pop()
            doc["results"] = [r for r in doc["results"] if f"{r['cell']}/{r['area']}" != left_out]
        copy = tampered(small_shards[1], tmp_path / "shard-2", smaller)
        status, err = merge(capsys, tmp_path / "runs", small_shards[0].folder, copy)
        assert (status, err) == (2, f"uet merge: {copy}: its units are not those of shard 2/2 of the cut "
                                    "(run_info.shard was changed)\n")

    def test_a_shard_numbered_past_n_is_refused(self, small_shards, tmp_path, capsys):
        copy = tampered(small_shards[1], tmp_path / "shard-3", lambda doc: doc["run_info"]["shard"].update(index=3))
        status, err = merge(capsys, tmp_path / "runs", small_shards[0].folder, copy)
        assert (status, err) == (2, f"uet merge: {copy}: its shard number 3/2 is not one of 1 to 2 "
                                    "(run_info.shard was changed)\n")

    def test_a_cut_other_than_the_weights_give_is_refused(self, small_shards, tmp_path, capsys):
        def swapped(doc):
            cut = doc["run_info"]["shard"]["cut"]
            cut[0], cut[1] = cut[1], cut[0]
            doc["run_info"]["shard"]["units"] = cut[1]
        copy = tampered(small_shards[1], tmp_path / "shard-2", swapped)
        status, err = merge(capsys, tmp_path / "runs", small_shards[0].folder, copy)
        assert (status, err) == (2, f"uet merge: {copy}: its cut of the plan is not the one its fingerprinted "
                                    "weights give (run_info.shard was changed)\n")

    def test_a_check_outside_the_shard_s_units_is_refused(self, small_shards, tmp_path, capsys):
        foreign = dict(small_shards[0].results()["results"][0], case="Claimed/Msg.Other/rdm")
        foreign["id"] = f"{foreign['cell']}/{foreign['area']}/{foreign['case']}"
        copy = tampered(small_shards[1], tmp_path / "shard-2", lambda doc: doc["results"].append(foreign))
        status, err = merge(capsys, tmp_path / "runs", small_shards[0].folder, copy)
        assert (status, err) == (2, f"uet merge: {copy}: {foreign['id']} is not a check of shard 2/2 (its units: "
                                    "softuet/av)\n")

    def test_shards_of_another_seed_are_refused_naming_the_seed(self, small_shards, small_shard_of_another_seed,
                                                               tmp_path, capsys):
        other = small_shard_of_another_seed.folder
        status, err = merge(capsys, tmp_path, small_shards[0].folder, other)
        assert (status, err) == (2, "uet merge: the shards are not of one run: their fingerprints differ in the seed "
                                    f"(7 vs 8 in {small_shards[0].folder} and {other})\n")

    def test_shards_of_another_n_are_refused_naming_n(self, small_shards, tmp_path, capsys):
        def three(doc):
            doc["run_info"]["shard"]["parts"]["count"] = 3
            refit(doc)
        copy = tampered(small_shards[1], tmp_path / "shard-2", three)
        status, err = merge(capsys, tmp_path / "runs", small_shards[0].folder, copy)
        assert (status, err) == (2, "uet merge: the shards are not of one run: their fingerprints differ in N (the "
                                    f"number of shards) (2 vs 3 in {small_shards[0].folder} and {copy})\n")

    def test_shards_of_another_suite_commit_are_refused_naming_it(self, small_shards, tmp_path, capsys):
        def elsewhere(doc):
            doc["run_info"]["shard"]["parts"]["suite"]["commit"] = "0" * 40
            refit(doc)
        copy = tampered(small_shards[1], tmp_path / "shard-2", elsewhere)
        status, err = merge(capsys, tmp_path / "runs", small_shards[0].folder, copy)
        here = small_shards[0].results()["run_info"]["shard"]["parts"]["suite"]["commit"]
        assert (status, err) == (2, "uet merge: the shards are not of one run: their fingerprints differ in the "
                                    f"suite's commit (commit: \"{here}\" vs \"{'0' * 40}\" in "
                                    f"{small_shards[0].folder} and {copy})\n")

    def test_shards_of_other_binaries_are_refused_naming_the_binary(self, small_shards, tmp_path, capsys):
        def rebuilt(doc):
            doc["run_info"]["shard"]["parts"]["binaries"]["suite"]["cases/uet-cases-av"] = "f" * 64
            refit(doc)
        copy = tampered(small_shards[1], tmp_path / "shard-2", rebuilt)
        status, err = merge(capsys, tmp_path / "runs", small_shards[0].folder, copy)
        assert status == 2
        assert err.startswith("uet merge: the shards are not of one run: their fingerprints differ in the binaries "
                              "(suite: cases/uet-cases-av: "), err

    def test_a_fingerprint_that_is_not_its_parts_is_refused(self, small_shards, tmp_path, capsys):
        def edited(doc):
            doc["run_info"]["shard"]["parts"]["seed"] = 8
        copy = tampered(small_shards[1], tmp_path / "shard-2", edited)
        status, err = merge(capsys, tmp_path / "runs", small_shards[0].folder, copy)
        assert (status, err) == (2, f"uet merge: {copy}: its fingerprint is not that of the parts it lists "
                                    "(run_info.shard was changed)\n")

    def test_an_interrupted_shard_is_refused_with_the_command_that_runs_it(self, small_run, small_shards, tmp_path, capsys):
        copy = tampered(small_shards[1], tmp_path / "shard-2", lambda doc: doc["run_info"].update(partial=True))
        status, err = merge(capsys, tmp_path / "runs", small_shards[0].folder, copy)
        rerun = "./uet run " + " ".join(shlex.quote(a) for a in [
            *small_run, "--report", str(small_shards[1].report), "--shard", "2/2", "--seed", "7"])
        assert (status, err) == (2, f"uet merge: {copy}: shard 2/2 was interrupted (run_info.partial): run it "
                                    f"again: {rerun}\n")

    def test_a_run_that_is_not_a_shard_is_refused_naming_it(self, small_shards, small_unsharded, tmp_path, capsys):
        status, err = merge(capsys, tmp_path, small_shards[0].folder, small_unsharded.folder)
        assert (status, err) == (2, f"uet merge: {small_unsharded.folder}: not a shard's run (its results.json has "
                                    "no run_info.shard: it ran without --shard I/N)\n")

    def test_a_folder_that_is_no_run_is_refused_naming_it(self, small_shards, tmp_path, capsys):
        status, err = merge(capsys, tmp_path / "runs", small_shards[0].folder, tmp_path)
        assert (status, err) == (2, f"uet merge: {tmp_path}: not a shard's run folder (no results.json in it)\n")

    def test_a_results_json_that_is_no_run_is_refused_naming_it(self, small_shards, tmp_path, capsys):
        (tmp_path / "results.json").write_text('{"results": 5}\n')
        status, err = merge(capsys, tmp_path / "runs", small_shards[0].folder, tmp_path)
        assert status == 2
        assert err.startswith(f"uet merge: {tmp_path}: not a shard's run: "), err
