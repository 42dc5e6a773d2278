"""./uet certify and ./uet verify: one real package, made once per session by running the real mustpass of
softuet.yaml#hpc, then copies of it altered the ways a sender might, each caught by ./uet verify with a line
naming what was altered.

Its not-applicable results carry the reason codes spec/not-applicable-reasons.yaml declares. A copy "sealed
again" has SHA256SUMS rewritten, as a forger would, so that what catches it is the check the test is about,
not the sums.

The valid-package test needs a clean checkout (commit your changes first): a package made from a modified
tree is rightly invalid.
"""
import io
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
from harness.certify import package_archive, package_sums
from harness.files import suite_identity  # noqa: E402
from harness.certify import verify as verify_mod  # noqa: E402
from harness.certify import verify_checks  # noqa: E402
from harness.results import causes  # noqa: E402
from harness.certify.package_limits import Limits, PackageRefused  # noqa: E402
from harness.selftest.mutation_baseline import short_case as short  # noqa: E402

MANIFEST = "cases/manifests/softuet.yaml#hpc"
SEED = 4242
REASONS = REPO / "spec" / "not-applicable-reasons.yaml"
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="certify runs the suite in namespace pairs, which needs root")
pytestmark = root_only


def run_certify(build_dir, out, *args, manifest=MANIFEST):
    env = dict(os.environ, UET_BUILD=str(build_dir), PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-m", "harness.certify.certify", "--provider", manifest, "--seed", str(SEED),
                           "--out", str(out), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    packages = sorted(out.glob("*.tar.zst"))
    return proc, packages[0] if packages else None


def unpack(package, dest):
    subprocess.run(["tar", "--zstd", "-xf", str(package), "-C", str(dest)], check=True, timeout=600)
    return dest


def files_of(tree):
    return sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file())


def seal(tree):
    package_sums.write(tree, files_of(tree))


def pack(tree, package):
    package_archive.write(tree, files_of(tree), package, 0)
    return package


def edit_json(path, change):
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc, indent=1))


@pytest.fixture(scope="session")
def hpc_package(certify_package):
    """The package of the real mustpass of softuet.yaml#hpc (the whole run: 1 to 3 minutes), made once per
    session (the plugfest tests ingest it too)."""
    made = certify_package("--provider", MANIFEST, "--seed", SEED)
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    return made.package


@pytest.fixture(scope="session")
def coded_tree(hpc_package, tmp_path_factory):
    """The package's members, unpacked once (each not-applicable result with its reason code)."""
    return unpack(hpc_package, tmp_path_factory.mktemp("coded"))


@pytest.fixture
def altered_from(tmp_path):
    """altered_from(tree, change, sealed=True) -> a package of a copy of `tree`'s members after change(copy)."""
    def make(source, change, sealed=True):
        tree = tmp_path / "tree"
        shutil.copytree(source, tree)
        change(tree)
        if sealed:
            seal(tree)
        return pack(tree, tmp_path / "altered.tar.zst")
    return make


@pytest.fixture
def altered(coded_tree, altered_from):
    """altered(change, sealed=True) -> a package of the coded members after change(tree)."""
    return lambda change, sealed=True: altered_from(coded_tree, change, sealed)


CAVEAT = f"[{verify_checks.CAVEAT}] "


@pytest.fixture
def verify(build_dir, tmp_path, capsys):
    """verify(package) -> (exit status, finding lines without the 'uet verify: ' prefix, the report). The
    caveat that the hashes could not be re-checked (this checkout changed while the tests ran) is left out of
    the lines: it invalidates nothing, and TestValidPackage and TestSuite look at it."""
    def run(package, reasons=REASONS, caveats=False):
        rc = verify_mod.main([str(package), "--report", str(tmp_path / "report"), "--reasons", str(reasons),
                              "--build", str(build_dir)])
        out = capsys.readouterr().out.splitlines()
        lines = [line.removeprefix("uet verify: ") for line in out if line.startswith("uet verify: [")]
        report = json.loads((tmp_path / "report" / "verification.json").read_text()) if rc != 2 else None
        return rc, [line for line in lines if caveats or not line.startswith(CAVEAT)], report
    return run


def set_on_result(result_id, **values):
    """A change: the result `result_id` of results.json gets `values`."""
    def change(tree):
        edit_json(tree / "run" / "results.json",
                  lambda doc: next(r for r in doc["results"] if r["id"] == result_id).update(values))
    return change


def results_of(tree):
    return json.loads((tree / "run" / "results.json").read_text())["results"]


def first_with_capture(tree):
    return next(r for r in results_of(tree) if r["evidence"].get("captures"))


