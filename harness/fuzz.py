"""The libFuzzer targets of the fuzz tree (build-fuzz): run them for a bounded time, or refresh their corpora.

    python3 -m harness.fuzz run --build build-fuzz [--seconds 60] [--seed N]
    python3 -m harness.fuzz refresh --build build-fuzz

`run` starts every fuzzer at once (each takes one core) from its corpus in the repository; the inputs it
finds go to out/fuzz/<name>/corpus, never into the repository. Each fuzzer is a test case in
out/junit/fuzz.xml: a crash, a leak or a slow input fails it, and the failure names the reproducer file
libFuzzer wrote under out/fuzz/<name>/ and the command that replays it. The seed is printed; --seed (or
UET_FUZZ_SEED) repeats a run's mutations, as far as timing lets a time-bounded run be repeated.

`refresh` rebuilds the corpora in the repository (codec/fuzz/corpus, fep/fuzz/corpus): the seeds (golden
corpus frames; for softuet, also the exchange the FEP has with itself) and the current corpus, minimised
with -merge=1 (README.md next to each corpus).
"""
import argparse
import dataclasses
import os
import pathlib
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

ROOT = pathlib.Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "captures" / "golden"
# The decoder fuzzer's first input byte picks one of these link types (codec/fuzz/decode_fuzzer.cpp).
DECODER_LINKTYPES = [1, 101, 228, 229, 113, 276]


@dataclasses.dataclass(frozen=True)
class Fuzzer:
    name: str
    binary: str  # under <build>/bin
    corpus: pathlib.Path
    max_len: int
    # Inputs that once failed, each kept as the regression test of its fix: every run starts with them, and
    # `refresh` never minimises them away.
    regressions: pathlib.Path | None = None


FUZZERS = [
    Fuzzer("decode", "uet-decode-fuzzer", ROOT / "codec" / "fuzz" / "corpus", 512),
    # Inputs are runs of datagrams; the largest seed (the FEP's exchange with itself) is about 20 KiB.
    Fuzzer("softuet-frames", "softuet-frame-fuzzer", ROOT / "fep" / "fuzz" / "corpus", 32768,
           ROOT / "fep" / "fuzz" / "regressions"),
    # Inputs are the frames of a capture, each a length byte and its bytes (reassembly_fuzzer.cpp).
    Fuzzer("reassembly", "uet-reassembly-fuzzer", ROOT / "codec" / "fuzz" / "corpus-reassembly", 4096),
    # Inputs are runs of Control API requests from a chosen peer (entity/fuzz/entity_fuzzer.cpp).
    Fuzzer("entity", "uet-entity-fuzzer", ROOT / "entity" / "fuzz" / "corpus", 8192),
    # Inputs are what a client sends the placement agent: request lines (containers/agent/fuzz/agent_fuzzer.cpp).
    Fuzzer("agent", "uet-agent-fuzzer", ROOT / "containers" / "agent" / "fuzz" / "corpus", 4096),
]


@dataclasses.dataclass
class Outcome:
    fuzzer: Fuzzer
    seconds: float
    returncode: int
    log: pathlib.Path
    stats: dict
    reproducer: str | None


def libfuzzer_args(f: Fuzzer, out: pathlib.Path) -> list[str]:
    return [f"-max_len={f.max_len}", "-timeout=10", "-rss_limit_mb=2048", f"-artifact_prefix={out}/"]


def parse_stats(text: str) -> dict:
    """execs, execs/s, coverage (cov) and features (ft) from libFuzzer's output."""
    stats = {}
    for key, value in re.findall(r"^stat::(\w+):\s+(\d+)", text, re.M):
        stats[key] = int(value)
    progress = re.findall(r"cov: (\d+) ft: (\d+)", text)
    if progress:
        stats["cov"], stats["ft"] = (int(v) for v in progress[-1])
    return stats


