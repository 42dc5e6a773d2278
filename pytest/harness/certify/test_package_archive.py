"""A submission package is read as a hostile sender made it: every member is judged from its header before
any byte of it is written; an unsafe one is named with why (./uet verify exits 1), and one over a limit of
harness/certify/package_limits.py is refused naming the limit (exit 2)."""
import io
import pathlib
import subprocess
import tarfile

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
from harness.certify import package_archive  # noqa: E402
from harness.certify.package_archive import Limits, PackageRefused, UnreadablePackage  # noqa: E402


def problems_of(package: pathlib.Path, tmp: pathlib.Path, limits=Limits()):
    return package_archive.extract(package, tmp / "out", limits)[1]


def refusal(package: pathlib.Path, tmp: pathlib.Path, limits=Limits()) -> str:
    with pytest.raises(PackageRefused) as refused:
        package_archive.extract(package, tmp / "out", limits)
    return str(refused.value)


class TestUnsafeMembers:
    def test_path_that_climbs_out(self, hand_made_package, tmp_path):
        pkg = hand_made_package(("run/../../evil", b"x"))
        assert problems_of(pkg, tmp_path) == ["member 'run/../../evil': a path that climbs out (..)"]

    def test_absolute_path(self, hand_made_package, tmp_path):
        pkg = hand_made_package(("/etc/evil", b"x"))
        assert problems_of(pkg, tmp_path) == ["member '/etc/evil': an absolute path"]

    def test_symbolic_link(self, hand_made_package, tmp_path):
        pkg = hand_made_package(("run/results.json", b"", tarfile.SYMTYPE, "/etc/shadow"))
        assert problems_of(pkg, tmp_path) == ["member 'run/results.json': a symbolic link (to '/etc/shadow')"]

    def test_hard_link(self, hand_made_package, tmp_path):
        pkg = hand_made_package(("suite.json", b"", tarfile.LNKTYPE, "../../etc/passwd"))
        assert problems_of(pkg, tmp_path) == ["member 'suite.json': a hard link (to '../../etc/passwd')"]

    def test_device(self, hand_made_package, tmp_path):
        pkg = hand_made_package(("run/dev", b"", tarfile.CHRTYPE))
        assert problems_of(pkg, tmp_path) == ["member 'run/dev': a device"]

    def test_fifo(self, hand_made_package, tmp_path):
        pkg = hand_made_package(("run/pipe", b"", tarfile.FIFOTYPE))
        assert problems_of(pkg, tmp_path) == ["member 'run/pipe': a FIFO"]

    def test_member_given_twice(self, hand_made_package, tmp_path):
        pkg = hand_made_package(("suite.json", b"a"), ("./suite.json", b"b"))
        assert problems_of(pkg, tmp_path) == ["member './suite.json': appears twice (the second would replace the first)"]

    def test_file_then_a_member_inside_it(self, hand_made_package, tmp_path):
        pkg = hand_made_package(("run", b"a file"), ("run/results.json", b"{}"))
        assert problems_of(pkg, tmp_path) == ["member 'run/results.json': inside 'run', which is a file of the package"]

    def test_member_inside_then_a_file_of_its_folder_name(self, hand_made_package, tmp_path):
        pkg = hand_made_package(("run/results.json", b"{}"), ("run", b"a file"))
        assert problems_of(pkg, tmp_path) == ["member 'run': a file, and a folder of other members"]

    def test_nothing_is_written_after_an_unsafe_member(self, hand_made_package, tmp_path):
        pkg = hand_made_package(("a.json", b"{}"), ("/etc/evil", b"x"), ("b.json", b"{}"))
        assert package_archive.extract(pkg, tmp_path / "out") == (["a.json"], ["member '/etc/evil': an absolute path"])
        assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.json"]

    def test_plain_members_are_safe_and_extracted_inside(self, hand_made_package, tmp_path):
        pkg = hand_made_package(("run", b"", tarfile.DIRTYPE), ("run/a.json", b"{}"))
        assert package_archive.extract(pkg, tmp_path / "out") == (["run/a.json"], [])
        assert (tmp_path / "out" / "run" / "a.json").read_bytes() == b"{}"


