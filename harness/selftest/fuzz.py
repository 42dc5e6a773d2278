"""The libFuzzer targets of the fuzz tree (build-fuzz): replay their corpora and fuzz briefly (./uet test),
fuzz for real (./uet fuzz), or refresh their corpora.

    python3 -m harness.selftest.fuzz run --build build-fuzz [--seconds 60] [--seed N] [--junit FILE] [--out out/fuzz]
    python3 -m harness.selftest.fuzz campaign [--build build-fuzz] [--minutes 10] [--only NAME]... [--jobs 1]
                                     [--seed N] [--out out/fuzz] [--progress 30] [--check-usage]
    python3 -m harness.selftest.fuzz refresh --build build-fuzz

`run` first replays each fuzzer's inputs in the repository (its corpus and its regression inputs), every
input once, one fuzzer per core: a crash, a leak or a timeout (10 s) fails the test case `replay <name>` of
out/junit/fuzz.xml, naming the input and the command that replays it. Then it starts every fuzzer at once
(each takes one core) for --seconds from those inputs; what a fuzzer finds goes to out/fuzz/<name>/corpus,
never into the repository. Each fuzzer is the test case <name>: a crash, a leak or a slow input fails it, and
the failure names the reproducer libFuzzer wrote under out/fuzz/<name>/ and the command that replays it.

`campaign` fuzzes for real: each fuzzer (or those named by --only) for --minutes, --jobs of them at a time,
from the repository's inputs. The inputs it finds stay in out/fuzz/<name>/campaign-<UTC time>/corpus, for
review: never in the repository (fep/fuzz/README.md says how to merge them). It prints a progress line every
--progress seconds and a closing table, and writes out/fuzz/campaign.json; exit 1 when a fuzzer found a
crash (the table names the reproducer and the command that replays it), 2 on bad usage. Ctrl-C or SIGTERM
stops the fuzzers and still reports what they reached. --check-usage only checks the arguments.

Both print the seed; --seed (or UET_FUZZ_SEED) repeats a run's mutations, as far as timing lets a
time-bounded run be repeated.

`refresh` rebuilds the corpora in the repository (codec/fuzz/corpus, fep/fuzz/corpus): the seeds (golden
corpus frames; for softuet, also the exchange the FEP has with itself) and the current corpus, minimised
with -merge=1 (README.md next to each corpus).
"""
import argparse
import math
import os
import pathlib
import random
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from harness.selftest.fuzz_libfuzzer import (FUZZERS, NAMES, ROOT, Fuzzer, Process, libfuzzer_args, missing_binaries,
                                    parse_stats, problem_of, replay_all, replay_failure, replay_line, reproducers,
                                    run_pool)

GOLDEN = ROOT / "captures" / "golden"
# The decoder fuzzer's first input byte picks one of these link types (codec/fuzz/decode_fuzzer.cpp).
DECODER_LINKTYPES = [1, 101, 228, 229, 113, 276]


class Outcome:
    def __init__(self, fuzzer: Fuzzer, process: Process):
        text = process.text()
        self.fuzzer, self.seconds, self.log = fuzzer, process.seconds, process.log
        self.returncode = process.popen.returncode
        self.stats = parse_stats(text)
        written = reproducers(text)
        self.reproducer = written[-1] if written else None
        self.problem = (f"{process.stopped} after {process.seconds:.0f} s" if process.stopped
                        else problem_of(text, self.returncode) if self.returncode else None)


def prepare(out: pathlib.Path) -> None:
    """Empty what the last run left in out/fuzz/<name>, but keep the campaigns' folders: they are for review."""
    out.mkdir(parents=True, exist_ok=True)
    for entry in out.iterdir():
        if entry.name.startswith("campaign-"):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    (out / "corpus").mkdir()


def start(f: Fuzzer, build: pathlib.Path, out: pathlib.Path, seconds: int, seed: int) -> Process:
    cmd = [str(build / "bin" / f.binary), f"-seed={seed}", f"-max_total_time={seconds}", "-print_final_stats=1",
           *libfuzzer_args(f, f"{out}/"), str(out / "corpus"), *map(str, f.input_dirs())]
    return Process(cmd, out / "log.txt")