def clean_checkout_at(package_tree):
    suite = json.loads((package_tree / "suite.json").read_text())
    return suite_identity.commit() == suite["commit"] and not suite_identity.changes()


class TestValidPackage:
    def test_the_real_mustpass_is_valid(self, hpc_package, verify):
        rc, lines, report = verify(hpc_package, caveats=True)
        assert (rc, lines) == (0, []), "a package of a modified tree is invalid: commit your changes first"
        assert report["verdict"] == "VALID"
        assert report["counts"]["captures"] > 0 and report["counts"]["frames"] > 0

    def test_the_package_holds_the_run_its_mustpass_and_the_suite_identity(self, coded_tree):
        names = set(files_of(coded_tree))
        assert {"SHA256SUMS", "suite.json", "mustpass.json", "manifests/softuet.yaml", "run/results.json",
                "run/junit.xml", "run/index.html"} <= names
        captures = [n for n in names if n.endswith(".pcap")]
        assert captures and all(n[:-5] + ".json" in names for n in captures)
        mustpass = json.loads((coded_tree / "mustpass.json").read_text())
        assert (mustpass["seed"], mustpass["complete"], mustpass["only"], mustpass["refs"], list(mustpass["claimed"])) == \
            (SEED, True, [], ["manifests/softuet.yaml#hpc"], ["softuet-hpc"])
        assert list(mustpass["profiles"]) == ["hpc"] and len(mustpass["profiles"]["hpc"]) == 143
        suite = json.loads((coded_tree / "suite.json").read_text())
        assert "cases/uet-cases-authz" in suite["built_sha256"] and "bin/uet-decode" in suite["built_sha256"]
        assert set(suite["spec_sha256"]) >= {"spec/wire.yaml", "spec/catalogue.yaml"}

    def test_the_package_made_from_the_same_run_is_the_same_bytes(self, coded_tree, tmp_path):
        assert pack(coded_tree, tmp_path / "a.tar.zst").read_bytes() == pack(coded_tree, tmp_path / "b.tar.zst").read_bytes()


class TestIntegrity:
    def test_flipped_verdict_without_new_sums(self, altered, verify, coded_tree):
        target = next(r for r in results_of(coded_tree) if r["verdict"] == "pass")
        rc, lines, _ = verify(altered(set_on_result(target["id"], verdict="fail"), sealed=False))
        assert rc == 1
        # a fail says its causes: the statements its own checks broke (one manifest: a solo cell's)
        assert lines == ["[integrity] member 'run/results.json' does not match its SHA-256 in SHA256SUMS (altered)",
                         f"[verdict] {target['id']}: fail (softuet-hpc breaks {', '.join(target['statements'])})"]

    def test_extra_member(self, altered, verify):
        rc, lines, _ = verify(altered(lambda tree: (tree / "run" / "extra.txt").write_text("x"), sealed=False))
        assert (rc, lines) == (1, ["[integrity] member 'run/extra.txt' is not listed in SHA256SUMS (an extra member)"])

    def test_missing_sums(self, altered, verify):
        def drop(tree):
            (tree / "SHA256SUMS").unlink()
        rc, lines, _ = verify(altered(drop, sealed=False))
        assert (rc, lines) == (1, ["[integrity] no SHA256SUMS member: the package cannot show it is unaltered"])


class TestVerdict:
    def test_flipped_verdict_sealed_again(self, altered, verify, coded_tree):
        target = next(r for r in results_of(coded_tree) if r["verdict"] == "pass")
        rc, lines, _ = verify(altered(set_on_result(target["id"], verdict="timeout")))
        assert (rc, lines) == (1, [f"[verdict] {target['id']}: timeout"])


