"""Captures have a cap (issue: trust boundaries, round two, finding 7). A chatty provider made one case's
capture 458 MB and its decode 200 MB. Now a case keeps its capture's head up to the cap (run_info's
capture_cap_bytes; cases/common/sides/capture.cpp), the harness holds every capture and its decode to it whatever
the binary did (harness/wire/capture_cap.py), a cut capture stays a capture both decoders read, and the result
says it was cut. The chatty provider (cases/hostile/chatty.c) is softuet that floods the wire at its first
send, as a real libfabric provider inside the case binary."""
import json
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

from harness.wire import capture_cap  # noqa: E402
from harness.wire.capture_cap import CAPTURE_CAP_BYTES  # noqa: E402
from harness.wire.decode_compare import decode_cpp  # noqa: E402
from harness.wire.evidence import check_captures  # noqa: E402
from harness.results.results import Result  # noqa: E402
from scapy_uet.pcapio import read_frames, write_pcap  # noqa: E402

GOLDEN_SES = REPO / "captures" / "golden" / "ses.pcap"


class TestAChattyProvidersCaptureIsCutAtTheCap:
    def test_the_run_records_the_cap(self, chatty_run):
        assert chatty_run.doc["run_info"]["capture_cap_bytes"] == CAPTURE_CAP_BYTES

    def test_the_capture_and_its_decode_are_within_the_cap(self, chatty_run):
        entry = chatty_run.result["evidence"]["captures"][0]
        assert (chatty_run.folder / entry["capture"]).stat().st_size <= CAPTURE_CAP_BYTES
        assert (chatty_run.folder / entry["decoded"]).stat().st_size <= CAPTURE_CAP_BYTES
        assert sum(p.stat().st_size for p in chatty_run.folder.rglob("*.pcap")) <= CAPTURE_CAP_BYTES

    def test_the_cut_capture_is_one_uet_decode_reads_whole(self, chatty_run, cmd_uet_decode):
        entry = chatty_run.result["evidence"]["captures"][0]
        decoded = cmd_uet_decode("--port", entry["port"], chatty_run.folder / entry["capture"])
        assert decoded.returncode == 0, decoded.stderr
        records = [json.loads(line) for line in decoded.stdout.splitlines()]
        assert len(records) == entry["frames"] == entry["cut"]["kept_frames"]
        assert records == [json.loads(line) for line in (chatty_run.folder / entry["decoded"]).read_text().splitlines()]
        assert not [r for r in chatty_run.doc["results"] if "(decoder cross-check)" in r["case"]]

    def test_the_result_says_the_capture_was_cut_and_how_many_frames_were_dropped(self, chatty_run):
        result = chatty_run.result
        entry = result["evidence"]["captures"][0]
        cut = entry["cut"]
        assert cut["frames_dropped"] > 0
        assert (cut["cap_bytes"], cut["kept_bytes"]) == (CAPTURE_CAP_BYTES, (chatty_run.folder / entry["capture"]).stat().st_size)
        assert result["notes"][f"capture {pathlib.Path(entry['capture']).name}"] == capture_cap.note(cut)


    def test_a_pass_whose_frames_the_flood_pushed_past_the_cap_is_an_error_not_a_pass(self, chatty_run):
        # The wire oracle cannot re-derive it from what was kept: flooding first must not buy a pass.
        result = chatty_run.result
        dropped = result["evidence"]["captures"][0]["cut"]["frames_dropped"]
        assert (result["verdict"], result["judged_by"], result["oracle"]["binary_verdict"]) == ("error", "wire_oracle", "pass")
        assert result["reason"].startswith("the wire oracle cannot bear out the case binary's pass: the capture was cut "
                                           f"at the cap ({dropped} later frame(s) dropped), and what was kept does not "
                                           "hold the frame the rule reads (uet.ses.opcode none from the initiator")

def golden_ses_frames():
    return [(f.data, f.caplen) for f in read_frames(str(GOLDEN_SES))]


