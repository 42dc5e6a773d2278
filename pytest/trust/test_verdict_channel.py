"""Only the suite writes verdicts (issue: trust boundaries, finding 4). The provider runs inside the case
binary; before, a provider that appended a "pass" line to the verdict file had it recorded, with its
statements counted as covered, for a case in which the binary died of SIGSEGV. Now every line is signed
with a key of that launch's own (harness/run/verdict_channel.py, cases/common/claims/verdict.cpp) and the harness
drops and reports every line it cannot verify. The forger (cases/hostile/verdict_forger.c) is a real
libfabric provider that attacks the file from inside the binary."""
import json
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

from harness.run.run_cases import run_manifest  # noqa: E402
from harness.run.verdict_channel import MAX_BYTES, VerdictChannel, sign  # noqa: E402


def body(**kw) -> str:
    return json.dumps(kw, separators=(",", ":"))


@pytest.fixture
def channel(tmp_path):
    return VerdictChannel(tmp_path / "area.jsonl")


def append(channel, *lines: str) -> None:
    with open(channel.path, "a") as fh:
        for line in lines:
            fh.write(line + "\n")


class TestTheChannelKeepsOnlyWhatTheBinarySigned:
    def test_signed_lines_in_order_are_taken(self, channel):
        append(channel, sign(channel.key, body(event="start", case="A.x", seq=0)),
               sign(channel.key, body(event="end", case="A.x", verdict="pass", seq=1)))
        assert channel.read() is True
        assert [e["case"] for e in channel.ended] == ["A.x"] and channel.running is None
        assert channel.rejected_count == 0

    def test_an_unsigned_line_is_dropped_and_named(self, channel):
        append(channel, sign(channel.key, body(event="start", case="A.x", seq=0)),
               body(event="end", case="A.x", verdict="pass", seq=1))
        channel.read()
        assert channel.ended == [] and channel.running == "A.x"
        assert channel.rejected_count == 1 and channel.rejected[0].startswith("not a signed line: ")

    def test_a_line_signed_with_another_key_is_dropped(self, channel):
        append(channel, sign("k" * 64, body(event="start", case="A.x", seq=0)))
        channel.read()
        assert channel.running is None and channel.rejected[0].startswith("a bad signature: ")

    def test_a_replayed_line_is_dropped(self, channel):
        start = sign(channel.key, body(event="start", case="A.x", seq=0))
        end = sign(channel.key, body(event="end", case="A.x", verdict="fail", seq=1))
        append(channel, start, end, end)
        channel.read()
        assert len(channel.ended) == 1 and channel.rejected == [f"a line seen before (seq 1): {end[:240]!r}"]

    def test_an_end_of_a_case_not_running_is_dropped(self, channel):
        append(channel, sign(channel.key, body(event="end", case="B.y", verdict="pass", seq=0)))
        channel.read()
        assert channel.ended == [] and channel.rejected[0].startswith("an end of B.y, which is not running: ")

    def test_a_case_with_a_verdict_from_an_earlier_launch_does_not_start_again(self, tmp_path):
        channel = VerdictChannel(tmp_path / "area.jsonl", done=frozenset({"A.x"}))
        append(channel, sign(channel.key, body(event="start", case="A.x", seq=0)))
        channel.read()
        assert channel.running is None and channel.rejected[0].startswith("a second start of A.x: ")

    def test_a_case_whose_end_was_lost_is_unended(self, channel):
        append(channel, sign(channel.key, body(event="start", case="A.x", seq=0)),
               sign(channel.key, body(event="start", case="A.y", seq=2)))
        channel.read()
        assert channel.unended == ["A.x"] and channel.running == "A.y"

    def test_lines_of_an_earlier_launch_are_not_read(self, tmp_path):
        path = tmp_path / "area.jsonl"
        path.write_text("anything an earlier launch left\n")
        channel = VerdictChannel(path)
        append(channel, sign(channel.key, body(event="start", case="A.x", seq=0)))
        channel.read()
        assert channel.running == "A.x" and channel.rejected_count == 0

    def test_a_file_that_grows_without_bound_stops_being_read(self, channel):
        with open(channel.path, "wb") as fh:
            fh.truncate(MAX_BYTES + 10)
        channel.read()
        assert channel.overflow is True


@pytest.fixture
def forger_manifest(tmp_path, build_dir):
    """softuet's claims with the forger as the provider, in FORGER_MODE `mode`."""
    if not (build_dir / "hostile" / "libforger-fi.so").exists():
        pytest.fail(f"the forger provider is not built in {build_dir}/hostile: run ./uet build")

    def make(mode: str) -> pathlib.Path:
        path = tmp_path / f"forger-{mode}.yaml"
        path.write_text(f"extends: {REPO}/cases/manifests/softuet.yaml\nprovider: forger\n"
                        f"environment:\n  FI_PROVIDER_PATH: \"{{build}}/hostile\"\n  FORGER_MODE: {mode}\n")
        return path
    return make


def discovery(build_dir, out, manifest):
    return run_manifest(manifest, build_dir, out, areas=["discovery"], use_namespaces=False)


class TestAProviderCannotWriteItsVerdicts:
    @pytest.mark.parametrize("mode", ["crash", "sign"])
    def test_a_forged_pass_for_a_crashing_case_is_dropped(self, build_dir, tmp_path, forger_manifest, mode):
        results = discovery(build_dir, tmp_path / "out", forger_manifest(mode))
        crashed = [r for r in results if r.reason == "the case binary died of signal SIGSEGV"]
        assert crashed, [(r.case, r.verdict, r.reason) for r in results]
        # The forged line named a crashed case "pass": no such pass was kept.
        passed = {r.case for r in results if r.verdict == "pass"}
        assert not passed & {r.case for r in crashed}
        dropped = [r for r in results if r.case == "uet-cases-discovery (verdict file)"]
        # The forger did name the running case in its line (it read the file as any reader would).
        assert all(any(r.case in d.reason for d in dropped) for r in crashed)
        assert len(dropped) == len(crashed) and all(r.verdict == "error" for r in dropped)
        why = "not a signed line" if mode == "crash" else "a bad signature"
        assert all(f"{why}: " in r.reason for r in dropped)

    def test_a_replay_of_the_binarys_own_lines_is_dropped(self, build_dir, tmp_path, forger_manifest):
        results = discovery(build_dir, tmp_path / "out", forger_manifest("replay"))
        cases = [r.case for r in results if "(verdict file)" not in r.case]
        assert len(cases) == len(set(cases)), "a case was counted twice"
        dropped = [r for r in results if "(verdict file)" in r.case]
        assert dropped and "a line seen before (seq 0)" in dropped[0].reason

    def test_a_provider_that_writes_to_every_descriptor_changes_no_verdict(self, build_dir, tmp_path,
                                                                            forger_manifest):
        results = discovery(build_dir, tmp_path / "out", forger_manifest("spray"))
        assert not [r for r in results if r.case == "Forged.Case"]
        dropped = [r for r in results if "(verdict file)" in r.case]
        assert dropped and "not a signed line" in dropped[0].reason