class TestCapture:
    def test_removed_capture(self, altered, verify, coded_tree):
        r = first_with_capture(coded_tree)
        pcap = r["evidence"]["captures"][0]["capture"]
        rc, lines, _ = verify(altered(lambda tree: (tree / "run" / pcap).unlink()))
        assert (rc, lines) == (1, [f"[capture] {r['id']}: capture {pcap!r} is not in the package"])

    def test_edited_decode(self, altered, verify, coded_tree):
        cap = first_with_capture(coded_tree)["evidence"]["captures"][0]
        records = [json.loads(line) for line in (coded_tree / "run" / cap["decoded"]).read_text().splitlines()]
        index = next(i for i, rec in enumerate(records) if "uet.ses.job_id" in rec["fields"])
        was = records[index]["fields"]["uet.ses.job_id"]

        def edit(tree):
            records[index]["fields"]["uet.ses.job_id"] = was + 1
            (tree / "run" / cap["decoded"]).write_text("".join(json.dumps(rec) + "\n" for rec in records))
        rc, lines, _ = verify(altered(edit))
        assert (rc, lines) == (1, [
            f"[capture] {cap['capture']}: frame {index + 1}: uet-decode/expected disagree: "
            f"fields[uet.ses.job_id]: uet-decode {was!r} != expected {was + 1!r}",
            f"[capture] {cap['capture']}: frame {index + 1}: scapy/expected disagree: "
            f"fields[uet.ses.job_id]: scapy {was!r} != expected {was + 1!r}"])

    def test_capture_no_decoder_can_read(self, altered, verify, coded_tree):
        pcap = first_with_capture(coded_tree)["evidence"]["captures"][0]["capture"]
        rc, lines, _ = verify(altered(lambda tree: (tree / "run" / pcap).write_bytes(b"\xd4\xc3\xb2\xa1 not a capture")))
        assert rc == 1 and len(lines) == 1
        assert lines[0].startswith(f"[capture] {pcap}: cannot be re-decoded (DecoderError('uet-decode ")

    def test_capture_no_result_names(self, altered, verify, coded_tree):
        cap = first_with_capture(coded_tree)["evidence"]["captures"][0]["capture"]
        copy = cap[:-5] + "-copy.pcap"
        rc, lines, _ = verify(altered(lambda tree: shutil.copyfile(tree / "run" / cap, tree / "run" / copy)))
        assert (rc, lines) == (1, [f"[capture] run/{copy}: a capture no result names"])


class TestEvidence:
    def test_evidence_frame_not_in_its_capture(self, altered, verify, coded_tree):
        r = first_with_capture(coded_tree)

        def add(tree):
            edit_json(tree / "run" / "results.json", lambda doc: next(x for x in doc["results"] if x["id"] == r["id"])
                      ["evidence"].update(frames=[{"sender": "initiator", "summary": "uet.ses.job_id=0xdead"}]))
        rc, lines, _ = verify(altered(add))
        assert rc == 1 and len(lines) == 1, lines
        # the reason: what the frame nearest it in the capture has instead
        assert re.fullmatch(re.escape(f"[evidence] {r['id']}: evidence frame 'uet.ses.job_id=0xdead' is not in its capture")
                            + r" \(nearest: frame \d+, where uet\.ses\.job_id is \d+\)", lines[0]), lines


class TestManifest:
    def test_changed_manifest(self, altered, verify):
        def change(tree):
            with open(tree / "manifests" / "softuet.yaml", "a") as f:
                f.write("# one more line\n")
        rc, lines, _ = verify(altered(change))
        assert (rc, lines) == (1, ["[manifest] manifest manifests/softuet.yaml#hpc (softuet-hpc) changed: its SHA-256 is "
                                   "not the one results.json recorded as the run's"])


    def test_manifest_extending_a_file_outside_the_package(self, altered, verify):
        def change(tree):
            path = tree / "manifests" / "softuet.yaml"
            path.write_text("extends: /etc/hostname\n" + path.read_text())
        rc, lines, _ = verify(altered(change))
        assert (rc, lines) == (1, ["[manifest] manifest manifests/softuet.yaml#hpc: it or a file it extends lies outside "
                                   "the package's manifests/",
                                   "[mustpass] the mustpass has profile hpc, which no manifest claims"])

    def test_json_of_another_shape(self, altered, verify, coded_tree):
        # Before: "the package's JSON has a shape the suite never writes (AttributeError(...))", naming no field;
        # now results.json's one reader (harness/results/results.py) names the member and the key
        r = first_with_capture(coded_tree)
        at = next(i for i, x in enumerate(results_of(coded_tree)) if x["id"] == r["id"])
        rc, lines, _ = verify(altered(set_on_result(r["id"], evidence={"captures": ["not a mapping"]})))
        assert (rc, lines) == (1, [f"[integrity] run/results.json: results.{at}.evidence.captures.0: a string where a "
                                   "mapping is wanted: not a results.json (reports/RESULTS-FORMAT.md)"])


