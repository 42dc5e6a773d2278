"""The golden corpus (captures/golden): re-decode every pcap and compare with the expected
records; check that the corpus covers what it claims and regenerates byte for byte."""

import filecmp
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from scapy_frames import GOLDEN, ROOT
from scapy_uet.pcapio import read_frames
from scapy_uet.reassembly import decode_capture

with open(os.path.join(GOLDEN, "manifest.json")) as _fh:
    MANIFEST = json.load(_fh)


def expected(entry):
    base = entry["file"].rsplit(".", 1)[0]
    with open(os.path.join(GOLDEN, base + ".expected.jsonl")) as fh:
        return [json.loads(line) for line in fh]


def all_records():
    for entry in MANIFEST:
        for rec in expected(entry):
            yield entry, rec


def load_generator():
    spec = importlib.util.spec_from_file_location(
        "make_golden", os.path.join(GOLDEN, "make_golden.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class TestGoldenDecode:
    @pytest.mark.parametrize("entry", MANIFEST, ids=[e["file"] for e in MANIFEST])
    def test_decode_matches_expected(self, entry):
        frames = list(read_frames(os.path.join(GOLDEN, entry["file"])))
        want = expected(entry)
        assert len(frames) == len(want) == entry["frames"]
        for index, (got, exp) in enumerate(zip(decode_capture(frames, entry["port"]), want), 1):
            exp = {k: v for k, v in exp.items() if k != "case"}
            assert got == exp, "%s frame %d (%s)" % (entry["file"], index,
                                                      want[index - 1]["case"])

    def test_cli_matches_expected(self):
        for name in ("port4800.pcap", "encap_ns.pcapng"):
            entry = next(e for e in MANIFEST if e["file"] == name)
            res = subprocess.run([sys.executable, "-m", "scapy_uet",
                                  os.path.join(GOLDEN, name), "--port", str(entry["port"])],
                                 cwd=ROOT, capture_output=True, text=True, timeout=120)
            assert res.returncode == 0, res.stderr
            got = [json.loads(line) for line in res.stdout.splitlines()]
            want = [{k: v for k, v in r.items() if k != "case"} for r in expected(entry)]
            assert got == want

    def test_every_record_has_a_case(self):
        for entry, rec in all_records():
            assert rec["case"], entry["file"]
            assert list(rec)[:5] == ["case", "frame", "ts", "caplen", "len"]


class TestGoldenCoverage:
    def values(self, name):
        return {rec["fields"][name] for _e, rec in all_records() if name in rec["fields"]}

    def test_every_header(self):
        seen = {layer for _e, rec in all_records() for layer in rec["layers"]}
        for header in ("eth", "vlan", "sll", "sll2", "ip", "ipv6", "udp", "uet.entropy",
                       "uet.tss", "uet.pds.rud_rod_req", "uet.pds.req_cc", "uet.pds.rudi",
                       "uet.pds.uud", "uet.pds.ack", "uet.pds.ack_cc", "uet.pds.ack_ccx",
                       "uet.pds.nack", "uet.pds.nack_ccx", "uet.pds.cp", "uet.ses.std",
                       "uet.ses.small", "uet.ses.medium", "uet.ses.atomic", "uet.ses.cas",
                       "uet.ses.rendezvous", "uet.ses.response", "uet.ses.response_data",
                       "uet.ses.response_data_small"):
            assert header in seen, header

    def test_value_tables(self):
        assert set(range(2, 15)) <= self.values("uet.pds.type")
        assert set(range(0x10)) <= self.values("uet.ses.opcode")
        assert set(range(4)) <= self.values("uet.ses.rsp.opcode")
        assert set(range(10)) <= self.values("uet.pds.ctl_type")
        assert set(range(0x25)) <= self.values("uet.ses.rsp.return_code")
        assert set(range(0x15)) <= self.values("uet.ses.atomic_opcode")
        assert set(range(0x12)) <= self.values("uet.ses.atomic_datatype")
        codes = set(range(1, 0x1B)) - {0x0C} | {0xFD, 0xFE, 0xFF}
        assert codes <= self.values("uet.pds.nack_code")
        assert set(range(7)) <= self.values("uet.pds.next_hdr")

    def test_edge_values(self):
        assert 0xFFFFFFFF in self.values("uet.ses.request_length")
        assert 0 in self.values("uet.ses.request_length")
        assert 16383 in self.values("uet.ses.payload_length")
        assert 16383 in self.values("uet.ses.rsp.payload_length")
        assert 0xFFFFFF in self.values("uet.ses.job_id")
        assert 0xFFFFFFFF in self.values("uet.pds.psn")
        assert 16383 in self.values("uet.ses.request_length")

    def test_diagnostic_kinds_and_statuses(self):
        kinds = {d["kind"] for _e, rec in all_records() for d in rec["diagnostics"]}
        assert kinds == {"truncated", "reserved_nonzero", "unknown_value", "invalid_value",
                         "inconsistent_length", "trailing_bytes", "job_id_zero", "fragment_overlap",
                         "fragment_inconsistent"}
        statuses = {rec["status"] for _e, rec in all_records()}
        assert statuses == {"uet", "non-uet", "malformed", "fragment"}

    def test_gso_runs(self):
        """Runs of 2 and 3 segments, over IPv4 and IPv6; a last segment shorter than the stride; a segment with a
        diagnostic of its own; a run followed by bytes that form no segment; and the same bytes with no run."""
        runs = [rec for _e, rec in all_records() if "gso" in rec]
        assert {rec["gso"]["count"] for rec in runs} == {2, 3}
        assert {"ip", "ipv6"} <= {layer for rec in runs for layer in rec["layers"]}
        assert any(rec["segments"][-1]["payload_len"] < rec["payload_len"] for rec in runs)
        assert any(seg["diagnostics"] for rec in runs for seg in rec["segments"])
        assert any(d["kind"] == "trailing_bytes" for rec in runs for d in rec["diagnostics"])
        for rec in runs:
            places = [rec["gso"]] + [seg["gso"] for seg in rec["segments"]]
            assert [p["segment"] for p in places] == list(range(rec["gso"]["count"]))
            assert [p["offset"] - places[0]["offset"] for p in places] == [i * rec["gso"]["stride"] for i in range(len(places))]

    def test_reassembled_datagrams(self):
        """Each reassembled record names fragments that come before it and decode as fragments."""
        for entry in MANIFEST:
            records = expected(entry)
            for rec in records:
                for number in rec.get("reassembled_from", []):
                    assert number <= rec["frame"]
                    assert records[number - 1]["status"] == "fragment" or number == rec["frame"]
        reassembled = [rec for _e, rec in all_records() if "reassembled_from" in rec]
        assert {len(rec["reassembled_from"]) for rec in reassembled} == {2, 3}
        assert any(rec["reassembled_from"] != sorted(rec["reassembled_from"]) for rec in reassembled)
        assert any("ipv6" in rec["layers"] for rec in reassembled)
        assert any(rec["caplen"] < rec["len"] for _e, rec in all_records())

    def test_link_types_and_ports(self):
        assert {e["linktype"] for e in MANIFEST} == {1, 101, 113, 228, 229, 276}
        assert {e["port"] for e in MANIFEST} == {4793, 4800}


class TestGoldenGenerator:
    def test_regeneration_is_byte_identical(self, tmp_path):
        mod = load_generator()
        assert mod.main(["make_golden.py", str(tmp_path)]) == 0
        names = sorted(os.listdir(tmp_path))
        for name in names:
            assert filecmp.cmp(os.path.join(GOLDEN, name), str(tmp_path / name),
                               shallow=False), name
        ours = sorted(n for n in os.listdir(GOLDEN)
                      if n.endswith((".pcap", ".pcapng", ".jsonl", "manifest.json")))
        assert names == ours

    def test_generator_rejects_a_decode_that_loses_a_set_value(self, monkeypatch):
        import scapy_uet.__main__ as cli
        real = cli.decode_record

        def lossy(*args, **kwargs):
            rec = real(*args, **kwargs)
            if rec["fields"].get("uet.pds.psn") == 0x1000:
                rec["fields"]["uet.pds.psn"] = 0x1001
            return rec

        monkeypatch.setattr(cli, "decode_record", lossy)
        mod = load_generator()
        with pytest.raises(mod.CorpusError):
            mod.encap_eth()

    def test_generator_rejects_a_missing_diagnostic(self, monkeypatch):
        import scapy_uet.__main__ as cli
        real = cli.decode_record

        def no_reserved(*args, **kwargs):
            rec = real(*args, **kwargs)
            rec["diagnostics"] = [d for d in rec["diagnostics"]
                                  if d["kind"] != "reserved_nonzero"]
            return rec

        monkeypatch.setattr(cli, "decode_record", no_reserved)
        mod = load_generator()
        with pytest.raises(mod.CorpusError):
            mod.malformed()
