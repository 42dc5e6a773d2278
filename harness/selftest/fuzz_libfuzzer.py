"""The libFuzzer targets of the fuzz tree and how harness/selftest/fuzz.py drives them: their command lines, their
processes, what their output says, and the replay of every input in the repository (harness/selftest/fuzz.py)."""
import dataclasses
import os
import pathlib
import re
import signal
import subprocess
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


@dataclasses.dataclass(frozen=True)
class Fuzzer:
    name: str
    binary: str  # under <build>/bin
    corpus: pathlib.Path
    max_len: int
    # Inputs that once failed, each kept as the regression test of its fix: every run starts with them, and
    # `refresh` never minimises them away.
    regressions: pathlib.Path | None = None
    # libFuzzer's -timeout: an input slower than this is a failure (a hang found)
    timeout_s: int = 10

    def input_dirs(self) -> list[pathlib.Path]:
        return [self.corpus] + ([self.regressions] if self.regressions else [])

    def inputs(self) -> list[pathlib.Path]:
        """Every file libFuzzer would load from the repository (it reads folders recursively)."""
        return sorted(p for d in self.input_dirs() if d.is_dir() for p in d.rglob("*") if p.is_file())


FUZZERS = [
    Fuzzer("decode", "uet-decode-fuzzer", ROOT / "codec" / "fuzz" / "corpus", 512),
    # Inputs are runs of datagrams; the largest seed (the FEP's exchange with itself) is about 20 KiB.
    # fep/fuzz/regressions/reassembly-budget fills the reassembly budget on purpose: 7 s of a core alone in the
    # sanitizer build, 10 s on a loaded machine, so its slow-input bound is wider than the others'.
    Fuzzer("softuet-frames", "softuet-frame-fuzzer", ROOT / "fep" / "fuzz" / "corpus", 32768,
           ROOT / "fep" / "fuzz" / "regressions", timeout_s=30),
    # Inputs are the frames of a capture, each a length byte and its bytes (reassembly_fuzzer.cpp).
    Fuzzer("reassembly", "uet-reassembly-fuzzer", ROOT / "codec" / "fuzz" / "corpus-reassembly", 4096),
    # Inputs are runs of Control API requests from a chosen peer (entity/fuzz/entity_fuzzer.cpp).
    Fuzzer("entity", "uet-entity-fuzzer", ROOT / "entity" / "fuzz" / "corpus", 8192),
    # Inputs are what a client sends the placement agent: request lines (containers/agent/fuzz/agent_fuzzer.cpp).
    Fuzzer("agent", "uet-agent-fuzzer", ROOT / "containers" / "agent" / "fuzz" / "corpus", 4096,
           ROOT / "containers" / "agent" / "fuzz" / "regressions"),
]
NAMES = [f.name for f in FUZZERS]


def libfuzzer_args(f: Fuzzer, artifacts: str) -> list[str]:
    # Without -artifact_prefix libFuzzer writes its reproducers into the working directory: the checkout.
    return [f"-max_len={f.max_len}", f"-timeout={f.timeout_s}", "-rss_limit_mb=2048", f"-artifact_prefix={artifacts}"]


def missing_binaries(build: pathlib.Path, fuzzers) -> list[str]:
    return [str(build / "bin" / f.binary) for f in fuzzers if not (build / "bin" / f.binary).exists()]


STATUS = re.compile(r"^#(\d+)\s+[A-Za-z]+\s+cov: (\d+) ft: (\d+)(?: corp: (\d+)/)?(?:.*? exec/s: (\d+))?", re.M)


def last_status(text: str) -> dict:
    """The figures of libFuzzer's last status line (`#N NEW cov: ... ft: ... corp: N/... exec/s: ...`).
    libFuzzer prints one on each new input and at each power of two of executions, so cov, ft and corp are
    current, but execs may be behind by up to half of them."""
    found = None
    for found in STATUS.finditer(text):
        pass
    if found is None:
        return {}
    execs, cov, ft, corpus, rate = found.groups()
    status = {"execs": int(execs), "cov": int(cov), "ft": int(ft)}
    if corpus is not None:
        status["corpus"] = int(corpus)
    if rate is not None:
        status["exec_per_sec"] = int(rate)
    return status


def parse_stats(text: str) -> dict:
    """execs, exec/s, coverage (cov), features (ft), new units and peak RSS from a libFuzzer log: its final
    stats (-print_final_stats=1), else its last status line (a process killed before it could print them)."""
    final = {k: int(v) for k, v in re.findall(r"^stat::(\w+):\s+(\d+)", text, re.M)}
    status = last_status(text)
    return {
        "execs": final.get("number_of_executed_units", status.get("execs", 0)),
        "exec_per_sec": final.get("average_exec_per_sec", status.get("exec_per_sec", 0)),
        "cov": status.get("cov", 0),
        "ft": status.get("ft", 0),
        "corpus": status.get("corpus", 0),
        "new_units": final.get("new_units_added", 0),
        "peak_rss_mb": final.get("peak_rss_mb", 0),
    }


def problem_of(text: str, returncode: int) -> str:
    """The sanitizer's or libFuzzer's one-line account of a failure."""
    for pattern in (r"^SUMMARY: (.+)$", r"^==\d+== ?ERROR: (.+)$", r"^(ALARM: .+)$"):
        found = re.findall(pattern, text, re.M)
        if found:
            return found[-1].strip()
    return f"exit {returncode}"


def reproducers(text: str) -> list[str]:
    # A slow unit is written too, but libFuzzer goes on: it is no failure.
    return [p for p in re.findall(r"Test unit written to (\S+)", text) if "/slow-unit-" not in p]


