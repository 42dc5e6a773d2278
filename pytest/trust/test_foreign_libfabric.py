"""Issue 34, finding 2: root ran code another user controls. `./uet manifest init --libfabric PREFIX` ran the
bin/fi_info of a prefix nobody made, as root; `./uet run --libfabric PREFIX` (and a manifest's `libfabric:`)
took compiler flags from its libfabric.pc, and a `-fplugin=` there loaded a GCC plugin into root's compiles.
Now, as root, a prefix another user can change (owned by them, writable by group or others, or a folder on the
way to it that is) is bad usage naming the path, its owner and mode, unless --trust-foreign-libfabric, which
the run records; and a .pc flag other than -I, -L, -l, -D, -pthread and -Wl,-rpath,DIR is refused whoever owns
it. Both are answered before any set-up or build (the run's --check-usage, which ./uet asks first)."""
import json
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

from harness.inputs import libfabric_prefix, manifest_init  # noqa: E402

from harness.run import execute, run_suite

SOFTUET = REPO / "cases" / "manifests" / "softuet.yaml"
UDP = REPO / "cases" / "manifests" / "udp.yaml"
ADVICE = ("(make it root's and writable by root alone, e.g. chown -R root: and chmod -R go-w, with every folder above "
          "it; or give --trust-foreign-libfabric to use it anyway, which the run's results and a certify package "
          "record)")
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the hostile side runs as nobody, the victim is root")


@pytest.fixture
def init(capsys):
    """init(*args) -> (exit status, stderr) of ./uet manifest init."""
    def run(*args):
        capsys.readouterr()
        rc = manifest_init.main([*map(str, args)])
        return rc, capsys.readouterr().err
    return run