class TestSuite:
    def test_modified_case_binary_hash(self, altered, verify, coded_tree):
        if not clean_checkout_at(coded_tree):
            pytest.skip("the hashes are re-checked only in a clean checkout at the package's commit")
        mine = json.loads((coded_tree / "suite.json").read_text())["built_sha256"]["cases/uet-cases-authz"]
        rc, lines, _ = verify(altered(lambda tree: edit_json(
            tree / "suite.json", lambda s: s["built_sha256"].update({"cases/uet-cases-authz": "0" * 64}))))
        assert (rc, lines) == (1, [f"[binaries] built file cases/uet-cases-authz: the package's SHA-256 0000000000000000... "
                                   f"is not this checkout's {mine[:16]}..."])

    def test_another_commit_of_the_history_is_a_caveat(self, coded_tree, build_dir):
        here, before = suite_identity.commit(), suite_identity._git("rev-parse", "HEAD~1").stdout.strip()
        suite = dict(json.loads((coded_tree / "suite.json").read_text()), commit=before, modified=False)
        findings = verify_checks.suite_findings(suite, build_dir, REPO)
        assert [(f.kind, f.message, f.invalidates) for f in findings] == [
            (verify_checks.CAVEAT, f"this checkout is {here[:12]}, not the package's {before[:12]}: its binaries and "
                                   "spec data could not be re-checked (check out that commit and build it)", False)]

    def test_unknown_commit(self, altered, verify):
        rc, lines, _ = verify(altered(lambda tree: edit_json(tree / "suite.json", lambda s: s.update(commit="f" * 40))))
        assert (rc, lines) == (1, [f"[suite] suite commit {'f' * 40!r} is not in this checkout's git history"])

    def test_modified_tree(self, altered, verify, coded_tree):
        commit = json.loads((coded_tree / "suite.json").read_text())["commit"]
        rc, lines, _ = verify(altered(lambda tree: edit_json(
            tree / "suite.json", lambda s: s.update(modified=True, changes=[" M harness/run/run_suite.py"]))))
        assert rc == 1 and lines[0] == \
            f"[suite] the suite's tree at {commit[:12]} was modified when the package was made ( M harness/run/run_suite.py)"


class TestMustpass:
    def test_missing_profile(self, altered, verify):
        rc, lines, _ = verify(altered(lambda tree: edit_json(tree / "mustpass.json", lambda m: m["profiles"].pop("hpc"))))
        assert (rc, lines) == (1, ["[mustpass] claimed profile hpc has no mustpass"])

    def test_removed_area(self, altered, verify, coded_tree):
        gone = [r for r in results_of(coded_tree) if r["area"] == "mr"]
        mustpass = json.loads((coded_tree / "mustpass.json").read_text())
        hit = {s: ids for s, ids in mustpass["checks"].items() if any(r["id"] in ids for r in gone)}

        def drop(tree):
            edit_json(tree / "run" / "results.json", lambda doc: doc.update(results=[r for r in doc["results"] if r["area"] != "mr"]))
        rc, lines, _ = verify(altered(drop))
        left = {s: len([i for i in ids if i not in {r["id"] for r in gone}]) for s, ids in hit.items()}
        assert rc == 1 and gone and hit
        assert lines == ["[mustpass] cell softuet-hpc, area mr: no result (the mustpass did not run in full)"] + [
            f"[mustpass] statement {s}: mustpass.json lists {len(hit[s])} check(s), results.json has {left[s]}" for s in sorted(hit)]

    def test_a_run_with_only_is_incomplete(self, build_dir, tmp_path, verify):
        proc, package = run_certify(build_dir, tmp_path, "--only", "av")
        assert proc.returncode == 0, proc.stderr[-2000:]
        rc, lines, _ = verify(package)
        assert rc == 1
        assert "[mustpass] the run left part of the mustpass out (--only av): incomplete" in lines
        assert "[mustpass] cell softuet-hpc, area authz: no result (the mustpass did not run in full)" in lines
        assert not any(line.startswith(("[verdict]", "[capture]", "[integrity]", "[manifest]")) for line in lines)


class TestManifestCopies:
    def test_a_manifest_extending_an_absolute_path_makes_a_package_verify_reads(self, build_dir, tmp_path, verify):
        """The package's copy of a manifest says `extends:` relative to the copy it extends, and the run used
        those copies: nothing but the --only run's incompleteness is found."""
        vendor = tmp_path / "vendor"
        vendor.mkdir()
        (vendor / "child.yaml").write_text(f"extends: {REPO / 'cases' / 'manifests' / 'softuet.yaml'}#hpc\n")
        proc, package = run_certify(build_dir, tmp_path / "out", "--only", "av", manifest=str(vendor / "child.yaml"))
        assert proc.returncode == 0, proc.stderr[-2000:]
        rc, lines, _ = verify(package)
        assert rc == 1 and "[mustpass] the run left part of the mustpass out (--only av): incomplete" in lines
        assert [line for line in lines if not line.startswith(("[mustpass] ", "[suite] "))] == []
        (tmp_path / "tree").mkdir()
        tree = unpack(package, tmp_path / "tree")
        ref = json.loads((tree / "mustpass.json").read_text())["refs"][0]
        copy = tree / ref.removesuffix("#hpc")
        extends = copy.read_text().split("extends: ", 1)[1].split("\n")[0].strip("'\"")
        assert not extends.startswith("/") and (copy.parent / extends.removesuffix("#hpc")).read_text() == \
            (REPO / "cases" / "manifests" / "softuet.yaml").read_text()