def chatter_frames(n: int) -> list[tuple[bytes, int]]:
    """Large UDP datagrams to a port that is not UET's, as the chatty provider sends."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    frame = bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(src="127.0.0.1", dst="127.0.0.1")
                  / UDP(sport=9, dport=9) / (b"c" * 60000))
    return [(frame, len(frame))] * n


def pcap_of(path: pathlib.Path, frames: list[tuple[bytes, int]]) -> pathlib.Path:
    write_pcap(str(path), 1, [(1700000000 + i, 0, data, wirelen) for i, (data, wirelen) in enumerate(frames)])
    return path


def result_with(pcap: pathlib.Path, **said) -> Result:
    return Result("cell", "wire", "uet-cases-wire", "Claimed/Wire.X/rdm", "pass",
                  evidence={"captures": [dict({"file": str(pcap), "port": 4793}, **said)]})


class TestTheHarnessHoldsEachCaptureToTheCap:
    CAP = 1 << 20

    def test_a_capture_past_the_cap_is_cut_after_its_last_whole_frame_within_it(self, tmp_path, uet_decode):
        # As a provider that writes the capture file itself, past the cap the binary keeps to.
        pcap = pcap_of(tmp_path / "case-1.pcap", chatter_frames(30))
        size = pcap.stat().st_size
        r = result_with(pcap)
        assert check_captures([r], uet_decode, tmp_path, cap=self.CAP) == []
        kept = pcap.stat().st_size
        frame = 16 + len(chatter_frames(1)[0][0])
        assert kept == 24 + (self.CAP - 24) // frame * frame
        entry = r.evidence["captures"][0]
        assert entry["cut"] == {"cap_bytes": self.CAP, "kept_bytes": kept, "kept_frames": (kept - 24) // frame,
                                "frames_dropped": 0, "bytes_dropped_unread": size - kept}
        assert len(decode_cpp(uet_decode, pcap)) == entry["frames"] == (kept - 24) // frame

    def test_a_capture_whose_decode_passes_the_cap_keeps_the_frames_whose_decode_fits(self, tmp_path, uet_decode):
        # Small frames decode to many times their size: 133 golden SES frames, 20 times over.
        frames = golden_ses_frames() * 20
        pcap = pcap_of(tmp_path / "case-1.pcap", frames)
        assert pcap.stat().st_size <= self.CAP
        whole = decode_cpp(uet_decode, pcap)
        assert sum(len(json.dumps(rec)) + 1 for rec in whole) > self.CAP
        r = result_with(pcap)
        assert check_captures([r], uet_decode, tmp_path, cap=self.CAP) == []
        entry = r.evidence["captures"][0]
        kept = decode_cpp(uet_decode, pcap)
        assert kept == whole[:len(kept)]
        assert [json.loads(line) for line in (tmp_path / entry["decoded"]).read_text().splitlines()] == kept
        assert (tmp_path / entry["decoded"]).stat().st_size <= self.CAP
        assert entry["cut"] == {"cap_bytes": self.CAP, "kept_bytes": pcap.stat().st_size, "kept_frames": len(kept),
                                "frames_dropped": len(frames) - len(kept)}
        assert r.notes == {"capture case-1.pcap": capture_cap.note(entry["cut"])}

    def test_the_frames_the_binary_left_out_are_counted_with_the_harness_s(self, tmp_path, uet_decode):
        pcap = pcap_of(tmp_path / "case-1.pcap", chatter_frames(30))
        r = result_with(pcap, cut_at_bytes=self.CAP, frames_dropped=7)
        check_captures([r], uet_decode, tmp_path, cap=self.CAP)
        assert r.evidence["captures"][0]["cut"]["frames_dropped"] == 7

    def test_a_capture_within_the_cap_is_kept_whole_and_no_note_says_otherwise(self, tmp_path, uet_decode):
        frames = golden_ses_frames()
        pcap = pcap_of(tmp_path / "case-1.pcap", frames)
        size = pcap.stat().st_size
        r = result_with(pcap)
        assert check_captures([r], uet_decode, tmp_path, cap=self.CAP) == []
        assert pcap.stat().st_size == size and r.evidence["captures"][0]["frames"] == len(frames)
        assert "cut" not in r.evidence["captures"][0] and r.notes == {}
