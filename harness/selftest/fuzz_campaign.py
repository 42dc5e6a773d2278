"""`python3 -m harness.selftest.fuzz campaign` (harness/selftest/fuzz.py says how to call it): each fuzzer for some minutes from
the inputs in the repository, what it finds kept under out/fuzz/<name>/campaign-<UTC time>/ for review."""
import datetime
import json
import pathlib
import signal
import subprocess
import sys
import time

from harness.selftest.fuzz_libfuzzer import (ROOT, Process, libfuzzer_args, missing_binaries, parse_stats, last_status,
                                    problem_of, reproducers, run_pool)

# How long past -max_total_time a fuzzer may take before the harness kills it: loading a large corpus, the
# final stats, a slow last input (-timeout=10) all fit in it.
DEADLINE_SLACK = 60


class Run:
    """One fuzzer of the campaign."""

    def __init__(self, fuzzer, folder: pathlib.Path):
        self.fuzzer, self.folder = fuzzer, folder
        self.process: Process | None = None
        self.offset = 0  # how far progress() has read the log
        self.status: dict = {}
        self.result: dict | None = None

    def start(self, build: pathlib.Path, seconds: int, seed: int) -> None:
        (self.folder / "corpus").mkdir(parents=True)
        # libFuzzer writes what it finds into the first folder only; the repository's come after it.
        cmd = [str(build / "bin" / self.fuzzer.binary), f"-seed={seed}", f"-max_total_time={seconds}",
               "-print_final_stats=1", *libfuzzer_args(self.fuzzer, f"{self.folder}/"), str(self.folder / "corpus"),
               *map(str, self.fuzzer.input_dirs())]
        self.process = Process(cmd, self.folder / "log.txt")

    def kept(self) -> int:
        corpus = self.folder / "corpus"
        return sum(1 for p in corpus.iterdir() if p.is_file()) if corpus.is_dir() else 0

    def progress(self) -> str:
        # Read only what was added since the last look: a long campaign's log grows.
        with open(self.process.log, "rb") as handle:
            handle.seek(self.offset)
            chunk = handle.read()
        whole = chunk.rfind(b"\n") + 1
        self.offset += whole
        self.status = last_status(chunk[:whole].decode(errors="replace")) or self.status
        s, elapsed = self.status, int(self.process.seconds)
        return (f"fuzz: {self.fuzzer.name} {elapsed // 60}:{elapsed % 60:02d}: execs {s.get('execs', 0)}+ "
                f"({s.get('exec_per_sec', 0)}/s), cov {s.get('cov', 0)}, ft {s.get('ft', 0)}, "
                f"corpus {s.get('corpus', 0)} ({self.kept()} new kept)")

    def finish(self, build: pathlib.Path) -> dict:
        p, f = self.process, self.fuzzer
        text = p.text()
        stats = parse_stats(text)
        crashes = [{"problem": problem_of(text, p.popen.returncode), "reproducer": path,
                    "replay": f"{build / 'bin' / f.binary} {path}"} for path in dict.fromkeys(reproducers(text))]
        if not crashes and p.stopped == "deadline":
            crashes.append({"problem": f"still running {p.seconds:.0f} s after it started; killed", "reproducer": None,
                            "replay": f"see {p.log}"})
        elif not crashes and not p.stopped and p.popen.returncode != 0:
            crashes.append({"problem": problem_of(text, p.popen.returncode), "reproducer": None,
                            "replay": f"see {p.log}"})
        self.result = {
            "name": f.name, "state": "crashed" if crashes else p.stopped or "finished",
            "minutes": round(p.seconds / 60, 3), "executions": stats["execs"],
            "exec_per_sec": stats["exec_per_sec"] or (round(stats["execs"] / p.seconds) if p.seconds else 0),
            "cov": stats["cov"], "ft": stats["ft"], "corpus": stats["corpus"], "new_inputs": self.kept(),
            "corpus_dir": str(self.folder / "corpus"), "log": str(p.log), "returncode": p.popen.returncode,
            "crashes": crashes,
        }
        return self.result


