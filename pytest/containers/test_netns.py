"""containers.netns: namespace pairs come up reachable, run commands, impair, capture and clean up.

Runs as root (network namespaces need it); every wait is bounded by a timeout, none is a sleep.
"""
import ipaddress
import json
import os
import pathlib
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import textwrap

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

from containers import host, netns  # noqa: E402
from containers.host import HostLock  # noqa: E402
from containers.impair import LOSS_CYCLE, counted_drops  # noqa: E402
from containers.netns import NamespaceError, NamespacePair  # noqa: E402

# alone: these tests pick a free pair index before making a pair by hand, and count the stale pairs of the
# whole host; a pair another worker makes in between would be taken for theirs.
pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root (CAP_SYS_ADMIN)"),
              pytest.mark.alone]

PY = sys.executable
PROBE = str(REPO / "containers" / "probe.py")
UET_PORT = 4793
MARKER_PORT = 4794
OTHER_PORT = 4795

# A UDP echo server and client, independent of containers/probe.py, for the reachability checks.
ECHO = textwrap.dedent("""
    import socket, sys
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind(("::", int(sys.argv[1])))
    s.settimeout(float(sys.argv[2]))
    print("ready", flush=True)
    for _ in range(int(sys.argv[3])):
        data, src = s.recvfrom(2048)
        s.sendto(b"echo:" + data, src)
""")
CLIENT = textwrap.dedent("""
    import json, socket, sys
    host, port = sys.argv[1], int(sys.argv[2])
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(float(sys.argv[3]))
    s.sendto(b"hello " + host.encode(), (host, port))
    data, src = s.recvfrom(2048)
    print(json.dumps({"reply": data.decode(), "from": src[0]}))
""")


def read_line(proc, timeout=10.0):
    """First line of proc.stdout within timeout (os.read on the raw pipe, never a blocking readline)."""
    fd = proc.stdout.fileno()
    buf = b""
    while b"\n" not in buf:
        ready, _, _ = select.select([fd], [], [], timeout)
        assert ready, f"no line from {proc.args} within {timeout} s (got {buf!r})"
        chunk = os.read(fd, 4096)
        assert chunk, f"{proc.args} closed stdout before a line: {buf!r}, rc={proc.wait(timeout=5)}"
        buf += chunk
    return buf.decode()


def last_json(text):
    return json.loads(text.strip().splitlines()[-1])


