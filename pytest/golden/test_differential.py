"""The golden corpus decoded by both decoders: uet-decode (generated from spec/wire.yaml) and the
independent Scapy layers must agree with each other and with the expected decode, frame by frame."""
import pathlib

import pytest

from harness.decode_compare import cross_check, golden_captures, load_expected

GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "captures" / "golden"
CAPTURES = golden_captures(GOLDEN)


def test_the_corpus_is_there():
    assert len(CAPTURES) >= 5, f"expected the golden captures in {GOLDEN}"


def test_some_frames_decode_differently_by_spec_version():
    versioned = [(p, port, v) for p, port, v in CAPTURES if v]
    assert {v for _, _, v in versioned} >= {"1.0.1", "1.0.3"}, "no capture has an expected decode per version"
    for pcap in {p for p, _, _ in versioned}:
        by_version = {v: load_expected(pcap, v) for p, _, v in versioned if p == pcap}
        old, new = by_version["1.0.1"], by_version["1.0.3"]
        differ = [a["case"] for a, b in zip(old, new) if {k: a[k] for k in ("status", "fields")} != {k: b[k] for k in ("status", "fields")}]
        assert len(differ) >= 5, f"{pcap.name}: only {differ} decode differently under 1.0.1 and 1.0.3"


@pytest.mark.parametrize("pcap,port,version", CAPTURES,
                         ids=[p.name + (f"@{v}" if v else "") for p, _, v in CAPTURES])
class TestGoldenCorpus:
    def test_both_decoders_agree_with_the_expected_decode(self, pcap, port, version, build_dir):
        expected = load_expected(pcap, version)
        assert expected, f"{pcap.name} has no expected decode beside it for spec version {version}"
        result = cross_check(pcap, build_dir / "bin" / "uet-decode", port, expected, version)
        report = [f"frame {d.frame} ({d.case}) {d.between}: " + "; ".join(d.details) for d in result.disagreements]
        assert result.ok, "\n".join(report[:40])
        assert result.frames == len(expected)