class TestNotApplicable:
    @pytest.mark.parametrize("code, why", [
        ("manifest-lacks-hook", "not applicable under reason code 'manifest-lacks-hook' (not-claimed), not allowed in a submission"),
        ("because", "not applicable under reason code 'because', which spec/not-applicable-reasons.yaml does not list")])
    def test_reason_code_not_allowed(self, altered, verify, coded_tree, code, why):
        r = next(x for x in results_of(coded_tree) if x["verdict"] == "not_applicable")
        rc, lines, _ = verify(altered(set_on_result(r["id"], reason_code=code)))
        assert (rc, lines) == (1, [f"[not-applicable] {r['id']}: {why}"])

    def test_missing_reason_codes(self, altered, verify, coded_tree):
        skipped = [r for r in results_of(coded_tree) if r["verdict"] == "not_applicable"]

        def uncode(tree):
            edit_json(tree / "run" / "results.json", lambda doc: [r.pop("reason_code", None) for r in doc["results"]])
        rc, lines, _ = verify(altered(uncode))
        assert rc == 1 and len(lines) == len(skipped) > 0
        assert lines[0] == (f"[not-applicable] {skipped[0]['id']}: not applicable without a reason code "
                            f"(reason: {skipped[0]['reason']!r})")

    def test_no_reason_code_list(self, altered, verify, tmp_path):
        rc, lines, _ = verify(altered(lambda tree: None), reasons=tmp_path / "none.yaml")
        assert rc == 1 and lines[0] == (f"[not-applicable] no reason code can be allowed: {tmp_path / 'none.yaml'}: "
                                        "cannot read: No such file or directory")


class TestUnsafeMember:
    def test_path_traversal_member_is_named_and_nothing_is_extracted(self, coded_tree, tmp_path, verify):
        raw = tmp_path / "evil.tar"
        with tarfile.open(raw, "w", format=tarfile.GNU_FORMAT) as tar:
            for name in files_of(coded_tree):
                tar.add(coded_tree / name, arcname=name)
            info = tarfile.TarInfo("../verify-escape")
            info.size = 4
            tar.addfile(info, io.BytesIO(b"evil"))
        subprocess.run(["zstd", "-q", "--rm", str(raw)], check=True)
        rc, lines, _ = verify(tmp_path / "evil.tar.zst")
        assert (rc, lines) == (1, ["[unsafe-member] member '../verify-escape': a path that climbs out (..)"])
        assert not list(pathlib.Path("/tmp").glob("verify-escape")) and not (tmp_path.parent / "verify-escape").exists()


class TestAmplification:
    """A package that names one capture many times, with a long decode and many evidence frames (issue 34,
    finding 8: 772 bytes took 3.8 GB and ended in MemoryError). The capture is decoded once however often it
    is named, and past a limit of harness/certify/package_limits.py the package is refused, exit 2; verify runs with
    3 GiB of address space and 300 s of CPU time, so that the old way of it fails fast."""
    CONFINED = {"file_bytes": 128 << 20, "memory_bytes": 3 << 30, "cpu_seconds": 300}
    LINES = 100_000

    @pytest.fixture
    def flooded(self, altered, coded_tree):
        """flooded(names, frames) -> (package, the result, its capture): the first result with a capture names
        it `names` times and gives `frames` evidence frames no capture holds; the capture's decode is a short
        record LINES times (each of the capture's own records, all UET, would pass the package's
        document_bytes limit first)."""
        r = first_with_capture(coded_tree)
        cap = r["evidence"]["captures"][0]

        def make(names, frames=0):
            def change(tree):
                evidence = dict(r["evidence"], captures=[cap] * names,
                                frames=[{"sender": "initiator", "summary": "uet.ses.job_id=0xdead"}] * frames)
                set_on_result(r["id"], evidence=evidence)(tree)
                decode = tree / "run" / cap["decoded"]
                decode.write_text((json.dumps({"frame": 1, "status": "non-uet", "layers": ["eth"]}) + "\n") * self.LINES)
            return altered(change), r, cap
        return make

    def test_a_capture_named_20000_times_is_refused(self, flooded, confined_verify, build_dir):
        package, _, _ = flooded(20_000)
        proc = confined_verify(package, build_dir, **self.CONFINED)
        assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", (
            f"uet verify: refused package {package}: run/results.json: references to captures (10001): over the "
            "package limit capture_refs (10000)\n"))

    def test_a_capture_named_5000_times_is_decoded_once(self, flooded, confined_verify, build_dir, coded_tree, tmp_path):
        package, r, cap = flooded(5_000)
        frames = len((coded_tree / "run" / cap["decoded"]).read_text().splitlines())
        proc = confined_verify(package, build_dir, **self.CONFINED)
        lines = [line for line in proc.stdout.splitlines() if line.startswith("uet verify: [capture]")]
        assert (proc.returncode, proc.stderr, lines[0]) == (1, "", (
            f"uet verify: [capture] {cap['capture']}: frame 0: uet-decode/expected disagree: frame count {frames} "
            f"!= {self.LINES}"))
        counts = json.loads((tmp_path / "report" / "verification.json").read_text())["counts"]
        assert counts["captures"] == len({c["capture"] for x in results_of(coded_tree)
                                          for c in x["evidence"].get("captures") or []})

    def test_evidence_frames_against_a_long_decode_are_refused(self, flooded, confined_verify, build_dir):
        package, _, _ = flooded(1, frames=1_000)
        proc = confined_verify(package, build_dir, **self.CONFINED)
        assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", (
            f"uet verify: refused package {package}: run/results.json: decoded frames compared with evidence frames "
            f"({51 * self.LINES}): over the package limit evidence_comparisons (5000000)\n"))