def junit(replays, outcomes: list[Outcome], path: pathlib.Path, build: pathlib.Path) -> None:
    failed = sum(not r.passed for r in replays) + sum(o.problem is not None for o in outcomes)
    suite = ET.Element("testsuite", name="fuzz", tests=str(len(replays) + len(outcomes)), failures=str(failed))
    for r in replays:
        case = ET.SubElement(suite, "testcase", classname="fuzz", name=f"replay {r.fuzzer.name}",
                             time=f"{r.seconds:.1f}")
        ET.SubElement(case, "system-out").text = replay_line(r, build)
        if not r.passed:
            failure = ET.SubElement(case, "failure", message=f"{r.fuzzer.binary}: {replay_failure(r, build)}")
            failure.text = "\n".join(r.log.read_text(errors="replace").splitlines()[-60:])
    for o in outcomes:
        case = ET.SubElement(suite, "testcase", classname="fuzz", name=o.fuzzer.name, time=f"{o.seconds:.1f}")
        ET.SubElement(case, "system-out").text = summary(o)
        if o.problem is not None:
            replay = (f"{build / 'bin' / o.fuzzer.binary} {o.reproducer}" if o.reproducer
                      else f"see {o.log}")
            message = (f"{o.fuzzer.binary} failed (exit {o.returncode}: {o.problem}); reproducer "
                       f"{o.reproducer or 'none written'}; replay: {replay}")
            failure = ET.SubElement(case, "failure", message=message)
            failure.text = "\n".join(o.log.read_text(errors="replace").splitlines()[-60:])
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def summary(o: Outcome) -> str:
    s = o.stats
    return (f"{o.fuzzer.name}: {s['execs']} execs in {o.seconds:.0f} s ({s['exec_per_sec']}/s), cov {s['cov']}, "
            f"ft {s['ft']}, new units {s['new_units']}, peak RSS {s['peak_rss_mb']} MB")


def run(args) -> int:
    print(f"fuzz: seed {args.seed} (repeat with UET_FUZZ_SEED={args.seed}), every input in the repository once, "
          f"then {args.seconds} s per fuzzer", flush=True)
    missing = missing_binaries(args.build, FUZZERS)
    if missing:
        print(f"fuzz: not built: {', '.join(missing)} (the fuzz tree builds them: ./uet build with clang)",
              file=sys.stderr, flush=True)
        return 3
    for f in FUZZERS:
        prepare(args.out / f.name)
    replays = replay_all(FUZZERS, args.build, args.out)
    for r in replays:
        print(replay_line(r, args.build), flush=True)
    ended = {}
    run_pool(FUZZERS, len(FUZZERS), lambda f: (start(f, args.build, args.out / f.name, args.seconds, args.seed),
                                               args.seconds * 3 + 60),
             lambda f, process: ended.__setitem__(f.name, Outcome(f, process)))
    outcomes = [ended[f.name] for f in FUZZERS]
    for o in outcomes:
        print(("fuzz: " if o.problem is None else "fuzz: FAILED ") + summary(o) +
              (f"; {o.problem}" if o.problem else "") + (f"; reproducer {o.reproducer}" if o.reproducer else "") +
              (f"; log {o.log}" if o.problem else ""), flush=True)
    junit(replays, outcomes, args.junit, args.build)
    return 0 if all(r.passed for r in replays) and all(o.problem is None for o in outcomes) else 1


def golden_uet_frames():
    """(linktype, frame bytes, UDP payload or None) of every golden corpus frame."""
    sys.path.insert(0, str(ROOT))
    from scapy.layers.inet import UDP  # noqa: E402 (Scapy loads slowly; only refresh needs it)
    from scapy.layers.l2 import Ether
    from scapy_uet.pcapio import read_frames
    for pcap in sorted(GOLDEN.glob("*.pcap*")):
        for frame in read_frames(str(pcap)):
            payload = None
            if frame.linktype == 1:
                try:
                    udp = Ether(frame.data).getlayer(UDP)
                except Exception:  # noqa: BLE001 (the malformed frames are meant to break dissectors)
                    udp = None
                payload = bytes(udp.payload) if udp is not None else None
            yield frame.linktype, frame.data, payload


def reassembly_seeds(into: pathlib.Path) -> None:
    """Each golden capture's frames as one input: its link type, then each frame (at most 255 bytes)."""
    from scapy_uet.pcapio import read_frames
    for pcap in sorted(GOLDEN.glob("*.pcap*")):
        frames = [f for f in read_frames(str(pcap)) if f.linktype in DECODER_LINKTYPES]
        if frames:
            body = b"".join(bytes([min(len(f.data), 255)]) + f.data[:255] for f in frames)
            (into / pcap.stem).write_bytes(bytes([DECODER_LINKTYPES.index(frames[0].linktype)]) + body)


def seeds_of(f: Fuzzer, build: pathlib.Path, into: pathlib.Path) -> None:
    if f.name == "reassembly":
        return reassembly_seeds(into)
    if f.name == "entity":
        env = dict(os.environ, UET_ENTITY_FUZZ_SEEDS=str(into))
        subprocess.run([str(build / "bin" / f.binary)], env=env, check=True)
        return None
    for i, (linktype, data, payload) in enumerate(golden_uet_frames()):
        if f.name == "decode" and linktype in DECODER_LINKTYPES:
            (into / f"golden-{i}").write_bytes(bytes([DECODER_LINKTYPES.index(linktype), 0]) + data)
        elif f.name == "softuet-frames" and payload:
            # One datagram from the peer, then progress (frame_fuzzer.cpp's record format).
            (into / f"golden-{i}").write_bytes(bytes([2]) + len(payload).to_bytes(2, "big") + payload)
    if f.name == "softuet-frames":
        env = dict(os.environ, SOFTUET_FUZZ_SEEDS=str(into))
        subprocess.run([str(build / "bin" / f.binary)], env=env, check=True)


