"""A submission package is read as a hostile sender made it: every member is judged before any byte is
written, and an unsafe one is named with why (./uet verify exits 1 and extracts nothing)."""
import io
import pathlib
import subprocess
import sys
import tarfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from harness import package_archive  # noqa: E402
from harness.package_archive import Limits, UnreadablePackage  # noqa: E402


def tar_of(path: pathlib.Path, *members: tuple[tarfile.TarInfo, bytes]) -> pathlib.Path:
    """A .tar.zst of hand-made members."""
    raw = path.with_suffix("")
    with tarfile.open(raw, "w", format=tarfile.GNU_FORMAT) as tar:
        for info, data in members:
            info.size = len(data) if info.isfile() else 0
            tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
    subprocess.run(["zstd", "-q", "-f", "--rm", str(raw), "-o", str(path)], check=True)
    return path


def member(name, kind=tarfile.REGTYPE, link=""):
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info


def problems_of(package: pathlib.Path, tmp: pathlib.Path, limits=Limits()):
    with package_archive.open_tar(package_archive.decompress(package, tmp, limits)) as tar:
        return package_archive.unsafe_members(tar, limits)


class TestUnsafeMembers:
    def test_path_that_climbs_out(self, tmp_path):
        pkg = tar_of(tmp_path / "p.tar.zst", (member("run/../../evil"), b"x"))
        assert problems_of(pkg, tmp_path) == ["member 'run/../../evil': a path that climbs out (..)"]

    def test_absolute_path(self, tmp_path):
        pkg = tar_of(tmp_path / "p.tar.zst", (member("/etc/evil"), b"x"))
        assert problems_of(pkg, tmp_path) == ["member '/etc/evil': an absolute path"]

    def test_symbolic_link(self, tmp_path):
        pkg = tar_of(tmp_path / "p.tar.zst", (member("run/results.json", tarfile.SYMTYPE, "/etc/shadow"), b""))
        assert problems_of(pkg, tmp_path) == ["member 'run/results.json': a symbolic link (to '/etc/shadow')"]

    def test_hard_link(self, tmp_path):
        pkg = tar_of(tmp_path / "p.tar.zst", (member("suite.json", tarfile.LNKTYPE, "../../etc/passwd"), b""))
        assert problems_of(pkg, tmp_path) == ["member 'suite.json': a hard link (to '../../etc/passwd')"]

    def test_device(self, tmp_path):
        pkg = tar_of(tmp_path / "p.tar.zst", (member("run/dev", tarfile.CHRTYPE), b""))
        assert problems_of(pkg, tmp_path) == ["member 'run/dev': a device"]

    def test_fifo(self, tmp_path):
        pkg = tar_of(tmp_path / "p.tar.zst", (member("run/pipe", tarfile.FIFOTYPE), b""))
        assert problems_of(pkg, tmp_path) == ["member 'run/pipe': a FIFO"]

    def test_member_over_the_size_limit(self, tmp_path):
        pkg = tar_of(tmp_path / "p.tar.zst", (member("run/big.pcap"), b"x" * 2000))
        assert problems_of(pkg, tmp_path, Limits(member_bytes=1000)) == \
            ["member 'run/big.pcap': 2000 bytes (more than the limit of 1000)"]

    def test_too_many_members(self, tmp_path):
        pkg = tar_of(tmp_path / "p.tar.zst", *[(member(f"f{i}"), b"") for i in range(4)])
        assert problems_of(pkg, tmp_path, Limits(members=3)) == ["more than 3 members (the limit of a package)"]

    def test_member_given_twice(self, tmp_path):
        pkg = tar_of(tmp_path / "p.tar.zst", (member("suite.json"), b"a"), (member("./suite.json"), b"b"))
        assert problems_of(pkg, tmp_path) == ["member './suite.json': appears twice (the second would replace the first)"]

    def test_plain_members_are_safe_and_extracted_inside(self, tmp_path):
        pkg = tar_of(tmp_path / "p.tar.zst", (member("run", tarfile.DIRTYPE), b""), (member("run/a.json"), b"{}"))
        with package_archive.open_tar(package_archive.decompress(pkg, tmp_path, Limits())) as tar:
            assert package_archive.unsafe_members(tar, Limits()) == []
            dest = tmp_path / "out"
            assert package_archive.extract_files(tar, dest) == ["run/a.json"]
        assert (dest / "run" / "a.json").read_bytes() == b"{}"


class TestUnreadable:
    def test_decompressed_size_over_the_limit(self, tmp_path):
        pkg = tar_of(tmp_path / "p.tar.zst", (member("run/zeros"), bytes(1 << 20)))
        with pytest.raises(UnreadablePackage, match=r"decompresses to more than 65536 bytes \(the limit of a package\)"):
            package_archive.decompress(pkg, tmp_path, Limits(archive_bytes=65536))

    def test_not_zstd(self, tmp_path):
        pkg = tmp_path / "p.tar.zst"
        pkg.write_bytes(b"not a package")
        with pytest.raises(UnreadablePackage, match=r"p.tar.zst: not zstd-compressed data"):
            package_archive.decompress(pkg, tmp_path, Limits())

    def test_zstd_but_not_tar(self, tmp_path):
        raw = tmp_path / "p.tar"
        raw.write_bytes(b"\x01" * 3000)
        subprocess.run(["zstd", "-q", "--rm", str(raw)], check=True)
        with pytest.raises(UnreadablePackage, match="not a tar archive inside the zstd stream"):
            package_archive.open_tar(package_archive.decompress(tmp_path / "p.tar.zst", tmp_path, Limits()))

    def test_missing_file(self, tmp_path):
        with pytest.raises(UnreadablePackage, match="nope.tar.zst: no such file"):
            package_archive.decompress(tmp_path / "nope.tar.zst", tmp_path, Limits())