class TestLimits:
    """Each limit of the captures' re-check, set low, refuses the real package naming it (PackageRefused: exit 2)."""

    def refusal(self, coded_tree, build_dir, **limits):
        doc = json.loads((coded_tree / "run" / "results.json").read_text())
        with pytest.raises(PackageRefused) as refused:
            verify_checks.capture_findings(coded_tree / "run", doc, build_dir / "bin" / "uet-decode", Limits(**limits))
        return str(refused.value)

    def test_capture_references(self, coded_tree, build_dir):
        assert self.refusal(coded_tree, build_dir, capture_refs=1) == \
            "run/results.json: references to captures (2): over the package limit capture_refs (1)"

    @pytest.mark.parametrize("limit, key, count, said", [
        ("decode_records", "decoded", lambda path: len(path.read_text().splitlines()), "run/{member}: lines"),
        ("document_bytes", "decoded", lambda path: path.stat().st_size, "run/{member}: its size in bytes"),
        ("capture_bytes", "capture", lambda path: path.stat().st_size, "run/{member}: its size in bytes"),
        ("decoded_bytes", "capture", lambda path: path.stat().st_size, "the captures and decodes: bytes read")])
    def test_the_first_capture_over_a_limit(self, coded_tree, build_dir, limit, key, count, said):
        member = first_with_capture(coded_tree)["evidence"]["captures"][0][key]
        amount = count(coded_tree / "run" / member)
        assert self.refusal(coded_tree, build_dir, **{limit: amount - 1}) == \
            f"{said.format(member=member)} ({amount}): over the package limit {limit} ({amount - 1})"

    def test_manifests_named(self, coded_tree):
        with pytest.raises(PackageRefused, match=r"^mustpass.json: manifests named in refs \(3\): over the package "
                                                 r"limit manifest_refs \(2\)$"):
            verify_checks.load_manifests(coded_tree, {"refs": ["manifests/softuet.yaml#hpc"] * 3}, {}, Limits())


class TestUnreadable:
    def test_not_a_package_exits_2(self, tmp_path, build_dir, capsys):
        bad = tmp_path / "bad.tar.zst"
        bad.write_bytes(b"PK\x03\x04 a zip, not a package")
        assert verify_mod.main([str(bad), "--build", str(build_dir), "--report", str(tmp_path / "r")]) == 2
        assert capsys.readouterr().err.startswith(f"uet verify: unreadable package: {bad}: not zstd-compressed data")


# A broken vendor: softuet with the fault knob wrong_job_id, so that every request carries its JobID + 1.
BROKEN = "cases/manifests/examples/softuet-wrong-job-id.yaml"


@pytest.fixture(scope="session")
def broken_tree(build_dir, tmp_path_factory):
    """The members of the package of the broken vendor's real mustpass (every profile it claims), whose run
    failed: its wire checks of the JobID failed, and their captures show why."""
    proc, package = run_certify(build_dir, tmp_path_factory.mktemp("broken"), manifest=BROKEN)
    assert proc.returncode == 1 and package, proc.stdout[-3000:] + proc.stderr[-3000:]
    return unpack(package, tmp_path_factory.mktemp("broken-tree"))


