"""uet-decode as a command: records, summary, counts, and clear failures on bad input."""
import json

import pytest

ETH = bytes.fromhex("020000000002 020000000001 0800")


def ipv4_udp(uet: bytes, dport=4793) -> bytes:
    """Ethernet/IPv4/UDP 198.18.0.1:49152 -> 198.18.0.2:dport around UET bytes."""
    udp_len, ip_len = 8 + len(uet), 28 + len(uet)
    ip = bytes.fromhex("4500") + ip_len.to_bytes(2, "big") + bytes.fromhex("00014000 4011 0000 c6120001 c6120002")
    udp = (49152).to_bytes(2, "big") + dport.to_bytes(2, "big") + udp_len.to_bytes(2, "big") + b"\0\0"
    return ETH + ip + udp + uet


# RUD_REQ next_hdr=std, psn 7; SES std SOM=1 UET_SEND, job 0x123, request_length 4; 4 bytes of payload.
SEND = ipv4_udp(bytes.fromhex(
    "1180 0000 00000007 0001 0002"
    "05 03 0001 00 000123 0001 0002 0000000000000000 00000000 0000000000000000 0000000000000000 00000004"
    "deadbeef"))
ARP = bytes.fromhex("ffffffffffff 020000000001 0806") + bytes(28)


class TestRecords:
    def test_one_json_record_per_frame_with_exact_fields(self, cmd_uet_decode, capture_file):
        proc = cmd_uet_decode(capture_file([SEND, ARP]))
        assert proc.returncode == 0, proc.stderr
        records = [json.loads(line) for line in proc.stdout.splitlines()]
        assert [r["status"] for r in records] == ["uet", "non-uet"]
        send = records[0]
        assert send["frame"] == 1 and send["ts"] == "1700000000.000000"
        assert send["layers"] == ["eth", "ip", "udp", "uet.pds.rud_rod_req", "uet.ses.std"]
        assert send["fields"]["uet.pds.type"] == 2
        assert send["fields"]["uet.pds.psn"] == 7
        assert send["fields"]["uet.ses.opcode"] == 5
        assert send["fields"]["uet.ses.job_id"] == 0x123
        assert send["fields"]["uet.ses.request_length"] == 4
        assert send["fields"]["ip.src"] == "198.18.0.1"
        assert send["fields"]["eth.dst"] == "02:00:00:00:00:02"
        assert send["payload_len"] == 4
        assert send["diagnostics"] == [] and send["uncertain"] == {}
        assert proc.stderr.strip() == "2 frames: 1 uet, 0 malformed, 1 non-uet, 0 fragment"

    def test_summary_names_opcodes_and_types(self, cmd_uet_decode, capture_file):
        proc = cmd_uet_decode(capture_file([SEND]), "--summary")
        assert proc.returncode == 0
        line = proc.stdout.strip()
        assert line.startswith("#1 198.18.0.1 > 198.18.0.2 udp 49152>4793 [uet] pds.rud_rod_req ses.std RUD_REQ")
        assert "opcode=UET_SEND" in line and "job_id=291" in line and "payload=4" in line

    def test_count_mode_prints_only_the_counts(self, cmd_uet_decode, capture_file):
        proc = cmd_uet_decode(capture_file([SEND, SEND[:60], ARP]), "--count")
        assert proc.returncode == 0
        assert proc.stdout == "3 frames: 1 uet, 1 malformed, 1 non-uet, 0 fragment\n"

    def test_a_port_named_is_the_only_port(self, cmd_uet_decode, capture_file):
        path = capture_file([ipv4_udp(SEND[42:], dport=5000)])
        assert cmd_uet_decode(path, "--count", "--port", "4793").stdout == \
            "1 frames: 0 uet, 0 malformed, 1 non-uet, 0 fragment\n"
        assert cmd_uet_decode(path, "--count", "--port", "5000").stdout == \
            "1 frames: 1 uet, 0 malformed, 0 non-uet, 0 fragment\n"