class TestOverALimit:
    """Refused before the member is read: what it would take is known from its header."""

    def test_member_over_the_size_limit(self, hand_made_package, tmp_path):
        pkg = hand_made_package(("run/big.pcap", b"x" * 2000))
        assert refusal(pkg, tmp_path, Limits(member_bytes=1000)) == \
            "member 'run/big.pcap': its size in bytes (2000): over the package limit member_bytes (1000)"
        assert not (tmp_path / "out" / "run").exists()

    def test_members_together_over_the_extracted_limit(self, hand_made_package, tmp_path):
        pkg = hand_made_package(*[(f"run/{i}.pcap", b"x" * 400) for i in range(4)])
        assert refusal(pkg, tmp_path, Limits(extracted_bytes=1000)) == \
            "member 'run/2.pcap': the members so far would write out bytes (1200): over the package limit extracted_bytes (1000)"
        assert sorted(p.name for p in (tmp_path / "out" / "run").iterdir()) == ["0.pcap", "1.pcap"]

    def test_too_many_members(self, hand_made_package, tmp_path):
        pkg = hand_made_package(*[(f"f{i}", b"") for i in range(4)])
        assert refusal(pkg, tmp_path, Limits(members=3)) == "the package: members so far (4): over the package limit members (3)"

    def test_name_part_longer_than_a_file_system_allows(self, hand_made_package, tmp_path):
        name = "run/" + "n" * 300 + ".json"
        assert refusal(hand_made_package((name, b"{}")), tmp_path) == \
            f"member {name!r}: a file or folder name of more bytes (305): over the package limit name_part_bytes (255)"

    def test_long_name_record_over_the_name_limit(self, hand_made_package, tmp_path):
        pkg = hand_made_package(("/".join(["d" * 200] * 8), b"{}"))
        assert refusal(pkg, tmp_path) == \
            "a GNU long-name record (before member 1) of more bytes (1608): over the package limit name_bytes (1024)"

    def test_tar_stream_over_its_limit(self, hand_made_package, tmp_path):
        pkg = hand_made_package(("run/zeros", bytes(1 << 20)))
        assert refusal(pkg, tmp_path, Limits(tar_bytes=65536)) == \
            "p.tar.zst: bytes of its tar stream so far (71680): over the package limit tar_bytes (65536)"

    def test_a_chain_of_long_name_records(self, tmp_path):
        record = tarfile.TarInfo("././@LongLink")
        record.type, record.size = tarfile.GNUTYPE_LONGNAME, 512
        raw = tmp_path / "p.tar"
        raw.write_bytes((record.tobuf(tarfile.GNU_FORMAT) + b"n" * 511 + b"\0") * 5000 + bytes(1024))
        subprocess.run(["zstd", "-q", "--rm", str(raw)], check=True)
        assert refusal(tmp_path / "p.tar.zst", tmp_path) == "a chain of GNU long-name records (before member 1)"

    def test_pax_header(self, tmp_path):
        raw = tmp_path / "p.tar"
        with tarfile.open(raw, "w", format=tarfile.PAX_FORMAT) as tar:
            info = tarfile.TarInfo("run/a.json")
            info.pax_headers, info.size = {"comment": "x" * 100}, 2
            tar.addfile(info, io.BytesIO(b"{}"))
        subprocess.run(["zstd", "-q", "--rm", str(raw)], check=True)
        assert refusal(tmp_path / "p.tar.zst", tmp_path) == \
            "a pax extended header (before member 1): a package is a GNU-format tar, as ./uet certify writes it"


class TestUnreadable:
    def test_not_zstd(self, tmp_path):
        pkg = tmp_path / "p.tar.zst"
        pkg.write_bytes(b"not a package")
        with pytest.raises(UnreadablePackage, match=r"p.tar.zst: not zstd-compressed data"):
            package_archive.extract(pkg, tmp_path / "out")

    def test_zstd_but_not_tar(self, tmp_path):
        raw = tmp_path / "p.tar"
        raw.write_bytes(b"\x01" * 3000)
        subprocess.run(["zstd", "-q", "--rm", str(raw)], check=True)
        with pytest.raises(UnreadablePackage, match="p.tar.zst: not a tar archive inside the zstd stream"):
            package_archive.extract(tmp_path / "p.tar.zst", tmp_path / "out")

    def test_zstd_cut_short(self, hand_made_package, tmp_path):
        pkg = hand_made_package(("run/a.json", bytes(range(256)) * 400))
        pkg.write_bytes(pkg.read_bytes()[:-200])
        with pytest.raises(UnreadablePackage, match=r"p.tar.zst: not zstd-compressed data \(.*p.tar.zst : Read error"):
            package_archive.extract(pkg, tmp_path / "out")

    def test_missing_file(self, tmp_path):
        with pytest.raises(UnreadablePackage, match="nope.tar.zst: no such file"):
            package_archive.extract(tmp_path / "nope.tar.zst", tmp_path / "out")
