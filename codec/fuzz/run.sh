#!/usr/bin/env bash
# Fuzz the decoder for SECONDS (default 60) with libFuzzer + ASan + UBSan, seeded with the golden corpus
# frames. Needs clang and the generated sources of a configured build tree (./uet build).
# FUZZ_TARGET=reassembly fuzzes fragment reassembly across frames (reassembly_fuzzer.cpp) instead.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-60}
gen=$root/build/codec/generated
[ -f "$gen/wire_decode_gen.cpp" ] || { echo "fuzz: run ./uet build first" >&2; exit 3; }
out=$root/out/fuzz
target=${FUZZ_TARGET:-decode}
corpus=$out/corpus-$target
mkdir -p "$corpus"
clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -I "$root/codec/include" -I "$root/codec/src" -I "$gen" -I /usr/include \
  "$root/codec/fuzz/${target}_fuzzer.cpp" "$root"/codec/src/{decoder,reassembly,record}.cpp \
  "$gen"/wire_{gen,decode_gen}.cpp -o "$out/${target}_fuzzer"
# Seeds: each golden frame, prefixed with the two control bytes the decode target reads; for the
# reassembly target, each golden capture's frames in its input form (a length byte before each frame).
"${UET_PYTHON:-/usr/bin/python3}" - "$root" "$corpus" "$target" <<'PY'
import pathlib, sys
sys.path.insert(0, sys.argv[1])
from scapy_uet.pcapio import read_frames
links = {1: 0, 101: 1, 228: 2, 229: 3, 113: 4, 276: 5}
for pcap in pathlib.Path(sys.argv[1], "captures", "golden").glob("*.pcap*"):
    frames = [f for f in read_frames(str(pcap)) if f.linktype in links]
    if sys.argv[3] == "reassembly" and frames:
        seed = bytes([links[frames[0].linktype]]) + b"".join(bytes([min(len(f.data), 255)]) + f.data[:255] for f in frames)
        pathlib.Path(sys.argv[2], pcap.stem).write_bytes(seed)
        continue
    for i, f in enumerate(frames):
        pathlib.Path(sys.argv[2], f"{pcap.stem}-{i}").write_bytes(bytes([links[f.linktype], 0]) + f.data)
PY
"$out/${target}_fuzzer" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 "$corpus" 2>&1 | tail -15