def start(f: Fuzzer, build: pathlib.Path, out_root: pathlib.Path, seconds: int, seed: int):
    out = out_root / f.name
    shutil.rmtree(out, ignore_errors=True)
    (out / "corpus").mkdir(parents=True)
    log = out / "log.txt"
    cmd = [str(build / "bin" / f.binary), f"-seed={seed}", f"-max_total_time={seconds}", "-print_final_stats=1",
           *libfuzzer_args(f, out), str(out / "corpus"), str(f.corpus)] + ([str(f.regressions)] if f.regressions else [])
    handle = open(log, "w")
    return subprocess.Popen(cmd, stdout=handle, stderr=subprocess.STDOUT), log, handle


def junit(outcomes: list[Outcome], path: pathlib.Path, build: pathlib.Path) -> None:
    suite = ET.Element("testsuite", name="fuzz", tests=str(len(outcomes)),
                       failures=str(sum(o.returncode != 0 for o in outcomes)))
    for o in outcomes:
        case = ET.SubElement(suite, "testcase", classname="fuzz", name=o.fuzzer.name, time=f"{o.seconds:.1f}")
        ET.SubElement(case, "system-out").text = summary(o)
        if o.returncode != 0:
            replay = (f"{build / 'bin' / o.fuzzer.binary} {o.reproducer}" if o.reproducer
                      else f"see {o.log}")
            message = (f"{o.fuzzer.binary} failed (exit {o.returncode}); reproducer {o.reproducer or 'none written'}; "
                       f"replay: {replay}")
            failure = ET.SubElement(case, "failure", message=message)
            failure.text = "\n".join(o.log.read_text(errors="replace").splitlines()[-60:])
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def summary(o: Outcome) -> str:
    s = o.stats
    return (f"{o.fuzzer.name}: {s.get('number_of_executed_units', 0)} execs in {o.seconds:.0f} s "
            f"({s.get('average_exec_per_sec', 0)}/s), cov {s.get('cov', 0)}, ft {s.get('ft', 0)}, "
            f"new units {s.get('new_units_added', 0)}, peak RSS {s.get('peak_rss_mb', 0)} MB")


def run(args) -> int:
    seed = args.seed if args.seed is not None else int(os.environ.get("UET_FUZZ_SEED") or random.randrange(1, 2**31))
    print(f"fuzz: seed {seed} (repeat with UET_FUZZ_SEED={seed}), {args.seconds} s per fuzzer", flush=True)
    missing = [str(args.build / "bin" / f.binary) for f in FUZZERS if not (args.build / "bin" / f.binary).exists()]
    if missing:
        print(f"fuzz: not built: {', '.join(missing)} (the fuzz tree builds them: ./uet build with clang)",
              file=sys.stderr, flush=True)
        return 3
    running = []
    for f in FUZZERS:
        began = time.monotonic()
        proc, log, handle = start(f, args.build, args.out, args.seconds, seed)
        running.append((f, proc, log, handle, began))
    outcomes = []
    for f, proc, log, handle, began in running:
        try:
            rc = proc.wait(timeout=args.seconds * 3 + 60)  # libFuzzer stops itself; this is only a backstop
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
        handle.close()
        text = log.read_text(errors="replace")
        written = re.findall(r"Test unit written to (\S+)", text)
        o = Outcome(f, time.monotonic() - began, rc, log, parse_stats(text), written[-1] if written else None)
        outcomes.append(o)
        print(("fuzz: " if rc == 0 else "fuzz: FAILED ") + summary(o) +
              (f"; reproducer {o.reproducer}" if o.reproducer else "") + (f"; log {log}" if rc else ""), flush=True)
    junit(outcomes, args.junit, args.build)
    return 0 if all(o.returncode == 0 for o in outcomes) else 1


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


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run every fuzzer for a bounded time")
    r.add_argument("--seconds", type=int, default=60)
    r.add_argument("--seed", type=int)
    r.add_argument("--out", type=pathlib.Path, default=ROOT / "out" / "fuzz")
    r.add_argument("--junit", type=pathlib.Path, default=ROOT / "out" / "junit" / "fuzz.xml")
    for s in (r, sub.add_parser("refresh", help="rebuild the corpora in the repository, minimised")):
        s.add_argument("--build", type=pathlib.Path, default=ROOT / "build-fuzz")
    args = p.parse_args(argv)
    args.build = args.build.resolve()
    return run(args) if args.command == "run" else refresh(args)


if __name__ == "__main__":
    sys.exit(main())
