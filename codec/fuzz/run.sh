#!/usr/bin/env bash
# Fuzz the decoder for SECONDS (default 60) with libFuzzer + ASan + UBSan, seeded with the golden corpus
# frames. Needs clang and the generated sources of a configured build tree (./uet build).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-60}
gen=$root/build/codec/generated
[ -f "$gen/wire_decode_gen.cpp" ] || { echo "fuzz: run ./uet build first" >&2; exit 3; }
out=$root/out/fuzz
mkdir -p "$out/corpus"
clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -I "$root/codec/include" -I "$root/codec/src" -I "$gen" -I /usr/include \
  "$root/codec/fuzz/decode_fuzzer.cpp" "$root"/codec/src/{decoder,record}.cpp "$gen"/wire_{gen,decode_gen}.cpp \
  -o "$out/decode_fuzzer"
# Seeds: each golden frame, prefixed with the two control bytes the target reads.
"${UET_PYTHON:-/usr/bin/python3}" - "$root" "$out/corpus" <<'PY'
import pathlib, sys
sys.path.insert(0, sys.argv[1])
from scapy_uet.pcapio import read_frames
links = {1: 0, 101: 1, 228: 2, 229: 3, 113: 4, 276: 5}
for pcap in pathlib.Path(sys.argv[1], "captures", "golden").glob("*.pcap*"):
    for i, f in enumerate(read_frames(str(pcap))):
        if f.linktype in links:
            pathlib.Path(sys.argv[2], f"{pcap.stem}-{i}").write_bytes(bytes([links[f.linktype], 0]) + f.data)
PY
"$out/decode_fuzzer" -max_total_time="$seconds" -max_len=512 -print_final_stats=1 "$out/corpus" 2>&1 | tail -15
