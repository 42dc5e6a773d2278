"""The golden corpus decoded by both decoders: uet-decode (generated from spec/wire.yaml) and the
independent Scapy layers must agree with each other and with the expected decode, frame by frame."""
import pathlib

import pytest

from harness.wire.decode_compare import cross_check, golden_captures, load_expected

GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "captures" / "golden"
CAPTURES = golden_captures(GOLDEN)


def test_the_corpus_is_there():
    assert len(CAPTURES) >= 5, f"expected the golden captures in {GOLDEN}"


def decodes_apart(old: list[dict], new: list[dict]) -> list[str]:
    return [a["case"] for a, b in zip(old, new)
            if {k: a[k] for k in ("status", "fields")} != {k: b[k] for k in ("status", "fields")}]


def test_some_frames_decode_differently_by_spec_version():
    versioned = [(p, port, s) for p, port, s in CAPTURES if s.spec_version]
    assert {s.spec_version for _, _, s in versioned} >= {"1.0.1", "1.0.3"}, "no capture has an expected decode per version"
    for pcap in {p for p, _, _ in versioned}:
        by_version = {s.spec_version: load_expected(pcap, s) for p, _, s in versioned if p == pcap}
        old, new = by_version["1.0.1"], by_version["1.0.3"]
        differ = decodes_apart(old, new)
        assert len(differ) >= 5, f"{pcap.name}: only {differ} decode differently under 1.0.1 and 1.0.3"


def test_tss_frames_decode_further_with_a_confidentiality_offset():
    """Choice tss-coverage: given the secure domain's offset, the clear bytes after TSS are decoded."""
    offsets = [(p, s) for p, _, s in CAPTURES if s.tss_conf_offset]
    assert offsets, "no capture keeps an expected decode under a TSS confidentiality offset"
    for pcap, settings in offsets:
        plain, clear = load_expected(pcap), load_expected(pcap, settings)
        differ = decodes_apart(plain, clear)
        assert len(differ) >= 3, f"{pcap.name}: only {differ} decode differently with offset {settings.tss_conf_offset}"
        assert any("uet.pds.psn" in r["fields"] for r in clear), "no PDS header decoded in clear text"
        assert not any("uet.pds.type" in r["fields"] for r in plain if "uet.tss" in r["layers"])


@pytest.mark.parametrize("pcap,port,version", CAPTURES,
                         ids=[p.name + (f"@{v.label()}" if v.label() else "") for p, _, v in CAPTURES])
class TestGoldenCorpus:
    def test_both_decoders_agree_with_the_expected_decode(self, pcap, port, version, build_dir):
        expected = load_expected(pcap, version)
        assert expected, f"{pcap.name} has no expected decode beside it for spec version {version}"
        result = cross_check(pcap, build_dir / "bin" / "uet-decode", port, expected, version)
        report = [f"frame {d.frame} ({d.case}) {d.between}: " + "; ".join(d.details) for d in result.disagreements]
        assert result.ok, "\n".join(report[:40])
        assert result.frames == len(expected)