class Process:
    """A libFuzzer process alone in its own process group (a new session): a Ctrl-C at the terminal reaches
    only the harness, which stops the fuzzer with SIGINT so that it still prints its final stats, then kills
    the whole group so that nothing it started outlives it."""

    def __init__(self, cmd: list[str], log: pathlib.Path):
        self.log = log
        with open(log, "wb") as handle:
            self.popen = subprocess.Popen(cmd, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                          start_new_session=True)
        self.began = time.monotonic()
        self.ended: float | None = None
        self.stopped: str | None = None  # why the harness stopped it, when it did

    def poll(self) -> int | None:
        rc = self.popen.poll()
        if rc is not None and self.ended is None:
            self.ended = time.monotonic()
        return rc

    @property
    def seconds(self) -> float:
        return (self.ended or time.monotonic()) - self.began

    def _signal_group(self, sig) -> None:
        try:
            os.killpg(self.popen.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def stop(self, reason: str, grace: float = 5.0) -> None:
        if self.poll() is None:
            self.stopped = reason
            self._signal_group(signal.SIGINT)
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self.popen.wait()
            self.poll()
        self.sweep()

    def sweep(self) -> None:
        """The leader is gone; whatever it left in its group is not wanted either."""
        self._signal_group(signal.SIGKILL)

    def text(self) -> str:
        return self.log.read_text(errors="replace")


def run_pool(items, jobs: int, start, finish, stop=lambda: False, tick=None) -> list:
    """start(item) -> (Process, seconds it may take) for each item, `jobs` at a time; finish(item, process) once
    it has ended. libFuzzer stops itself: the harness stops a process only past its time ("deadline"), or all
    of them when stop() says so or the harness is interrupted ("interrupted"). tick(running items) is called
    between polls. Returns the items never started."""
    pending, running = list(items), []
    try:
        while (pending or running) and not stop():
            while pending and len(running) < jobs:
                item = pending.pop(0)
                process, seconds = start(item)
                running.append((item, process, process.began + seconds))
            for entry in list(running):
                item, process, deadline = entry
                if process.poll() is None and time.monotonic() > deadline:
                    process.stop("deadline")
                if process.poll() is not None:
                    process.sweep()
                    running.remove(entry)
                    finish(item, process)
            if tick:
                tick([item for item, _, _ in running])
            time.sleep(0.05)
    finally:
        for item, process, _ in running:
            process.stop("interrupted")
            finish(item, process)
    return pending


@dataclasses.dataclass
class Replay:
    fuzzer: Fuzzer
    inputs: list[pathlib.Path]
    seconds: float
    returncode: int
    log: pathlib.Path
    executed: dict  # input -> milliseconds, as libFuzzer reports them
    failing: str | None  # the input that was running when it failed
    problem: str | None

    @property
    def passed(self) -> bool:
        return self.problem is None


def start_replay(f: Fuzzer, build: pathlib.Path, out: pathlib.Path) -> tuple[list[pathlib.Path], Process]:
    """Each input of the repository executed once: given as files, not folders, libFuzzer runs exactly
    those, in order, and names each (`Running: F` ... `Executed F in N ms`), so a failure names its input."""
    inputs = f.inputs()
    cmd = [str(build / "bin" / f.binary), *libfuzzer_args(f, f"{out}/replay-"), *map(str, inputs)]
    return inputs, Process(cmd, out / "replay.txt")


def replay_outcome(f: Fuzzer, inputs: list[pathlib.Path], process: Process) -> Replay:
    text = process.text()
    executed = {name: int(ms) for name, ms in re.findall(r"^Executed (.+) in (\d+) ms$", text, re.M)}
    failing = next((name for name in re.findall(r"^Running: (.+)$", text, re.M) if name not in executed), None)
    rc = process.popen.returncode
    problem = None
    if process.stopped:
        problem = f"{process.stopped} after {process.seconds:.0f} s"
    elif rc != 0:
        problem = problem_of(text, rc)
    elif len(executed) != len(inputs):
        problem = f"{len(executed)} of {len(inputs)} inputs executed"
    return Replay(f, inputs, process.seconds, rc, process.log, executed, failing if problem else None, problem)


def replay_all(fuzzers, build: pathlib.Path, out_root: pathlib.Path) -> list[Replay]:
    """One fuzzer per core: a replay is all CPU, and one input (fep/fuzz/regressions/reassembly-budget) takes
    7 s of a core alone; sharing the cores would bring it closer to its -timeout."""
    inputs, replays = {}, {}

    def begin(f):
        inputs[f.name], process = start_replay(f, build, out_root / f.name)
        return process, 60 + (f.timeout_s + 1) * len(inputs[f.name])  # -timeout bounds each input; this, libFuzzer

    run_pool(fuzzers, os.cpu_count() or 1, begin,
             lambda f, process: replays.__setitem__(f.name, replay_outcome(f, inputs[f.name], process)))
    return [replays[f.name] for f in fuzzers]


def replay_line(r: Replay, build: pathlib.Path) -> str:
    if r.passed:
        slowest = max(r.executed.items(), key=lambda kv: kv[1], default=None)
        return (f"fuzz: replay {r.fuzzer.name}: {len(r.inputs)} inputs in {r.seconds:.1f} s" +
                (f" (slowest {slowest[1]} ms: {slowest[0]})" if slowest else ""))
    return f"fuzz: FAILED replay {r.fuzzer.name}: {replay_failure(r, build)}; log {r.log}"


def replay_failure(r: Replay, build: pathlib.Path) -> str:
    where = (f"input {r.failing}: {r.problem}; replay: {build / 'bin' / r.fuzzer.binary} {r.failing}"
             if r.failing else r.problem)
    return f"{len(r.executed)} of {len(r.inputs)} inputs passed; {where}"
