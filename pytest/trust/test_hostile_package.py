"""./uet verify reads a package a stranger sent (issue 34: finding 3, and the odd packages of its low
findings). Each package here is one a hostile sender could make in a few hundred bytes; verify runs on it in
a process of its own whose files may not grow past 64 MiB and whose TMPDIR is the test's (so what once filled
the disk fails at once). It must refuse the package with exit 2 and one line naming the member and the limit
of harness/certify/package_limits.py, or name an unsafe member (exit 1), before writing out what the package would
make of the disk: never a traceback."""
import json
import pathlib
import subprocess
import tarfile

REPO = pathlib.Path(__file__).resolve().parents[2]

from harness.certify.package_limits import Limits  # noqa: E402

LIMITS = Limits()
HOLE = 2 << 30


def refused(package: pathlib.Path, why: str) -> str:
    return f"uet verify: refused package {package}: {why}\n"


def zstd_frame(data: bytes) -> bytes:
    return subprocess.run(["zstd", "-q", "-c"], input=data, capture_output=True, check=True).stdout


class TestSparseMembers:
    def test_holes_that_would_fill_the_disk_are_refused_before_a_byte_is_written(self, tmp_path, confined_verify):
        files = tmp_path / "holes"
        files.mkdir()
        for i in range(8):  # 8 x 2 GiB, all holes: nothing on this disk
            with open(files / f"hole-{i}", "wb") as f:
                f.truncate(HOLE)
        package = tmp_path / "sparse.tar.zst"
        subprocess.run(["tar", "--sparse", "--format=gnu", "--zstd", "-cf", str(package), "-C", str(files),
                        *[f"hole-{i}" for i in range(8)]], check=True)
        assert package.stat().st_size < 400
        proc = confined_verify(package)
        assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", refused(
            package, f"member 'hole-0': a sparse file ({HOLE} bytes once written out, 0 in the archive): "
                     "./uet certify never writes one"))
        assert list((tmp_path / "verify-tmp").iterdir()) == []


class TestBombs:
    def test_9_gib_of_zeros_in_a_member_is_refused_from_its_header(self, tmp_path, confined_verify):
        header = tarfile.TarInfo("run/zeros.pcap")
        header.size = 9 << 30
        zeros = zstd_frame(bytes(64 << 20))
        package = tmp_path / "bomb.tar.zst"
        package.write_bytes(zstd_frame(header.tobuf(tarfile.GNU_FORMAT)) + zeros * (header.size >> 26))
        assert package.stat().st_size < 1 << 20
        proc = confined_verify(package)
        assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", refused(
            package, f"member 'run/zeros.pcap': its size in bytes ({9 << 30}): over the package limit member_bytes "
                     f"({LIMITS.member_bytes})"))


class TestOddMembers:
    def test_a_member_that_is_a_file_and_a_folder(self, hand_made_package, confined_verify, tmp_path):
        package = hand_made_package(("run", b"a file"), ("run/results.json", b"{}"))
        proc = confined_verify(package)
        assert (proc.returncode, proc.stderr) == (1, "")
        assert proc.stdout.splitlines()[0] == \
            "uet verify: [unsafe-member] member 'run/results.json': inside 'run', which is a file of the package"
        report = json.loads((tmp_path / "report" / "verification.json").read_text())
        assert (report["verdict"], len(report["findings"])) == ("INVALID: 1 finding(s) (unsafe-member)", 1)

    def test_a_name_longer_than_a_file_system_allows(self, hand_made_package, confined_verify):
        name = "run/" + "n" * 300
        package = hand_made_package((name, b"{}"))
        proc = confined_verify(package)
        assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", refused(
            package, f"member {name!r}: a file or folder name of more bytes (300): over the package limit "
                     f"name_part_bytes ({LIMITS.name_part_bytes})"))

    def test_json_nested_100000_deep(self, hand_made_package, confined_verify):
        package = hand_made_package(("suite.json", b"[" * 100_000 + b"]" * 100_000))
        proc = confined_verify(package)
        assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", refused(
            package, f"suite.json: JSON nested deeper: over the package limit json_depth ({LIMITS.json_depth})"))

    def test_json_nested_deeper_than_the_limit_but_not_the_parser(self, hand_made_package, confined_verify):
        depth = LIMITS.json_depth + 1
        package = hand_made_package(("mustpass.json", b"[" * depth + b"]" * depth))
        proc = confined_verify(package)
        assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", refused(
            package, f"mustpass.json: JSON nested deeper: over the package limit json_depth ({LIMITS.json_depth})"))