class TestLearnedPorts:
    """By default (--port auto) a provider's own port is learned from its first well-formed UET datagram, as the
    cases' capture learns it: 4793 is not the only port a capture by hand is read on."""
    OTHER = ipv4_udp(SEND[42:], dport=5000)
    CUT = ipv4_udp(SEND[42:60], dport=5000)   # UET to port 5000, its SES header cut short

    def test_a_provider_s_own_port_is_learned_from_its_first_uet_datagram(self, cmd_uet_decode, capture_file):
        proc = cmd_uet_decode(capture_file([ARP, self.CUT, self.OTHER, self.CUT, SEND]))
        assert proc.returncode == 0, proc.stderr
        assert [json.loads(line)["status"] for line in proc.stdout.splitlines()] == \
            ["non-uet", "non-uet", "uet", "malformed", "uet"]
        assert proc.stderr.splitlines() == [
            "uet-decode: UDP port 5000 read as UET from frame 3 on (learned: --port auto; --port N decodes one port "
            "only)", "5 frames: 2 uet, 1 malformed, 2 non-uet, 0 fragment"]

    def test_auto_is_the_default(self, cmd_uet_decode, capture_file):
        path = capture_file([self.OTHER])
        assert cmd_uet_decode(path, "--count").stdout == cmd_uet_decode(path, "--count", "--port", "auto").stdout == \
            "1 frames: 1 uet, 0 malformed, 0 non-uet, 0 fragment\n"

    def test_a_datagram_that_does_not_read_as_uet_teaches_nothing(self, cmd_uet_decode, capture_file):
        proc = cmd_uet_decode(capture_file([self.CUT, ipv4_udp(b"\0" * 3, dport=6000)]), "--count")
        assert (proc.stdout, proc.stderr) == ("2 frames: 0 uet, 0 malformed, 2 non-uet, 0 fragment\n", "")

    def test_strict_fails_on_malformed_frames(self, cmd_uet_decode, capture_file):
        path = capture_file([(SEND[:60], len(SEND))])  # the capture cut the frame
        assert cmd_uet_decode(path).returncode == 0
        strict = cmd_uet_decode(path, "--strict")
        assert strict.returncode == 1
        record = json.loads(strict.stdout)
        assert [(d["kind"], d["header"]) for d in record["diagnostics"]] == [("truncated", "uet.ses.std")]


def ack(cack_psn: int) -> bytes:
    """A 12-byte PDS ACK without SES (next_hdr 0): a whole UET packet."""
    return bytes.fromhex("3800 0000") + cack_psn.to_bytes(4, "big") + bytes.fromhex("0001 0002")


class TestGsoRuns:
    """A UDP GSO super-datagram: the record of its first packet, the run once, a record per later packet."""
    RUN = ipv4_udp(ack(5) + ack(6) + ack(7))

    def test_one_record_names_the_run_and_each_later_packet(self, cmd_uet_decode, capture_file):
        proc = cmd_uet_decode(capture_file([self.RUN]))
        assert proc.returncode == 0, proc.stderr
        rec = json.loads(proc.stdout)
        first, stride = len(ipv4_udp(b"")), len(ack(0))
        assert rec["status"] == "uet" and rec["diagnostics"] == []
        assert rec["gso"] == {"segment": 0, "offset": first, "stride": stride, "count": 3}
        assert rec["fields"]["uet.pds.cack_psn"] == 5
        assert [s["gso"] for s in rec["segments"]] == [
            {"segment": k, "offset": first + k * stride, "stride": stride} for k in (1, 2)]
        assert [s["fields"]["uet.pds.cack_psn"] for s in rec["segments"]] == [6, 7]
        assert proc.stderr.strip() == "1 frames: 1 uet, 0 malformed, 0 non-uet, 0 fragment"

    def test_summary_and_counts(self, cmd_uet_decode, capture_file):
        bad_second = bytearray(ack(6))
        bad_second[1] |= 0x01                     # a flag bit reserved in an ACK
        path = capture_file([self.RUN, ipv4_udp(ack(5) + bytes(bad_second))])
        lines = cmd_uet_decode(path, "--summary").stdout.splitlines()
        assert f" gso 3x{len(ack(0))} " in lines[0] and " | #2 " in lines[0], lines[0]
        second = json.loads(cmd_uet_decode(path).stdout.splitlines()[1])
        assert second["gso"]["count"] == 2 and second["diagnostics"] == []
        assert second["segments"][0]["diagnostics"], "the second ACK's reserved bit is its own diagnostic"
        counts = cmd_uet_decode(path, "--count").stdout
        assert counts.startswith("2 frames: 1 uet, 1 malformed"), counts


