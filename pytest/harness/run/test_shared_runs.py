"""The tests' shared runs of the suite (pytest/fixtures_uet.py): a run several tests or files look at is made
once per pytest session, also when its files are on several xdist workers (each a process with a session of its
own), and a test that must change a shared run gets a private copy."""
import multiprocessing
import pickle

import fixtures_uet as fixtures
from harness.results.results import Result

WORKERS = 4


def worker(shared, log, asking, said):
    """An xdist worker of its own (a process) that asks for the same run as every other: its make() goes on only
    once every worker is asking, so a second maker, were there one, would be making it at the same time."""
    def make(folder):
        for _ in range(WORKERS):
            assert asking.acquire(timeout=120), "not every worker asked"
        for _ in range(WORKERS):
            asking.release()
        with open(log, "a") as made:
            made.write("made\n")
        return "value"
    asking.release()
    said.put(fixtures._once(shared, "the same run", make))


class TestOncePerSession:
    def test_the_same_key_is_made_once_and_another_key_again(self, tmp_path):
        made = []

        def make(folder):
            made.append(folder)
            return {"results": len(made)}
        assert fixtures._once(tmp_path, "a", make) == {"results": 1}
        assert fixtures._once(tmp_path, "a", make) == {"results": 1}
        assert fixtures._once(tmp_path, "b", make) == {"results": 2}
        assert len(made) == 2 and made[0] != made[1]

    def test_workers_asking_at_once_make_it_once(self, tmp_path):
        context = multiprocessing.get_context("fork")
        asking, said = context.Semaphore(0), context.Queue()
        workers = [context.Process(target=worker, args=(tmp_path / "shared", tmp_path / "made.log", asking, said))
                   for _ in range(WORKERS)]
        for w in workers:
            w.start()
        answers = [said.get(timeout=300) for _ in workers]
        for w in workers:
            w.join(timeout=60)
        assert answers == ["value"] * WORKERS
        assert (tmp_path / "made.log").read_text() == "made\n"

    def test_a_run_that_raised_is_made_again_by_the_next_that_asks(self, tmp_path):
        def broken(folder):
            (folder / "half").write_text("left by a run that failed")
            raise RuntimeError("the run failed")
        try:
            fixtures._once(tmp_path, "k", broken)
        except RuntimeError:
            pass
        assert fixtures._once(tmp_path, "k", lambda folder: sorted(p.name for p in folder.iterdir())) == []


class TestCellRunRecord:
    def test_each_call_gives_fresh_results(self, tmp_path):
        record = fixtures.CellRunRecord(tmp_path, pickle.dumps([Result("c", "wire", "b", "Wire.X/rdm", "fail")]))
        record.results()[0].verdict = "pass"
        assert [r.verdict for r in record.results()] == ["fail"]
        assert list(record.by_case()) == ["Wire.X/rdm"]

    def test_a_private_copy_moves_the_captures_with_it(self, tmp_path):
        out = tmp_path / "shared" / "run"
        (out / "captures").mkdir(parents=True)
        (out / "captures" / "a.pcap").write_bytes(b"frames")
        r = Result("c", "wire", "b", "Wire.X/rdm", "pass",
                   evidence={"captures": [{"file": str(out / "captures" / "a.pcap"), "port": 4793}]})
        record = fixtures.CellRunRecord(out, pickle.dumps([r]))
        (moved,) = record.copy_to(tmp_path / "mine")
        assert moved.evidence["captures"] == [{"file": str(tmp_path / "mine" / "captures" / "a.pcap"), "port": 4793}]
        assert (tmp_path / "mine" / "captures" / "a.pcap").read_bytes() == b"frames"
        assert record.results()[0].evidence["captures"][0]["file"] == str(out / "captures" / "a.pcap")


class TestUntilConclusive:
    STARVED = "inconclusive: the host was busy: a wait of 15.00 s ended after 35.00 s with nothing"

    def runs(self, verdicts):
        """run_in for until_conclusive: the n-th run gives one result of the n-th (verdict, reason)."""
        made = []

        def run_in(where):
            verdict, reason = verdicts[len(made)]
            made.append(where)
            return [Result("c", "msg", "b", "Msg.X/rdm", verdict, reason=reason)]
        return run_in, made

    def test_a_cell_the_host_starved_is_run_again_in_a_folder_of_its_own(self, tmp_path):
        run_in, made = self.runs([("error", self.STARVED), ("fail", None), ("pass", None)])
        record = fixtures.until_conclusive(tmp_path, run_in)
        assert made == [tmp_path, tmp_path / "attempt-2"]
        assert (record.out, record.attempts, [r.verdict for r in record.results()]) == (tmp_path / "attempt-2", 2, ["fail"])

    def test_a_conclusive_cell_and_another_error_are_run_once(self, tmp_path):
        run_in, made = self.runs([("error", "the case binary died of signal 11 (SIGSEGV)"), ("pass", None)])
        record = fixtures.until_conclusive(tmp_path, run_in)
        assert (made, record.attempts, [r.verdict for r in record.results()]) == ([tmp_path], 1, ["error"])

    def test_what_stays_inconclusive_is_the_last_runs(self, tmp_path):
        run_in, made = self.runs([("error", self.STARVED)] * fixtures.CONCLUSIVE_ATTEMPTS)
        record = fixtures.until_conclusive(tmp_path, run_in)
        assert len(made) == record.attempts == fixtures.CONCLUSIVE_ATTEMPTS == 3
        assert [r.reason for r in record.results()] == [self.STARVED]


class TestResultsOf:
    def test_a_report_folder_reads_its_latest_run(self, tmp_path, results_of):
        run = tmp_path / "runs" / "20261129-0000-s1"
        run.mkdir(parents=True)
        (run / "results.json").write_text('{"format": 1, "results": []}')
        (tmp_path / "runs" / "latest").symlink_to(run.name)
        assert results_of(tmp_path / "runs") == results_of(run) == {"format": 1, "results": []}