class TestAPrefixNobodyMade:
    def test_manifest_init_does_not_run_its_fi_info(self, nobodys_libfabric, shared_tmp, init):
        # Before: fi_info ran as root (the marker said 0) and init went on with what it printed.
        marker = shared_tmp / "fi_info-ran-as"
        prefix = nobodys_libfabric(fi_info=f"id -u >> {marker}; exit 1")
        rc, err = init("--provider", "tcp", "--libfabric", prefix)
        assert (rc, marker.exists()) == (2, False), err
        assert err.splitlines()[:2] == [f"manifest init: {prefix} is not root's alone: root would run, load or build "
                                        "with what another user can change:",
                                        f"  {prefix} is owned by uid 65534 (nobody), mode 0755"]
        assert err.splitlines()[-1] == ADVICE

    def test_manifest_init_runs_it_when_trusted(self, nobodys_libfabric, shared_tmp, init):
        marker = shared_tmp / "fi_info-ran-as"
        prefix = nobodys_libfabric(fi_info=f"id -u >> {marker}; exit 1")
        init("--provider", "tcp", "--libfabric", prefix, "--trust-foreign-libfabric")
        assert set(marker.read_text().split()) == {"0"}  # it ran, as root

    def test_the_run_refuses_it_before_any_build(self, nobodys_libfabric, check_usage):
        # Before: exit 0 and the tree line that ./uet then built with the prefix's .pc.
        prefix = nobodys_libfabric()
        rc, out, err = check_usage("--libfabric", prefix, "--provider", SOFTUET)
        assert (rc, out) == (2, "")
        shown = err.splitlines()
        assert shown[0] == (f"uet run: --libfabric {prefix}: {prefix} is not root's alone: root would run, load or "
                            "build with what another user can change:")
        assert shown[1:7] == [f"  {prefix} is owned by uid 65534 (nobody), mode 0755",
                              f"  {prefix}/bin is owned by uid 65534 (nobody), mode 0755",
                              f"  {prefix}/include is owned by uid 65534 (nobody), mode 0755",
                              f"  {prefix}/lib is owned by uid 65534 (nobody), mode 0755",
                              f"  {prefix}/lib/libfabric.so is owned by uid 65534 (nobody), mode 0644",
                              "  and 5 more"]
        assert shown[7:] == [ADVICE]

    def test_a_manifests_libfabric_is_refused_naming_the_manifest(self, nobodys_libfabric, check_usage, tmp_path):
        prefix = nobodys_libfabric()
        vendor = tmp_path / "vendor.yaml"
        vendor.write_text(f"extends: {SOFTUET}\nname: vendor\nlibfabric: {prefix}\n")
        rc, _, err = check_usage("--provider", vendor)
        assert rc == 2
        assert err.splitlines()[0] == (f"uet run: {vendor}: libfabric: {prefix} is not root's alone: root would run, "
                                       "load or build with what another user can change:")

    def test_certify_refuses_a_manifests_libfabric_as_bad_usage(self, nobodys_libfabric, tmp_path, capsys):
        # Before: certify's --check-usage passed it, and the run it then started refused it: exit 3, not 2.
        from harness.certify import certify
        prefix = nobodys_libfabric()
        vendor = tmp_path / "vendor.yaml"
        vendor.write_text(f"extends: {SOFTUET}\nname: vendor\nlibfabric: {prefix}\n")
        capsys.readouterr()
        rc = certify.main(["--provider", str(vendor), "--check-usage"])
        err = capsys.readouterr().err
        assert rc == 2
        assert err.splitlines()[0] == (f"uet certify: {vendor}: libfabric: {prefix} is not root's alone: root would "
                                       "run, load or build with what another user can change:")

    def test_certify_takes_libfabric_and_refuses_nobodys(self, nobodys_libfabric, capsys):
        # Issue 35, item 9: certify had no --libfabric at all (exit 2: unrecognized arguments).
        from harness.certify import certify
        prefix = nobodys_libfabric()
        capsys.readouterr()
        rc = certify.main(["--provider", str(SOFTUET), "--libfabric", str(prefix), "--check-usage"])
        assert (rc, capsys.readouterr().err.splitlines()[0]) == (
            2, f"uet certify: --libfabric {prefix}: {prefix} is not root's alone: root would run, load or build with "
               "what another user can change:")

    def test_certify_names_the_tree_its_libfabric_needs_and_passes_it_to_the_run(self, root_libfabric, capsys,
                                                                                 monkeypatch, tmp_path):
        from harness.certify import certify
        prefix = root_libfabric()
        capsys.readouterr()
        assert certify.main(["--provider", str(SOFTUET), "--libfabric", str(prefix), "--check-usage"]) == 0
        lf = libfabric_prefix.check(prefix)
        # all of build/ first (the package names the suite by its binaries' hashes), then the prefix's tree
        suite_tree, tree_line = capsys.readouterr().out.splitlines()
        assert (suite_tree, tree_line.split("\t")[:2]) == \
            ("uet-run", [str(REPO / "build-libfabric" / lf.key), str(prefix)])
        ran = []
        monkeypatch.setattr(certify.run_suite_mod, "run", lambda plan: ran.append(plan) or (0, None))
        args = certify.parse_args(["--provider", str(SOFTUET), "--libfabric", str(prefix)])
        certify.run_suite(args, tmp_path, ["manifests/softuet.yaml"], 7, tmp_path / "runs")
        assert (ran[0].libfabric, ran[0].command.split("--libfabric ")[1]) == (prefix, str(prefix))

    def test_the_opt_in_lets_it_through(self, nobodys_libfabric, check_usage):
        prefix = nobodys_libfabric()
        rc, out, err = check_usage("--libfabric", prefix, "--provider", SOFTUET, "--trust-foreign-libfabric")
        lf = libfabric_prefix.check(prefix, trust_foreign=True)
        assert (rc, err) == (0, "")
        suite_tree, tree_line = out.splitlines()
        assert (suite_tree, tree_line.split("\t")[:2]) == \
            ("uet-tools", [str(REPO / "build-libfabric" / lf.key), str(prefix)])
        assert lf.foreign[0] == f"{prefix} is owned by uid 65534 (nobody), mode 0755" and len(lf.foreign) == 10