def ipv4_fragment(frame: bytes, start: int, end: int, more: bool) -> bytes:
    """The IPv4 fragment of `frame` (Ethernet/IPv4, 20-byte header) holding IP payload bytes [start, end)."""
    data = frame[34:][start:end]
    ip = bytearray(frame[14:34])
    ip[2:4] = (20 + len(data)).to_bytes(2, "big")
    dont_fragment = int.from_bytes(ip[6:8], "big") & 0x4000   # kept: a datagram's DF is its fragments' too
    ip[6:8] = (dont_fragment | (0x2000 if more else 0) | start // 8).to_bytes(2, "big")
    return ETH + bytes(ip) + data


class TestTssConfidentialityOffset:
    # TSS SP=0 (12 bytes), then the RUD request and SEND of SEND in clear text, then a 16-byte ICV.
    TSS = bytes.fromhex("08000042 0001 000000000099")
    SECURED = ipv4_udp(TSS + SEND[42:] + bytes(range(16)))

    def test_nothing_after_tss_is_decoded_by_default(self, cmd_uet_decode, capture_file):
        proc = cmd_uet_decode(capture_file([self.SECURED]))
        rec = json.loads(proc.stdout)
        assert rec["status"] == "uet" and rec["layers"] == ["eth", "ip", "udp", "uet.tss"]
        assert rec["payload_len"] == len(SEND) - 42 + 16
        assert rec["uncertain"]["uet.tss.sdi"] == "tss-layout"

    def test_the_clear_text_is_decoded_up_to_the_offset(self, cmd_uet_decode, capture_file):
        proc = cmd_uet_decode(capture_file([self.SECURED]), "--tss-conf-offset", "56")
        rec = json.loads(proc.stdout)
        assert rec["layers"] == ["eth", "ip", "udp", "uet.tss", "uet.pds.rud_rod_req", "uet.ses.std"]
        assert rec["fields"]["uet.pds.psn"] == 7 and rec["fields"]["uet.ses.job_id"] == 0x123
        # The 4 payload bytes and the ICV are payload, unchecked against request_length.
        assert rec["payload_len"] == 4 + 16 and rec["diagnostics"] == []

    def test_an_offset_inside_a_header_cuts_it_short(self, cmd_uet_decode, capture_file):
        proc = cmd_uet_decode(capture_file([self.SECURED]), "--tss-conf-offset", "20")
        rec = json.loads(proc.stdout)
        assert rec["status"] == "malformed" and rec["layers"][-1] == "uet.pds.rud_rod_req"
        assert [(d["kind"], d["header"]) for d in rec["diagnostics"]] == [("truncated", "uet.ses.std")]

    def test_the_icv_is_never_clear_text(self, cmd_uet_decode, capture_file):
        proc = cmd_uet_decode(capture_file([ipv4_udp(self.TSS + bytes(16))]), "--tss-conf-offset", "1000")
        rec = json.loads(proc.stdout)
        assert [(d["kind"], d["header"]) for d in rec["diagnostics"]] == [("truncated", "uet.pds")]
        assert rec["payload_len"] == 16


class TestFragments:
    def test_the_completing_frame_reports_the_datagram(self, cmd_uet_decode, capture_file):
        first, last = ipv4_fragment(SEND, 0, 32, True), ipv4_fragment(SEND, 32, len(SEND) - 34, False)
        proc = cmd_uet_decode(capture_file([last, first, SEND]))
        assert proc.returncode == 0, proc.stderr
        records = [json.loads(line) for line in proc.stdout.splitlines()]
        assert [r["status"] for r in records] == ["fragment", "uet", "uet"]
        assert records[0]["layers"] == ["eth", "ip"] and "udp.dstport" not in records[0]["fields"]
        assert records[1]["reassembled_from"] == [2, 1]
        whole, sent = records[1], records[2]
        assert whole["layers"] == sent["layers"] and whole["payload_len"] == sent["payload_len"] == 4
        assert {k: v for k, v in whole["fields"].items() if k != "ip.checksum"} == \
            {k: v for k, v in sent["fields"].items() if k != "ip.checksum"}
        assert "reassembled_from" not in sent
        assert proc.stderr.strip() == "3 frames: 2 uet, 0 malformed, 0 non-uet, 1 fragment"

    def test_summary_says_where_the_datagram_came_from(self, cmd_uet_decode, capture_file):
        first, last = ipv4_fragment(SEND, 0, 32, True), ipv4_fragment(SEND, 32, len(SEND) - 34, False)
        lines = cmd_uet_decode(capture_file([first, last]), "--summary").stdout.splitlines()
        assert "[fragment]" in lines[0]
        assert lines[1].endswith("reassembled from #1,#2") and "[uet]" in lines[1]


class TestBadInput:
    def test_missing_file_names_the_file(self, cmd_uet_decode, tmp_path):
        proc = cmd_uet_decode(tmp_path / "nope.pcap")
        assert proc.returncode == 3
        assert "nope.pcap" in proc.stderr and proc.stdout == ""

    def test_not_a_capture(self, cmd_uet_decode, tmp_path):
        path = tmp_path / "text.pcap"
        path.write_text("this is not a capture file\n")
        proc = cmd_uet_decode(path)
        assert proc.returncode == 3 and "text.pcap" in proc.stderr

    def test_file_cut_mid_frame_keeps_what_was_read(self, cmd_uet_decode, capture_file):
        path = capture_file([SEND, SEND])
        data = path.read_bytes()
        path.write_bytes(data[:-10])
        proc = cmd_uet_decode(path)
        assert proc.returncode == 4
        assert "read error after frame 1" in proc.stderr
        assert len(proc.stdout.splitlines()) == 1
        assert "1 frames: 1 uet" in proc.stderr

    def test_undecodable_link_type(self, cmd_uet_decode, capture_file):
        proc = cmd_uet_decode(capture_file([b"\0" * 20], linktype=147))
        assert proc.returncode == 3 and "link type 147" in proc.stderr

    @pytest.mark.parametrize("args", [["--port", "0"], ["--port", "automatic"], ["--port", "65536"],
                                      ["--summary", "--count"], ["--bogus"],
                                      ["--tss-conf-offset", "-1"], ["--tss-conf-offset", "65536"],
                                      ["--spec-version", "1.0.2"]])
    def test_bad_options_are_usage_errors(self, cmd_uet_decode, capture_file, args):
        proc = cmd_uet_decode(capture_file([SEND]), *args)
        assert proc.returncode == 2, proc.stderr