def campaign_folder(out: pathlib.Path, fuzzers, started: datetime.datetime) -> str:
    name = f"campaign-{started:%Y%m%dT%H%M%SZ}"
    n = 1
    while any((out / f.name / name).exists() for f in fuzzers):  # two campaigns in one second
        n += 1
        name = f"campaign-{started:%Y%m%dT%H%M%SZ}-{n}"
    return name


def commit() -> str | None:
    res = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    return res.stdout.strip() if res.returncode == 0 else None


def table(runs: list[Run]) -> list[str]:
    lines = [f"{'fuzzer':<16}{'minutes':>8}{'executions':>12}{'exec/s':>8}{'cov':>7}{'ft':>8}{'new inputs':>12}"
             f"{'crashes':>9}"]
    for r in runs:
        if r.result is None:
            lines.append(f"{r.fuzzer.name:<16}{'not started':>20}")
            continue
        x = r.result
        lines.append(f"{x['name']:<16}{x['minutes']:>8.2f}{x['executions']:>12}{x['exec_per_sec']:>8}{x['cov']:>7}"
                     f"{x['ft']:>8}{x['new_inputs']:>12}{len(x['crashes']):>9}")
    for r in runs:
        for c in (r.result or {}).get("crashes", []):
            lines.append(f"{r.fuzzer.name}: {c['problem']}; reproducer {c['reproducer'] or 'none written'}; "
                         f"replay: {c['replay']}")
    return lines


def campaign(args, fuzzers) -> int:
    missing = missing_binaries(args.build, fuzzers)
    if missing:
        print(f"fuzz: not built: {', '.join(missing)} (./uet build --all builds the fuzz tree)", file=sys.stderr,
              flush=True)
        return 3
    started = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    seconds = max(1, round(args.minutes * 60))  # libFuzzer's -max_total_time=0 would mean no limit
    folder = campaign_folder(args.out, fuzzers, started)
    runs = [Run(f, args.out / f.name / folder) for f in fuzzers]
    report = {"seed": args.seed, "commit": commit(), "started": started.isoformat().replace("+00:00", "Z"),
              "minutes": args.minutes, "jobs": args.jobs, "build": str(args.build)}
    stop: list[int] = []  # the signals received
    print(f"fuzz: campaign {folder}: seed {args.seed} (repeat with --seed {args.seed}), {args.minutes:g} min per "
          f"fuzzer, {args.jobs} at a time: {', '.join(f.name for f in fuzzers)}", flush=True)

    def write() -> None:
        report["interrupted"] = bool(stop)
        report["fuzzers"] = [r.result or {"name": r.fuzzer.name, "state": "not started"} for r in runs]
        report["crashes"] = sum(len((r.result or {}).get("crashes", [])) for r in runs)
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "campaign.json").write_text(json.dumps(report, indent=2) + "\n")

    def done(r: Run) -> None:
        x = r.finish(args.build)
        print(f"fuzz: {x['name']} {x['state']}: {x['executions']} execs in {x['minutes']:.2f} min "
              f"({x['exec_per_sec']}/s), cov {x['cov']}, ft {x['ft']}, {x['new_inputs']} new inputs kept in "
              f"{x['corpus_dir']}", flush=True)
        write()

    def begin(r: Run):
        r.start(args.build, seconds, args.seed)
        print(f"fuzz: {r.fuzzer.name} started: {len(r.fuzzer.inputs())} inputs from the repository, new ones go to "
              f"{r.folder / 'corpus'}", flush=True)
        return r.process, seconds + DEADLINE_SLACK

    next_progress = [time.monotonic() + args.progress]

    def progress(running: list[Run]) -> None:
        if time.monotonic() >= next_progress[0]:
            for r in running:
                print(r.progress(), flush=True)
            next_progress[0] = time.monotonic() + args.progress

    # Only a flag: run_pool stops the fuzzers and reports, and a second Ctrl-C must not cut that short.
    previous = {s: signal.signal(s, lambda signum, _: stop.append(signum)) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        run_pool(runs, args.jobs, begin, lambda r, _: done(r), stop=lambda: bool(stop), tick=progress)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if stop:
        print(f"fuzz: stopped by {signal.Signals(stop[0]).name}; what the fuzzers reached:", flush=True)
    write()
    for line in table(runs):
        print(line)
    print(f"fuzz: {args.out / 'campaign.json'}", flush=True)
    return 1 if report["crashes"] else 0