class TestWhatRootMayUse:
    def test_a_prefix_root_owns_passes(self, root_libfabric):
        assert libfabric_prefix.check(root_libfabric()).foreign == ()

    def test_a_group_writable_folder_in_it_is_refused(self, root_libfabric):
        prefix = root_libfabric()
        (prefix / "lib").chmod(0o775)
        with pytest.raises(libfabric_prefix.PrefixError) as err:
            libfabric_prefix.check(prefix)
        assert str(err.value) == (f"{prefix} is not root's alone: root would run, load or build with what another "
                                  f"user can change:\n  {prefix}/lib is writable by its group (owner uid 0 (root), "
                                  f"gid 0, mode 0775)\n{ADVICE}")

    def test_a_folder_above_it_others_may_write_is_refused(self, root_libfabric):
        prefix = root_libfabric("open/lf")
        prefix.parent.chmod(0o777)
        with pytest.raises(libfabric_prefix.PrefixError) as err:
            libfabric_prefix.check(prefix)
        assert str(err.value).splitlines()[1] == (f"  {prefix.parent} is writable by its group and others (owner "
                                                  "uid 0 (root), gid 0, mode 0777)")

    def test_a_sticky_folder_above_it_is_not(self, root_libfabric, shared_tmp):
        # /tmp's kind: others may add names to it, not move root's prefix away.
        assert libfabric_prefix.check(root_libfabric(under=shared_tmp)).foreign == ()

    def test_a_link_in_it_to_a_library_nobody_owns_is_refused(self, root_libfabric, shared_tmp, as_nobody):
        prefix = root_libfabric()
        as_nobody("touch", shared_tmp / "libfabric.so.1")
        (prefix / "lib" / "libfabric.so").unlink()
        (prefix / "lib" / "libfabric.so").symlink_to(shared_tmp / "libfabric.so.1")
        with pytest.raises(libfabric_prefix.PrefixError) as err:
            libfabric_prefix.check(prefix)
        assert str(err.value).splitlines()[1] == f"  {shared_tmp}/libfabric.so.1 is owned by uid 65534 (nobody), mode 0644"

    def test_a_provider_nobody_put_in_its_dl_folder_is_refused(self, root_libfabric, shared_tmp, as_nobody):
        prefix = root_libfabric()
        (prefix / "lib" / "libfabric").mkdir()
        as_nobody("touch", shared_tmp / "libevil-fi.so")
        os.link(shared_tmp / "libevil-fi.so", prefix / "lib" / "libfabric" / "libevil-fi.so")
        with pytest.raises(libfabric_prefix.PrefixError, match=r"lib/libfabric/libevil-fi.so is owned by uid 65534"):
            libfabric_prefix.check(prefix)

    def test_an_include_folder_nobody_owns_named_by_its_pc_is_refused(self, root_libfabric, shared_tmp, as_nobody):
        as_nobody("mkdir", shared_tmp / "inc")
        prefix = root_libfabric(cflags=f"-I${{includedir}} -I{shared_tmp / 'inc'}")
        with pytest.raises(libfabric_prefix.PrefixError) as err:
            libfabric_prefix.check(prefix)
        assert str(err.value).splitlines()[1] == f"  {shared_tmp}/inc is owned by uid 65534 (nobody), mode 0755"


