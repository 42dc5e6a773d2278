"""The golden corpus decoded by both decoders: uet-decode (generated from spec/wire.yaml) and the
independent Scapy layers must agree with each other and with the expected decode, frame by frame."""
import pathlib

import pytest

from harness.decode_compare import cross_check, golden_captures, load_expected

GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "captures" / "golden"
CAPTURES = golden_captures(GOLDEN)


def test_the_corpus_is_there():
    assert len(CAPTURES) >= 5, f"expected the golden captures in {GOLDEN}"


@pytest.mark.parametrize("pcap,port", CAPTURES, ids=[p.name for p, _ in CAPTURES])
class TestGoldenCorpus:
    def test_both_decoders_agree_with_the_expected_decode(self, pcap, port, build_dir):
        expected = load_expected(pcap)
        assert expected, f"{pcap.name} has no expected decode beside it"
        result = cross_check(pcap, build_dir / "bin" / "uet-decode", port, expected)
        report = [f"frame {d.frame} ({d.case}) {d.between}: " + "; ".join(d.details) for d in result.disagreements]
        assert result.ok, "\n".join(report[:40])
        assert result.frames == len(expected)