def forge_passes(tree):
    """What the sender who wants the broken package to verify does: every failing verdict becomes a pass, with
    the counts and the exit status to match, and without the frames a failure shows (a pass has none)."""
    def change(doc):
        for r in doc["results"]:
            if r["verdict"] in ("fail", "error", "timeout"):
                r.update(verdict="pass", reason=None, message=None, detail=None, blamed_side=None)
                r["evidence"].pop("frames", None)
        counts = {v: sum(r["verdict"] == v for r in doc["results"]) for v in doc["summary"] if v in verify_checks.FAILING + ("pass",)}
        doc["summary"].update(counts, exit_status=0)
    edit_json(tree / "run" / "results.json", change)


class TestWireOracle:
    """./uet verify judges every wire check a rule of spec/wire-oracle.yaml states again from its capture (issue
    trust boundaries round two, finding 4): before, a package whose fails were turned into passes and sealed
    again verified VALID, though its captures showed ses.job_id 0xc0c04 where 0xc0c03 belongs."""

    def test_fails_turned_into_passes_are_contradicted_by_their_captures(self, broken_tree, verify, tmp_path):
        failing = [r for r in results_of(broken_tree) if r["verdict"] in verify_checks.FAILING]
        tree = tmp_path / "tree"
        shutil.copytree(broken_tree, tree)
        forge_passes(tree)
        seal(tree)
        rc, lines, report = verify(pack(tree, tmp_path / "forged.tar.zst"))
        oracle = sorted(line for line in lines if line.startswith("[oracle] "))
        assert rc == 1 and report["verdict"] == "INVALID: %d finding(s) (oracle)" % len(oracle), lines
        assert [line for line in lines if not line.startswith("[oracle] ")] == []
        addressed = next(r["id"] for r in failing if r["case"] == "Claimed/Wire.RequestsAddressTheTargetEndpoint/rdm")
        line = next(line for line in oracle if line.startswith(f"[oracle] {addressed}: "))
        assert line.startswith(f"[oracle] {addressed}: the wire oracle contradicts the case binary: the binary says "
                               "pass; the capture shows uet.ses.job_id 0xc0c04 where 0xc0c03 belongs (frame "), line
        assert line.endswith("(statements 2.2.10.4-a, 2.2.4.4-b; spec/wire-oracle.yaml)"), line
        caught = {line.split(" ", 2)[1].rstrip(":") for line in oracle}
        assert caught <= {r["id"] for r in failing} and len(caught) == len(oracle)
        # the fails whose capture shows the broken JobID (or, for the read-back, no read: the refused write stopped
        # the case); the other fails are refusals the provider's own API reported, which no capture contradicts
        assert sorted({short(r["case"]) for r in failing if r["id"] in caught}) == [
            "Authz.AvAuthKeyJobIdIsOnTheWire", "Authz.DirectJobIdIsOnTheWire", "Authz.IndirectJobIdIsOnTheWire",
            "Fallback.FallbackJobIdIsOnTheWire", "Jobs.TheTargetsEntityJobIdIsOnTheWire", "Rma.WriteThenReadBack",
            "Wire.RequestsAddressTheTargetEndpoint"]
        assert report["counts"]["wire_oracle"]["contradicted"] == len(oracle)

    def test_the_untouched_package_has_no_oracle_finding(self, broken_tree, verify, tmp_path):
        rc, lines, _ = verify(pack(broken_tree, tmp_path / "broken.tar.zst"))
        assert rc == 1 and [line for line in lines if line.startswith("[verdict] ")]
        assert [line for line in lines if line.startswith("[oracle] ")] == []

    def test_a_self_reported_verdict_dressed_as_the_oracles(self, altered, verify, coded_tree):
        r = next(r for r in results_of(coded_tree) if r["verdict"] == "pass" and r["judged_by"] == "case_binary"
                 and not r["evidence"].get("captures"))
        rc, lines, _ = verify(altered(set_on_result(r["id"], judged_by="wire_oracle")))
        assert (rc, lines) == (1, [f"[oracle] {r['id']}: judged_by wire_oracle, but no rule of spec/wire-oracle.yaml "
                                   "states its case: the verdict is the case binary's own report"])

    def test_a_cell_manifest_edited_to_turn_the_rules_off(self, altered, verify, coded_tree):
        def edit(tree):
            edit_json(tree / "run" / "cells" / "softuet-hpc" / "initiator.manifest.json", lambda m: m.update(uet=False))
        rc, lines, _ = verify(altered(edit))
        assert (rc, lines) == (1, ["[oracle] run/cells/softuet-hpc/initiator.manifest.json: uet is False, but the "
                                   "package's manifest softuet-hpc gives True"])

    def test_the_real_mustpass_rederives_its_wire_checks(self, coded_tree):
        judged = [r for r in results_of(coded_tree) if r["judged_by"] == "wire_oracle"]
        assert judged and all(r["verdict"] == "pass" and r["oracle"]["outcome"] == "holds" for r in judged)
        doc = json.loads((coded_tree / "run" / "results.json").read_text())
        assert doc["wire_oracle"]["judged_by"]["wire_oracle"] == len(judged)
        assert doc["wire_oracle"]["outcomes"]["contradicted"] == 0 and doc["wire_oracle"]["binary_only"]