class TestPcFlags:
    """Refused whoever owns the prefix, and --trust-foreign-libfabric does not let them through."""

    @pytest.mark.parametrize("flag", ["-fplugin=/opt/x/evil.so", "-B/opt/x", "-specs=/opt/x/specs", "@/opt/x/options",
                                      "-Wl,-rpath,/opt/x,-plugin,/opt/x/evil.so", "/opt/x/evil.o", "-I"])
    def test_a_flag_that_reaches_the_compiler_is_refused(self, root_libfabric, check_usage, flag):
        # Before: accepted, and ./uet built the case binaries with it (a -fplugin ran in 89 compiles as root).
        prefix = root_libfabric(cflags=f"-I${{includedir}} {flag}")
        rc, out, err = check_usage("--libfabric", prefix, "--provider", SOFTUET)
        assert (rc, out) == (2, "")
        assert err == (f"uet run: --libfabric {prefix}: {prefix}/lib/pkgconfig/libfabric.pc: Cflags: the flag "
                       f"{flag!r} is refused: a .pc file's flags reach every compile and link the suite runs as root, "
                       "so it takes only -I, -L, -l, -D, -pthread and -Wl,-rpath,DIR\n")

    def test_the_opt_in_does_not_let_one_through(self, root_libfabric, check_usage):
        prefix = root_libfabric(cflags="-I${includedir} -fplugin=/opt/x/evil.so")
        rc, out, err = check_usage("--libfabric", prefix, "--provider", SOFTUET, "--trust-foreign-libfabric")
        assert (rc, out) == (2, "") and "the flag '-fplugin=/opt/x/evil.so' is refused" in err

    def test_another_pc_file_beside_it_is_read_too(self, root_libfabric):
        # Its folder comes first in PKG_CONFIG_PATH: the build's libpcap and sqlite3 would be read from it.
        prefix = root_libfabric(others={"libpcap.pc": "Name: libpcap\nVersion: 1.10\nLibs: -lpcap -fplugin=/opt/x.so\n"})
        with pytest.raises(libfabric_prefix.PrefixError) as err:
            libfabric_prefix.check(prefix, trust_foreign=True)
        assert str(err.value).startswith(f"{prefix}/lib/pkgconfig/libpcap.pc: Libs: the flag '-fplugin=/opt/x.so' is refused")

    def test_the_flags_a_libfabric_installs_pass(self, root_libfabric):
        prefix = root_libfabric(cflags="-I${includedir} -DFI_X=1 -pthread",
                                others={"x.pc": "Libs: -L/usr/lib -lfabric -l:libatomic.so.1 -Wl,-rpath,/usr/lib\n"})
        assert libfabric_prefix.check(prefix).version == "2.1.0"

    def test_the_suites_own_libfabric_passes(self):
        own = libfabric_prefix.suite_prefix()
        if not (own / "lib" / "pkgconfig" / "libfabric.pc").exists():
            pytest.skip(f"no libfabric at {own} (./uet setup builds it)")
        assert libfabric_prefix.check(own).foreign == ()


class TestTheOptInIsRecorded:
    def test_a_link_nobody_owns_is_refused_and_the_opt_in_recorded(self, build_dir, shared_tmp, as_nobody, tmp_path,
                                                                    check_usage):
        """A link nobody made (nobody may point it elsewhere, though the folder is sticky) to the suite's own
        libfabric: refused; with the opt-in the run goes on (the suite's own build serves it) and results.json
        says what the opt-in let through."""
        link = shared_tmp / "lf"
        as_nobody("ln", "-s", libfabric_prefix.suite_prefix().resolve(), link)
        rc, _, err = check_usage("--libfabric", link, "--provider", UDP)
        assert rc == 2 and err.splitlines()[1] == f"  {link} is a link owned by uid 65534 (nobody)"
        rc = run_suite.main(["--provider", str(UDP), "--libfabric", str(link), "--trust-foreign-libfabric", "--only",
                             "av", "--same-host", "--no-decode-check", "--seed", "7", "--quiet",
                             "--build", str(build_dir), "--report", str(tmp_path / "runs")])
        info = json.loads((tmp_path / "runs" / "latest" / "results.json").read_text())["run_info"]
        assert (rc, info["opt_ins"]) == (0, [{"option": "--trust-foreign-libfabric",
                                              "let_through": [f"{link}: {link} is a link owned by uid 65534 (nobody)"]}])

    def test_no_opt_in_no_record(self, check_usage):
        assert execute.opt_ins(run_suite.parse_args(["--provider", str(UDP)]), []) == []