def refresh(args) -> int:
    for f in FUZZERS:
        with tempfile.TemporaryDirectory() as tmp:
            seeds, merged = pathlib.Path(tmp, "seeds"), pathlib.Path(tmp, "merged")
            seeds.mkdir()
            merged.mkdir()
            seeds_of(f, args.build, seeds)
            dirs = [str(seeds)] + ([str(f.corpus)] if f.corpus.is_dir() else [])
            subprocess.run([str(args.build / "bin" / f.binary), "-merge=1", f"-max_len={f.max_len}",
                            str(merged), *dirs], check=True)
            shutil.rmtree(f.corpus, ignore_errors=True)
            shutil.copytree(merged, f.corpus)
        files = list(f.corpus.iterdir())
        print(f"fuzz: {f.corpus.relative_to(ROOT)}: {len(files)} inputs, {sum(p.stat().st_size for p in files)} bytes")
    return 0



def seed_value(text: str) -> int:
    # libFuzzer takes -seed=0 as "pick one", which could not be repeated.
    try:
        seed = int(text)
    except ValueError:
        seed = 0
    if not 1 <= seed < 2**32:
        raise argparse.ArgumentTypeError(f"'{text}' is no seed (1 to {2**32 - 1})")
    return seed


def fuzzer_name(text: str) -> str:
    if text not in NAMES:
        raise argparse.ArgumentTypeError(f"unknown fuzzer '{text}' (the fuzzers: {', '.join(NAMES)})")
    return text


def positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"'{text}' is no positive number")
    return value


def jobs_value(text: str) -> int:
    cores = os.cpu_count() or 1
    if not text.isdigit() or not 1 <= int(text) <= cores:
        raise argparse.ArgumentTypeError(f"'{text}': from 1 to {cores} (the cores of this machine)")
    return int(text)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m harness.selftest.fuzz", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="replay every input in the repository, then run every fuzzer for a while")
    r.add_argument("--seconds", type=int, default=60)
    r.add_argument("--junit", type=pathlib.Path, default=ROOT / "out" / "junit" / "fuzz.xml")
    c = sub.add_parser("campaign", help="fuzz for real, keeping what is found under --out",
                       description="Fuzz for real: each fuzzer for --minutes from the inputs in the repository; "
                       "what it finds is kept in OUT/<name>/campaign-<UTC time>/corpus. Exit 0 when no fuzzer "
                       "found a crash, 1 when one did, 2 on bad usage.")
    c.add_argument("--minutes", type=positive, default=10.0, help="per fuzzer (default 10)")
    c.add_argument("--only", type=fuzzer_name, action="append", metavar="NAME",
                   help=f"only this fuzzer (repeatable): {', '.join(NAMES)}")
    c.add_argument("--jobs", type=jobs_value, default=1, help="fuzzers at a time, one core each (default 1)")
    c.add_argument("--progress", type=positive, default=30.0, metavar="SECONDS",
                   help="seconds between progress lines (default 30)")
    c.add_argument("--check-usage", action="store_true", help="only check the arguments (needs no build)")
    for s in (r, c):
        s.add_argument("--seed", type=seed_value, help="libFuzzer's seed (default: UET_FUZZ_SEED, else random)")
        s.add_argument("--out", type=pathlib.Path, default=ROOT / "out" / "fuzz", help="default out/fuzz")
    for s in (r, c, sub.add_parser("refresh", help="rebuild the corpora in the repository, minimised")):
        s.add_argument("--build", type=pathlib.Path, default=ROOT / "build-fuzz", help="the fuzz tree (build-fuzz)")
    return p


def main(argv=None) -> int:
    p = parser()
    args = p.parse_args(argv)
    if args.command in ("run", "campaign") and args.seed is None:
        try:
            args.seed = (seed_value(os.environ["UET_FUZZ_SEED"]) if os.environ.get("UET_FUZZ_SEED")
                         else random.randrange(1, 2**31))
        except argparse.ArgumentTypeError as e:
            p.error(f"UET_FUZZ_SEED: {e}")
    if getattr(args, "check_usage", False):
        return 0
    args.build = args.build.resolve()
    if hasattr(args, "out"):
        args.out = args.out.resolve()  # the paths it prints are to be copied from anywhere
    if args.command == "campaign":
        from harness.selftest.fuzz_campaign import campaign  # its imports are for campaigns only
        return campaign(args, [f for f in FUZZERS if not args.only or f.name in args.only])
    return run(args) if args.command == "run" else refresh(args)


if __name__ == "__main__":
    sys.exit(main())