# message_id_zero fails every rendezvous case, whose evidence frames are requests sent while earlier ones are
# unacknowledged (uet.pds.clear_psn_offset negative, a signed field); psn_reuse fails wire checks whose evidence
# holds the target's ACK (sent to the initiator's port, not the one the kept decode was made for) and a CAS
# request (byte-string fields).
FAULTY = "message_id_zero,psn_reuse"


@pytest.fixture(scope="module")
def faulty_tree(build_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("faulty")
    (folder / "faulty.yaml").write_text(f"extends: {REPO / 'cases' / 'manifests' / 'personalities' / 'message-id-zero.yaml'}\n"
                                        f"environment:\n  SOFTUET_FAULTS: {FAULTY}\n")
    proc, package = run_certify(build_dir, folder, "--only", "rendezvous", "--only", "wire",
                                manifest=str(folder / "faulty.yaml"))
    assert proc.returncode == 1 and package, proc.stdout[-3000:] + proc.stderr[-3000:]
    return unpack(package, tmp_path_factory.mktemp("faulty-tree"))


def evidence_frames(tree):
    return [(r, f) for r in results_of(tree) for f in r["evidence"].get("frames") or []]


class TestFindingsOfAFailedRun:
    def test_evidence_frames_are_found_whatever_their_sign_port_or_bytes(self, faulty_tree, verify, tmp_path):
        frames = evidence_frames(faulty_tree)
        assert any("uet.pds.clear_psn_offset=-0x" in f["summary"] for _, f in frames)
        assert any(f["sender"] == "target" and r["evidence"].get("captures") for r, f in frames)
        assert any("uet.ses.compare_value=" in f["summary"] for _, f in frames)
        rc, lines, _ = verify(pack(faulty_tree, tmp_path / "faulty.tar.zst"))
        assert rc == 1
        assert [line for line in lines if line.startswith(("[evidence]", "[evidence-not-rechecked]"))] == []

    def test_each_failure_says_its_causes(self, faulty_tree, verify, tmp_path):
        doc = json.loads((faulty_tree / "run" / "results.json").read_text())
        failing = [r for r in doc["results"] if r["verdict"] == "fail"]
        rc, lines, _ = verify(pack(faulty_tree, tmp_path / "faulty.tar.zst"))
        verdicts = [line for line in lines if line.startswith("[verdict] ") and "exit status" not in line]
        assert verdicts == [f"[verdict] {r['id']}: fail ({causes.explain(r, doc)})" for r in failing]
        rendezvous = [line for line in verdicts if "/rendezvous/" in line]
        assert len(rendezvous) == 4 and all(
            "(faulty sends frames with invalid_value in uet.ses.message_id (value 0); faulty breaks " in line
            for line in rendezvous), rendezvous

    def test_a_tampered_evidence_frame_is_still_found_out(self, faulty_tree, altered_from, verify):
        r, frame = next((r, f) for r, f in evidence_frames(faulty_tree) if "uet.pds.clear_psn_offset=-0x" in f["summary"])
        offset = next(int(p.split("=")[1], 16) for p in frame["summary"].split() if p.startswith("uet.pds.clear_psn_offset="))
        forged = frame["summary"].replace("uet.pds.clear_psn_offset=-0x", "uet.pds.clear_psn_offset=-0x10", 1)

        def tamper(tree):
            edit_json(tree / "run" / "results.json", lambda doc: next(x for x in doc["results"] if x["id"] == r["id"])
                      ["evidence"].update(frames=[{"sender": frame["sender"], "summary": forged}]))
        rc, lines, _ = verify(altered_from(faulty_tree, tamper))
        assert rc == 1
        [line] = [line for line in lines if line.startswith("[evidence]")]
        # the frame it was forged from is the nearest: only the offset differs
        assert re.fullmatch(re.escape(f"[evidence] {r['id']}: evidence frame {forged[:120]!r} is not in its capture ")
                            + r"\(nearest: frame \d+, where " + re.escape(f"uet.pds.clear_psn_offset is {offset})"), line), line