def transfer(pair, count, src="a", dst="b", family=4, port=UET_PORT, size=64, recv_timeout=10.0):
    """Send ``count`` datagrams src -> dst:port, then markers to MARKER_PORT; the receiver's JSON result."""
    host = pair[dst].ipv4 if family == 4 else pair[dst].ipv6
    recv = pair.popen(dst, [PY, "-I", PROBE, "recv", "--port", port, "--marker-port", MARKER_PORT,
                            "--timeout", recv_timeout], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        first = read_line(recv)
        assert json.loads(first)["event"] == "ready"
        sent = pair.run(src, [PY, "-I", PROBE, "send", "--host", host, "--port", port, "--marker-port",
                              MARKER_PORT, "--count", count, "--size", size],
                        capture_output=True, text=True, timeout=30)
        assert sent.returncode == 0, sent.stderr
        assert last_json(sent.stdout)["sent"] == count
        out, err = recv.communicate(timeout=recv_timeout + 10)
    finally:
        if recv.poll() is None:
            recv.kill()
            recv.wait()
    assert recv.returncode == 0, err
    return last_json(out.decode())


def round_trip(pair, src, dst_host, port=7007):
    """One UDP datagram src -> dst_host and its echo back; returns the client's JSON."""
    dst = "b" if src == "a" else "a"
    server = pair.popen(dst, [PY, "-I", "-c", ECHO, port, 5, 1], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert read_line(server).strip() == "ready"
        client = pair.run(src, [PY, "-I", "-c", CLIENT, dst_host, port, 5], capture_output=True, text=True)
        assert client.returncode == 0, client.stderr
        server.wait(timeout=5)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    return json.loads(client.stdout)


def ip_json(netns_name, *args):
    proc = subprocess.run(["ip", "-j", "-n", netns_name, *args], capture_output=True, text=True, timeout=10)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def dead_pid():
    """The PID of a child that has exited and been reaped."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def free_index():
    used = netns.used_indexes()
    return max(i for i in range(1, netns.MAX_INDEX + 1) if i not in used)


def add_fake_pair(owner, index=None):
    """Namespaces named like a pair (with a veth between them), as a crashed run would leave; at a free index
    (None) taken under the host lock, as a real pair takes one, so that no run beside this one takes it too."""
    with HostLock():
        return _add_fake_pair(owner, free_index() if index is None else index)


def _add_fake_pair(owner, index):
    names = [f"uet-{owner}-{index}-a", f"uet-{owner}-{index}-b"]
    for name in names:
        subprocess.run(["ip", "netns", "add", name], check=True, timeout=10)
    subprocess.run(["ip", "link", "add", f"uetv{index}a", "netns", names[0], "type", "veth",
                    "peer", "name", f"uetv{index}b", "netns", names[1]], check=True, timeout=10)
    return names


def read_pcap(path):
    """(linktype, [frame bytes]) of a classic pcap file (either byte order, us or ns timestamps)."""
    data = pathlib.Path(path).read_bytes()
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        endian = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        endian = ">"
    else:
        raise AssertionError(f"{path} is not a pcap file: magic {magic.hex()}")
    linktype = struct.unpack(endian + "I", data[20:24])[0] & 0x0FFFFFFF
    frames, off = [], 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + "IIII", data[off:off + 16])
        frames.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    assert off == len(data), f"{path} ends inside a record ({len(data) - off} bytes left)"
    return linktype, frames


def udp_dports(linktype, frames):
    """UDP destination ports of the frames (Ethernet, Linux cooked v1/v2), IPv4 and IPv6."""
    ports = []
    for f in frames:
        if linktype == 1:
            ethertype, l3 = struct.unpack("!H", f[12:14])[0], f[14:]
        elif linktype == 113:
            ethertype, l3 = struct.unpack("!H", f[14:16])[0], f[16:]
        elif linktype == 276:
            ethertype, l3 = struct.unpack("!H", f[0:2])[0], f[20:]
        else:
            raise AssertionError(f"unexpected linktype {linktype}")
        if ethertype == 0x0800 and l3[9] == 17:
            l4 = l3[(l3[0] & 0x0F) * 4:]
        elif ethertype == 0x86DD and l3[6] == 17:
            l4 = l3[40:]
        else:
            continue
        ports.append(struct.unpack("!H", l4[2:4])[0])
    return ports


def netns_inode(name):
    return os.stat(os.path.join(netns.NETNS_DIR, name)).st_ino


@pytest.fixture(scope="module")
def pair():
    """One pair shared by the tests that leave it as they found it."""
    with NamespacePair() as p:
        yield p


@pytest.fixture
def impaired(pair):
    """The shared pair; every impairment is removed after the test."""
    yield pair
    pair.clear_impairment("a")
    pair.clear_impairment("b")


class TestPairUp:
    def test_names_carry_prefix_pid_and_index(self, pair):
        n = pair.index
        assert pair.names == (f"uet-{os.getpid()}-{n}-a", f"uet-{os.getpid()}-{n}-b")
        assert set(pair.names) <= set(netns.list_namespaces())

    def test_veth_names_fit_ifnamsiz_and_live_in_their_namespace(self, pair):
        assert pair.interfaces == (f"uetv{pair.index}a", f"uetv{pair.index}b")
        assert all(len(name) <= 15 for name in pair.interfaces)
        for side in "ab":
            links = ip_json(pair[side].netns, "link", "show")
            assert sorted(link["ifname"] for link in links) == sorted(["lo", pair[side].ifname, pair[side].control_ifname])
            assert [link["link_type"] for link in links if link["ifname"] == pair[side].ifname] == ["ether"]

    def test_the_control_link_joins_the_sides_apart_from_the_test_link(self, pair):
        server = pair.popen("b", [sys.executable, "-c",
                                  "import socket\n"
                                  f"s = socket.create_server(('{pair.b.control_ipv6}', 0), family=socket.AF_INET6)\n"
                                  "print(s.getsockname()[1], flush=True)\n"
                                  "c, _ = s.accept(); c.sendall(c.recv(64))\n"],
                            stdout=subprocess.PIPE, text=True)
        port = int(server.stdout.readline())
        client = pair.run("a", [sys.executable, "-c",
                                "import socket\n"
                                f"c = socket.create_connection(('{pair.b.control_ipv6}', {port}), timeout=5)\n"
                                "c.sendall(b'control'); print(c.recv(64).decode())\n"],
                          capture_output=True, text=True, timeout=30)
        assert client.stdout.strip() == "control", client.stderr
        server.wait(timeout=10)
        routes = pair.run("a", ["ip", "-6", "route", "get", pair.b.control_ipv6], capture_output=True, text=True)
        assert f"dev {pair.a.control_ifname}" in routes.stdout  # not over the test link

    def test_addresses_come_from_the_reserved_ranges_only(self, pair):
        v4net, v6net = ipaddress.ip_network("198.18.0.0/15"), ipaddress.ip_network("2001:db8::/32")
        for side in "ab":
            assert ipaddress.ip_address(pair[side].ipv4) in v4net
            assert ipaddress.ip_address(pair[side].ipv6) in v6net
        assert pair.addresses == {
            "a": {"ipv4": f"198.18.{pair.index}.1", "ipv6": f"2001:db8:{pair.index:x}::1"},
            "b": {"ipv4": f"198.18.{pair.index}.2", "ipv6": f"2001:db8:{pair.index:x}::2"},
        }

    def test_veth_carries_exactly_the_plan_addresses_v6_without_dad(self, pair):
        for side in "ab":
            s = pair[side]
            info = ip_json(s.netns, "addr", "show", "dev", s.ifname)[0]
            glob = {(a["local"], a["prefixlen"]) for a in info["addr_info"] if a.get("scope") == "global"}
            assert glob == {(s.ipv4, 24), (s.ipv6, 64)}
            v6 = [a for a in info["addr_info"] if a["local"] == s.ipv6][0]
            assert v6.get("nodad") is True and not v6.get("tentative")

    def test_lo_and_veth_are_up(self, pair):
        for side in "ab":
            links = {link["ifname"]: link for link in ip_json(pair[side].netns, "link", "show")}
            assert "UP" in links["lo"]["flags"]
            assert links[pair[side].ifname]["operstate"] == "UP"

    @pytest.mark.parametrize("src", ["a", "b"])
    @pytest.mark.parametrize("family", ["ipv4", "ipv6"])
    def test_udp_round_trip_reaches_the_peer(self, pair, src, family):
        dst = "b" if src == "a" else "a"
        host = pair[dst].ipv4 if family == "ipv4" else pair[dst].ipv6
        result = round_trip(pair, src, host)
        assert result == {"reply": f"echo:hello {host}", "from": host}

    def test_mtu_option_sets_both_ends_and_carries_a_jumbo_datagram(self):
        with NamespacePair(mtu=9000) as p:
            for side in "ab":
                assert ip_json(p[side].netns, "link", "show", "dev", p[side].ifname)[0]["mtu"] == 9000
            result = transfer(p, 1, size=8900)
            assert (result["received"], result["bytes"]) == (1, 8900)

    def test_as_dict_is_json_with_names_and_addresses(self, pair):
        d = json.loads(json.dumps(pair.as_dict()))
        assert d["prefix"] == f"uet-{os.getpid()}-{pair.index}"
        assert d["a"]["netns"] == pair.names[0] and d["b"]["ifname"] == pair.interfaces[1]
        assert d["a"]["ipv4_cidr"] == f"{pair.a.ipv4}/24" and d["b"]["ipv6_cidr"] == f"{pair.b.ipv6}/64"


class TestRun:
    def test_run_executes_inside_the_side(self, pair):
        proc = pair.run("b", ["ip", "-j", "addr", "show", "dev", pair.b.ifname], capture_output=True, text=True)
        assert proc.returncode == 0
        assert pair.b.ipv4 in {a["local"] for a in json.loads(proc.stdout)[0]["addr_info"]}

    def test_run_has_a_default_timeout(self):
        import inspect
        assert inspect.signature(NamespacePair.run).parameters["timeout"].default == netns.DEFAULT_RUN_TIMEOUT
        assert 0 < netns.DEFAULT_RUN_TIMEOUT <= 300

    def test_run_timeout_raises(self, pair):
        with pytest.raises(subprocess.TimeoutExpired):
            pair.run("a", ["sleep", "30"], timeout=0.3)

    def test_popen_pid_is_the_command_in_the_namespace(self, pair):
        proc = pair.popen("a", [PY, "-c", "import sys; print('started', flush=True); sys.stdin.read()"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            assert read_line(proc) == "started\n"  # past ip's setns: now it runs inside
            assert os.readlink(f"/proc/{proc.pid}/exe") == os.path.realpath(PY)  # ip exec'd it: same PID
            assert os.stat(f"/proc/{proc.pid}/ns/net").st_ino == netns_inode(pair.a.netns)
        finally:
            proc.kill()
            proc.wait()

    def test_argv_must_be_a_list(self, pair):
        with pytest.raises(TypeError):
            pair.run("a", "ip addr")

    def test_unknown_side_is_rejected(self, pair):
        with pytest.raises(ValueError, match="side must be 'a' or 'b'"):
            pair.run("c", ["true"])


class TestCleanup:
    def test_namespaces_and_veth_are_gone_after_with(self):
        with NamespacePair() as p:
            names, ifb = p.names, p.b.ifname
            # Pin b's namespace open, so we can look inside after its name is deleted.
            pin = os.open(os.path.join(netns.NETNS_DIR, p.b.netns), os.O_RDONLY)
        try:
            assert not set(names) & set(netns.list_namespaces())
            inside = subprocess.run(["nsenter", f"--net=/proc/self/fd/{pin}", "ip", "-j", "link", "show"],
                                    pass_fds=[pin], capture_output=True, text=True, timeout=10)
            assert inside.returncode == 0, inside.stderr
            assert [link["ifname"] for link in json.loads(inside.stdout)] == ["lo"]
            assert ifb not in subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
        finally:
            os.close(pin)

    def test_namespaces_are_gone_when_the_body_raises(self):
        class Boom(Exception):
            pass

        with pytest.raises(Boom):
            with NamespacePair() as p:
                names = p.names
                raise Boom()
        assert not set(names) & set(netns.list_namespaces())

    def test_processes_left_running_are_stopped(self):
        with NamespacePair() as p:
            proc = p.popen("a", ["sleep", "60"])
        assert proc.poll() is not None

    def test_close_is_idempotent(self):
        p = NamespacePair().up()
        p.close()
        p.close()
        assert not set(p.names) & set(netns.list_namespaces())

    def test_cleanup_stale_removes_pairs_of_dead_pids(self):
        names = add_fake_pair(dead_pid())
        try:
            # another run's crashed pairs may go too: only this test's are its business
            assert set(names) <= set(netns.cleanup_stale())
            assert not set(names) & set(netns.list_namespaces())
        finally:
            for name in names:
                subprocess.run(["ip", "netns", "del", name], capture_output=True)

    def test_cleanup_stale_keeps_live_and_cli_pairs(self, pair):
        cli = add_fake_pair(CLI_TAG)
        try:
            assert not (set(pair.names) | set(cli)) & set(netns.cleanup_stale())
            assert set(pair.names) | set(cli) <= set(netns.list_namespaces())
        finally:
            netns.delete_pair(cli[0].removesuffix("-a"))

    def test_creating_a_pair_removes_stale_pairs(self):
        names = add_fake_pair(dead_pid())
        try:
            with NamespacePair():
                assert not set(names) & set(netns.list_namespaces())
        finally:
            for name in names:
                subprocess.run(["ip", "netns", "del", name], capture_output=True)

    SCRIPT = textwrap.dedent("""
        import json, sys
        sys.path.insert(0, sys.argv[1])
        from containers import NamespacePair
        p = NamespacePair().up()
        print(json.dumps(p.names), flush=True)
        if sys.argv[2] == "wait":
            sys.stdin.read()
    """)

    def test_sigterm_removes_the_pairs_of_the_process(self):
        proc = subprocess.Popen([PY, "-c", self.SCRIPT, str(REPO), "wait"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            names = json.loads(read_line(proc, timeout=20))
            assert set(names) <= set(netns.list_namespaces())
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for f in (proc.stdin, proc.stdout, proc.stderr):
                f.close()
        assert proc.returncode == -signal.SIGTERM
        assert not set(names) & set(netns.list_namespaces())

    def test_pair_of_a_killed_process_is_removed_by_cleanup_stale(self):
        proc = subprocess.Popen([PY, "-c", self.SCRIPT, str(REPO), "wait"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            names = json.loads(read_line(proc, timeout=20))
            proc.kill()  # SIGKILL: no atexit, no handler -- the pair stays behind
            proc.wait(timeout=20)
            assert set(names) <= set(netns.list_namespaces())
            assert set(names) <= set(netns.cleanup_stale())
            assert not set(names) & set(netns.list_namespaces())
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for f in (proc.stdin, proc.stdout, proc.stderr):
                f.close()

    def test_normal_exit_removes_pairs_never_closed(self):
        proc = subprocess.run([PY, "-c", self.SCRIPT, str(REPO), "exit"], capture_output=True, text=True,
                              timeout=30)
        assert proc.returncode == 0, proc.stderr
        names = json.loads(proc.stdout)
        assert len(names) == 2
        assert not set(names) & set(netns.list_namespaces())


class TestImpairment:
    def test_hook_is_egress_of_the_side_or_ingress_of_the_peer(self, impaired):
        impaired.impair("a", loss_percent=10, udp_dport=UET_PORT)
        if impaired.egress_supported():
            assert impaired.impair_hook == "egress"
            where, hook, dev = impaired.a.netns, "egress", impaired.a.ifname
        else:
            assert impaired.impair_hook == "ingress-of-peer"
            where, hook, dev = impaired.b.netns, "ingress", impaired.b.ifname
        ruleset = impaired.run(where, ["nft", "list", "table", "netdev", "uet_impair"],
                               capture_output=True, text=True).stdout
        assert f'hook {hook} device "{dev}"' in ruleset
        assert f"udp dport {UET_PORT} numgen random mod 10000 < 1000 drop" in ruleset

    def test_loss_100_delivers_nothing(self, impaired):
        impaired.impair("a", loss_percent=100, udp_dport=UET_PORT)
        result = transfer(impaired, 200)
        assert (result["received"], result["marker"]) == (0, True)

    def test_loss_100_applies_to_ipv6(self, impaired):
        impaired.impair("a", loss_percent=100, udp_dport=UET_PORT)
        result = transfer(impaired, 200, family=6)
        assert (result["received"], result["marker"]) == (0, True)

    def test_loss_0_delivers_everything(self, impaired):
        impaired.impair("a", loss_percent=0, udp_dport=UET_PORT)
        result = transfer(impaired, 400)
        assert (result["received"], result["marker"]) == (400, True)

    def test_counted_loss_drops_the_counts_it_names(self, impaired):
        # Two cycles of the counted loss (containers/impair.py LOSS_CYCLE): nft takes the rule and drops
        # exactly the datagrams counted_drops names, no more.
        impaired.impair("a", udp_dport=UET_PORT, every=7, offset=3)
        result = transfer(impaired, 2 * LOSS_CYCLE)
        assert (result["received"], result["marker"]) == (2 * LOSS_CYCLE - 2 * len(counted_drops(7, 3)), True)

    def test_cleared_impairment_delivers_everything(self, impaired):
        impaired.impair("a", loss_percent=100, udp_dport=UET_PORT)
        impaired.clear_impairment("a")
        assert impaired.impairment("a") == ""
        tables = impaired.run("a", ["nft", "list", "tables"], capture_output=True, text=True).stdout
        assert "uet_impair" not in tables
        result = transfer(impaired, 400)
        assert (result["received"], result["marker"]) == (400, True)

    def test_loss_50_drops_about_half(self, impaired):
        impaired.impair("a", loss_percent=50, udp_dport=UET_PORT)
        result = transfer(impaired, 400)
        assert result["marker"] is True
        assert 100 < result["received"] < 300  # strictly between 25 % and 75 % of 400

    def test_port_filter_spares_other_udp_ports(self, impaired):
        impaired.impair("a", loss_percent=100, udp_dport=UET_PORT)
        result = transfer(impaired, 200, port=OTHER_PORT)
        assert (result["received"], result["marker"]) == (200, True)

    def test_without_port_filter_all_udp_is_dropped(self, impaired):
        impaired.impair("a", loss_percent=100)
        # The markers are dropped too, so the receiver ends at its (short) timeout.
        result = transfer(impaired, 50, port=OTHER_PORT, recv_timeout=1.0)
        assert (result["received"], result["marker"]) == (0, False)

    def test_impairment_is_one_direction_only(self, impaired):
        impaired.impair("a", loss_percent=100, udp_dport=UET_PORT)
        result = transfer(impaired, 400, src="b", dst="a")
        assert (result["received"], result["marker"]) == (400, True)

    def test_impair_replaces_the_earlier_rule(self, impaired):
        impaired.impair("a", loss_percent=100, udp_dport=UET_PORT)
        impaired.impair("a", loss_percent=0, udp_dport=UET_PORT)
        result = transfer(impaired, 100)
        assert (result["received"], result["marker"]) == (100, True)

    def test_ingress_of_peer_fallback_drops_the_same_packets(self):
        with NamespacePair(impair_hook="ingress-of-peer") as p:
            p.impair("a", loss_percent=100, udp_dport=UET_PORT)
            ruleset = p.run("b", ["nft", "list", "table", "netdev", "uet_impair"],
                            capture_output=True, text=True).stdout
            assert f'hook ingress device "{p.b.ifname}"' in ruleset
            assert "uet_impair" not in p.run("a", ["nft", "list", "tables"], capture_output=True, text=True).stdout
            assert transfer(p, 100)["received"] == 0
            assert transfer(p, 100, src="b", dst="a")["received"] == 100  # b's own egress is untouched
            p.clear_impairment("a")
            assert "uet_impair" not in p.run("b", ["nft", "list", "tables"], capture_output=True, text=True).stdout
            assert transfer(p, 100)["received"] == 100

    @pytest.mark.parametrize("loss", [-1, 100.5, 150])
    def test_loss_outside_0_100_is_rejected(self, impaired, loss):
        with pytest.raises(ValueError, match="loss_percent"):
            impaired.impair("a", loss_percent=loss)


class TestCapture:
    def test_pcap_holds_every_datagram_sent_across(self, pair, tmp_path):
        path = tmp_path / "b.pcap"
        with pair.capture("b", path) as cap:
            result = transfer(pair, 25)
        assert result["received"] == 25
        linktype, frames = read_pcap(path)
        assert linktype == 1  # Ethernet on the veth
        ports = udp_dports(linktype, frames)
        assert (ports.count(UET_PORT), ports.count(MARKER_PORT)) == (25, 3)
        assert cap.proc.returncode == 0
        assert cap.stats["captured"] == cap.stats["received_by_filter"] == len(frames)
        assert cap.stats["dropped_by_kernel"] == 0

    def test_capture_on_any_with_a_filter_sees_only_matching_ipv6(self, pair, tmp_path):
        path = tmp_path / "any.pcap"
        with pair.capture("a", path, filter=f"udp dst port {UET_PORT}", interface="any"):
            transfer(pair, 10, family=6)
        linktype, frames = read_pcap(path)
        assert linktype in (113, 276)  # Linux cooked capture v1 / v2
        assert udp_dports(linktype, frames) == [UET_PORT] * 10
        assert all(struct.unpack("!H", f[0:2] if linktype == 276 else f[14:16])[0] == 0x86DD for f in frames)

    def test_capture_waits_for_tcpdump_to_listen(self, pair, tmp_path):
        with pair.capture("a", tmp_path / "x.pcap") as cap:
            assert "listening on" in cap.stderr
            assert cap.proc.poll() is None

    def test_sender_capture_shows_only_what_passed_the_egress_hook(self, impaired, tmp_path):
        impaired.impair("a", loss_percent=100, udp_dport=UET_PORT)
        path = tmp_path / "a.pcap"
        with impaired.capture("a", path):
            transfer(impaired, 20)
        ports = udp_dports(*read_pcap(path))
        # The egress hook drops before the capture tap; the peer's ingress hook (fallback) after it.
        expected = 0 if impaired.impair_hook == "egress" else 20
        assert (ports.count(UET_PORT), ports.count(MARKER_PORT)) == (expected, 3)

    def test_bad_filter_is_a_clear_error(self, pair, tmp_path):
        with pytest.raises(NamespaceError, match="tcpdump .* exited"):
            with pair.capture("a", tmp_path / "bad.pcap", filter="no such filter ("):
                pass


class TestTwoPairs:
    def test_two_pairs_have_distinct_names_interfaces_and_subnets(self):
        with NamespacePair() as p1, NamespacePair() as p2:
            assert p1.index != p2.index
            assert not set(p1.names) & set(p2.names)
            assert set(p1.interfaces).isdisjoint(p2.interfaces)
            for n1, n2 in zip(p1.subnets, p2.subnets):
                assert not ipaddress.ip_network(n1).overlaps(ipaddress.ip_network(n2))
            assert len({p1.a.ipv4, p1.b.ipv4, p2.a.ipv4, p2.b.ipv4}) == 4

    def test_two_pairs_carry_traffic_at_once(self):
        with NamespacePair() as p1, NamespacePair() as p2:
            assert transfer(p1, 50)["received"] == 50
            assert transfer(p2, 50, src="b", dst="a")["received"] == 50

    def test_index_plan_covers_198_19(self):
        assert netns.addresses_for(300) == ("198.19.44.1", "198.19.44.2", "2001:db8:12c::1",
                                            "2001:db8:12c::2", "198.19.44.0/24", "2001:db8:12c::/64")
        with pytest.raises(ValueError):
            netns.addresses_for(512)


# The CLI's pairs of this test process only (UET_CLI_TAG): `down --all` must not remove another run's.
CLI_TAG = f"cli{os.getpid()}x"


def cli(*args, timeout=120, **kwargs):
    return subprocess.run([PY, "-m", "containers", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, UET_CLI_TAG=CLI_TAG), **kwargs)


class TestCli:
    def test_up_exec_list_down(self):
        up = cli("up")
        assert up.returncode == 0, up.stderr
        info = json.loads(up.stdout)
        prefix = info["prefix"]
        try:
            assert prefix == f"uet-{CLI_TAG}-{info['index']}"
            assert {info["a"]["netns"], info["b"]["netns"]} <= set(netns.list_namespaces())
            listed = {p["prefix"]: p for p in json.loads(cli("list").stdout)}
            assert listed[prefix]["a"]["ipv4"] == info["a"]["ipv4"]
            ex = cli("exec", "--pair", prefix, "b", "--", "ip", "-j", "addr", "show", "dev", info["b"]["ifname"])
            assert ex.returncode == 0, ex.stderr
            assert info["b"]["ipv4"] in {a["local"] for a in json.loads(ex.stdout)[0]["addr_info"]}
            assert not {info["a"]["netns"], info["b"]["netns"]} & set(netns.cleanup_stale())  # CLI pairs are not stale
            down = cli("down", prefix)
            assert down.returncode == 0, down.stderr
            assert json.loads(down.stdout) == {"removed": [info["a"]["netns"], info["b"]["netns"]]}
            assert prefix not in {p["prefix"] for p in json.loads(cli("list").stdout)}
        finally:
            netns.delete_pair(prefix)

    def test_down_all_removes_every_cli_pair(self):
        prefixes = [json.loads(cli("up").stdout)["prefix"] for _ in range(2)]
        try:
            down = cli("down", "--all")
            assert down.returncode == 0, down.stderr
            assert not any(n.startswith(f"uet-{CLI_TAG}-") for n in netns.list_namespaces())
        finally:
            for prefix in prefixes:
                netns.delete_pair(prefix)

    def test_cleanup_stale_command_reports_what_it_removed(self):
        names = add_fake_pair(dead_pid())
        try:
            proc = cli("cleanup-stale")
            assert proc.returncode == 0, proc.stderr
            assert set(names) <= set(json.loads(proc.stdout)["removed"])
        finally:
            for name in names:
                subprocess.run(["ip", "netns", "del", name], capture_output=True)

    def test_not_root_is_a_clear_error(self):
        # Run from a world-readable copy: the checkout itself may sit in a 0700 directory.
        readable = pathlib.Path(tempfile.mkdtemp(prefix="uet-nonroot-"))
        try:
            readable.chmod(0o755)
            shutil.copytree(REPO / "containers", readable / "containers")
            for path in [readable, *readable.rglob("*")]:
                path.chmod(0o755 if path.is_dir() else 0o644)
            proc = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                   PY, "-m", "containers", "list"], cwd=readable, capture_output=True,
                                  text=True, timeout=30, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        finally:
            shutil.rmtree(readable)
        assert proc.returncode == 2
        assert "network namespaces need root" in proc.stderr


class TestErrors:
    def test_not_root_message(self, monkeypatch):
        monkeypatch.setattr(netns.os, "geteuid", lambda: 1000)
        with pytest.raises(NamespaceError, match="network namespaces need root"):
            NamespacePair().up()

    def test_missing_ip_names_iproute2(self, monkeypatch):
        monkeypatch.setattr(host.shutil, "which", lambda *a, **k: None)
        with pytest.raises(NamespaceError, match=r"'ip' was not found: install the Debian package iproute2"):
            NamespacePair().up()

    def test_missing_tcpdump_names_its_package(self, pair, tmp_path, monkeypatch):
        monkeypatch.setattr(host.shutil, "which", lambda name, **k: None if name == "tcpdump" else "/usr/sbin/ip")
        with pytest.raises(NamespaceError, match="install the Debian package tcpdump"):
            with pair.capture("a", tmp_path / "x.pcap"):
                pass
