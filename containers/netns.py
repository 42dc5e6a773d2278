"""Two fabric endpoints, each in its own "container": a Linux network namespace, joined by a veth pair.

    with NamespacePair() as pair:
        pair.run("b", ["ip", "-br", "addr"])
        with pair.capture("b", tmp / "b.pcap"):
            pair.impair("a", loss_percent=10, udp_dport=4793)
            ...

Names and addresses (``n`` is unique among all live pairs on the host, 1..511):

    namespaces   uet-<pid>-<n>-a / uet-<pid>-<n>-b       (<pid>: the creating process; the CLI uses "cli")
    veth         uetv<n>a (in a) <-> uetv<n>b (in b)     (<= 15 characters): the test link
    control veth uetc<n>a (in a) <-> uetc<n>b (in b)     2001:db8:<n hex>:c0::1/64 (a), ::2/64 (b): the
                 control link, never captured nor impaired
    IPv4         198.<18 + n//256>.<n%256>.1/24 (a), .2/24 (b)   -- only 198.18.0.0/15 (RFC 2544 benchmarking)
    IPv6         2001:db8:<n hex>::1/64 (a), ::2/64 (b)           -- only 2001:db8::/32 (documentation), nodad

Readiness is checked, not slept for: ``__enter__`` returns once a UDP round trip over both IPv4 and
IPv6 has succeeded from each side to the other (probe.py run in both namespaces), or raises
``NamespaceError`` after ``ready_timeout`` seconds.

Cleanup: ``__exit__`` (also when the body raised) stops the processes started in the pair, deletes
the veth and both namespaces.  Pairs still open when the process exits (atexit) or gets SIGTERM
are deleted best-effort.  ``cleanup_stale()`` deletes ``uet-<pid>-*`` namespaces whose <pid> is
gone; it runs whenever a pair is created, so a crashed run leaves nothing behind for long.

Impairment: nftables on the veth's netdev **egress** hook, inside the side's namespace (kernel
>= 5.16; no ``tc netem`` on this kernel).  Where nft/kernel reject the egress hook the rule goes
to the **ingress** hook of the peer's veth in the peer's namespace instead, which drops the same
packets one hop later (a capture on the sending side then still shows them).
``pair.impair_hook`` says which one is in use.
"""
import atexit
import fcntl
import ipaddress
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass

PREFIX = "uet"
CLI_TAG = "cli"
MAX_INDEX = 511  # 198.18.0.0/15 holds 512 /24s; index 0 is left unused
NETNS_DIR = "/run/netns"
LOCK_PATHS = ("/run/lock/uet-containers.lock", "/tmp/uet-containers.lock")
PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe.py")
PROBE_PORT = 47999
DEFAULT_RUN_TIMEOUT = 60.0
SIDES = ("a", "b")

# uet-<owner>-<n>-<side>; owner is a PID (cleaned when dead) or a tag such as "cli" (never auto-cleaned)
NAME_RE = re.compile(rf"^{PREFIX}-(?P<owner>[a-z0-9]+)-(?P<index>\d+)-(?P<side>[ab])$")
PID_NAME_RE = re.compile(rf"^{PREFIX}-(?P<pid>\d+)-(?P<index>\d+)-(?P<side>[ab])$")

TOOL_PACKAGES = {"ip": "iproute2", "nft": "nftables", "tcpdump": "tcpdump", "ethtool": "ethtool"}


class NamespaceError(RuntimeError):
    """A namespace pair could not be made, used or removed; the message says why and what to do."""


# --------------------------------------------------------------------------------------------
# tools and preconditions


def require_root():
    if os.geteuid() != 0:
        raise NamespaceError(
            "network namespaces need root (CAP_SYS_ADMIN and CAP_NET_ADMIN): "
            "run the suite as root, e.g. with sudo")


def tool(name):
    """Absolute path of a system tool, also when /usr/sbin is not on PATH; clear error naming the package."""
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin:/usr/bin:/bin")
    if not found:
        package = TOOL_PACKAGES.get(name, name)
        raise NamespaceError(
            f"'{name}' was not found: install the Debian package {package} (apt-get install {package})")
    return found


def _ip(*args, netns=None, check=True, timeout=30):
    argv = [tool("ip")]
    if netns:
        argv += ["-n", netns]
    argv += list(args)
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise NamespaceError(f"{' '.join(argv[1:])} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc


def list_namespaces():
    """Names of all named network namespaces (those ``ip netns`` knows), sorted."""
    try:
        return sorted(os.listdir(NETNS_DIR))
    except FileNotFoundError:
        return []


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_netns_pids(netns, sig=signal.SIGKILL):
    """Signal every process whose network namespace is ``netns`` (those left behind by a run)."""
    proc = _ip("netns", "pids", netns, check=False)
    for token in proc.stdout.split():
        try:
            if int(token) != os.getpid():
                os.kill(int(token), sig)
        except (ValueError, ProcessLookupError, PermissionError):
            pass


def delete_namespace(netns):
    """Delete one namespace (and so its interfaces), killing processes still inside it; True if it existed."""
    if netns not in list_namespaces():
        return False
    _kill_netns_pids(netns)
    proc = _ip("netns", "delete", netns, check=False)
    if proc.returncode != 0 and netns in list_namespaces():
        raise NamespaceError(f"could not delete namespace {netns}: {proc.stderr.strip()}")
    return True


def cleanup_stale():
    """Delete ``uet-<pid>-*`` namespaces whose <pid> no longer runs; returns the names deleted.

    Pairs of live processes and pairs with a non-numeric owner (``uet-cli-*``) are left alone.
    A recycled PID keeps its stale pair until that process is gone too.
    """
    if os.geteuid() != 0:
        return []
    removed = []
    for name in list_namespaces():
        m = PID_NAME_RE.match(name)
        if not m:
            continue
        pid = int(m["pid"])
        if pid == os.getpid() or _pid_alive(pid):
            continue
        try:
            if delete_namespace(name):
                removed.append(name)
        except NamespaceError:
            pass
    return removed


class _HostLock:
    """An flock shared by every process on the host while it picks an index and adds namespaces."""

    def __enter__(self):
        for path in LOCK_PATHS:
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
                break
            except OSError:
                continue
        else:
            raise NamespaceError(f"cannot open a lock file ({', '.join(LOCK_PATHS)})")
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def used_indexes():
    return {int(m["index"]) for m in map(NAME_RE.match, list_namespaces()) if m}


# --------------------------------------------------------------------------------------------
# cleanup of this process's pairs at exit / SIGTERM

_live = {}  # id(pair) -> pair
_live_lock = threading.RLock()
_hooks_installed = False
_previous_sigterm = None


def _cleanup_own_pairs():
    with _live_lock:
        pairs = list(_live.values())
    for pair in pairs:
        if pair.owner_pid == os.getpid():  # a forked child must not remove its parent's pairs
            try:
                pair.close()
            except Exception:  # best effort: never mask the reason the process is exiting
                pass


def _on_sigterm(signum, frame):
    _cleanup_own_pairs()
    previous = _previous_sigterm
    if callable(previous):
        previous(signum, frame)
    elif previous == signal.SIG_IGN:
        return
    else:  # default action: die of SIGTERM, as the sender expects
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)


def _install_exit_hooks():
    global _hooks_installed, _previous_sigterm
    if _hooks_installed:
        return
    _hooks_installed = True
    atexit.register(_cleanup_own_pairs)
    if threading.current_thread() is threading.main_thread():
        try:
            _previous_sigterm = signal.getsignal(signal.SIGTERM)
            signal.signal(signal.SIGTERM, _on_sigterm)
        except (ValueError, OSError):
            pass


# --------------------------------------------------------------------------------------------
# the pair


@dataclass
class Side:
    """One endpoint: its namespace, its veth and its addresses (without prefix length)."""
    side: str
    netns: str
    ifname: str
    ipv4: str
    ipv6: str
    ipv4_prefixlen: int = 24
    ipv6_prefixlen: int = 64
    control_ifname: str = ""   # the control link: a second veth, never captured nor impaired
    control_ipv6: str = ""

    def as_dict(self):
        return {"netns": self.netns, "ifname": self.ifname, "ipv4": self.ipv4, "ipv6": self.ipv6,
                "control_ifname": self.control_ifname, "control_ipv6": self.control_ipv6,
                "ipv4_cidr": f"{self.ipv4}/{self.ipv4_prefixlen}",
                "ipv6_cidr": f"{self.ipv6}/{self.ipv6_prefixlen}"}


def addresses_for(index):
    """(IPv4 a, IPv4 b, IPv6 a, IPv6 b, IPv4 /24 network, IPv6 /64 network) of pair ``index``."""
    if not 1 <= index <= MAX_INDEX:
        raise ValueError(f"pair index {index} outside 1..{MAX_INDEX}")
    net4 = ipaddress.ip_network(f"198.{18 + index // 256}.{index % 256}.0/24")
    net6 = ipaddress.ip_network(f"2001:db8:{index:x}::/64")
    assert net4.subnet_of(ipaddress.ip_network("198.18.0.0/15"))
    assert net6.subnet_of(ipaddress.ip_network("2001:db8::/32"))
    return str(net4[1]), str(net4[2]), str(net6[1]), str(net6[2]), str(net4), str(net6)


class NamespacePair:
    """Two network namespaces ``a`` and ``b`` joined by a veth pair; a context manager.

    Parameters: ``mtu`` (veth MTU on both sides, default the kernel's 1500), ``ready_timeout``
    (seconds to wait for the IPv4+IPv6 round trips), ``owner`` (default the PID; the CLI uses
    "cli" so ``cleanup_stale`` leaves its pairs alone), ``keep`` (do not delete at exit/SIGTERM:
    for the CLI only), ``index`` (force the pair number; default the lowest free one),
    ``impair_hook`` (None: egress if nft/kernel support it, else ingress-of-peer; or force one).

    Attributes after ``up()``/``__enter__``: ``index``, ``prefix``, ``a``/``b`` (:class:`Side`),
    ``names`` (namespace names a, b), ``interfaces`` (veth names a, b), ``addresses``
    ({side: {"ipv4", "ipv6"}}), ``subnets`` (IPv4 /24, IPv6 /64), ``impair_hook``.
    """

    def __init__(self, mtu=None, ready_timeout=10.0, owner=None, keep=False, index=None, impair_hook=None):
        self.mtu = mtu
        self.ready_timeout = ready_timeout
        self.owner = str(owner) if owner is not None else str(os.getpid())
        if not re.fullmatch(r"[a-z0-9]+", self.owner):
            raise ValueError(f"owner must be lowercase letters/digits, not {self.owner!r}")
        self.owner_pid = os.getpid()
        self.keep = keep
        self.index = index
        self.a = self.b = None
        if impair_hook not in (None, "egress", "ingress-of-peer"):
            raise ValueError(f"impair_hook must be None (auto), 'egress' or 'ingress-of-peer', not {impair_hook!r}")
        self.impair_hook = impair_hook  # None: chosen by the first impair() (egress if supported)
        self._impaired = {}  # side -> (netns holding the table)
        self._procs = []
        self._up = False

    # ---- naming

    @property
    def prefix(self):
        return f"{PREFIX}-{self.owner}-{self.index}"

    @property
    def names(self):
        return (self.a.netns, self.b.netns)

    @property
    def interfaces(self):
        return (self.a.ifname, self.b.ifname)

    @property
    def addresses(self):
        return {s.side: {"ipv4": s.ipv4, "ipv6": s.ipv6} for s in (self.a, self.b)}

    @property
    def subnets(self):
        return addresses_for(self.index)[4:]

    def side(self, side):
        if side in ("a", self.a and self.a.netns):
            return self.a
        if side in ("b", self.b and self.b.netns):
            return self.b
        raise ValueError(f"side must be 'a' or 'b', not {side!r}")

    def peer(self, side):
        return self.b if self.side(side) is self.a else self.a

    def __getitem__(self, side):
        return self.side(side)

    def as_dict(self):
        return {"prefix": self.prefix, "index": self.index, "owner": self.owner,
                "subnets": {"ipv4": self.subnets[0], "ipv6": self.subnets[1]},
                "mtu": self.mtu, "a": self.a.as_dict(), "b": self.b.as_dict()}

    def __repr__(self):
        state = "up" if self._up else "down"
        return f"<NamespacePair {self.prefix if self.index else '?'} {state}>"

    # ---- lifecycle

    def __enter__(self):
        self.up()
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            self.close()
        except NamespaceError:
            if exc_type is None:
                raise
        return False

    def _sides_for(self, index):
        v4a, v4b, v6a, v6b, _, _ = addresses_for(index)
        base = f"{PREFIX}-{self.owner}-{index}"
        control = ipaddress.ip_network(f"2001:db8:{index:x}:c0::/64")  # the control link's own /64
        return (Side("a", f"{base}-a", f"uetv{index}a", v4a, v6a, control_ifname=f"uetc{index}a",
                     control_ipv6=str(control[1])),
                Side("b", f"{base}-b", f"uetv{index}b", v4b, v6b, control_ifname=f"uetc{index}b",
                     control_ipv6=str(control[2])))

    def up(self):
        """Create namespaces, veth and addresses, then wait until both sides reach each other."""
        if self._up:
            return self
        require_root()
        tool("ip")
        cleanup_stale()
        with _HostLock():
            used = used_indexes()
            if self.index is None:
                free = [i for i in range(1, MAX_INDEX + 1) if i not in used]
                if not free:
                    raise NamespaceError(f"all {MAX_INDEX} pair indexes are in use: "
                                         f"'python3 -m containers list' / 'down --all'")
                self.index = free[0]
            elif self.index in used:
                raise NamespaceError(f"pair index {self.index} is already in use")
            self.a, self.b = self._sides_for(self.index)
            if not self.keep:
                with _live_lock:
                    _live[id(self)] = self
                _install_exit_hooks()
            try:
                _ip("netns", "add", self.a.netns)
                _ip("netns", "add", self.b.netns)
            except BaseException:
                self.close()
                raise
        self._up = True
        try:
            self._configure()
            self.wait_ready(self.ready_timeout)
        except BaseException:
            self.close()
            raise
        return self

    def _configure(self):
        a, b = self.a, self.b
        # Created directly inside the namespaces: the names never meet the host's interfaces.
        _ip("link", "add", a.ifname, "netns", a.netns, "type", "veth",
            "peer", "name", b.ifname, "netns", b.netns)
        # The control link: what the two sides say to each other about a test stays off the test link,
        # which is captured and impaired (as packetimpact keeps its control channel apart).
        _ip("link", "add", a.control_ifname, "netns", a.netns, "type", "veth",
            "peer", "name", b.control_ifname, "netns", b.netns)
        for s in (a, b):
            _ip("link", "set", "lo", "up", netns=s.netns)
            if self.mtu:
                _ip("link", "set", "dev", s.ifname, "mtu", str(int(self.mtu)), netns=s.netns)
            _ip("addr", "add", f"{s.ipv4}/{s.ipv4_prefixlen}", "dev", s.ifname, netns=s.netns)
            _ip("-6", "addr", "add", f"{s.ipv6}/{s.ipv6_prefixlen}", "dev", s.ifname, "nodad",
                netns=s.netns)
            _ip("link", "set", "dev", s.ifname, "up", netns=s.netns)
            _ip("link", "set", "dev", s.control_ifname, "up", netns=s.netns)
            _ip("-6", "addr", "add", f"{s.control_ipv6}/64", "dev", s.control_ifname, "nodad", netns=s.netns)
            # A veth takes a UDP GSO packet whole (a softuet run of equal frames, outbox.cpp) and cuts it
            # at the receiving socket, so a capture would show one packet of many frames. Segmented before
            # the device, captures show the datagrams the wire carries.
            _ip("netns", "exec", s.netns, tool("ethtool"), "-K", s.ifname, "tx-udp-segmentation", "off")

    def wait_ready(self, timeout=10.0):
        """Bounded wait for UDP round trips a->b and b->a over IPv4 and IPv6 (probe.py in each side)."""
        deadline = time.monotonic() + timeout
        token = uuid.uuid4().hex[:12]
        procs = {}
        try:
            for s in (self.a, self.b):
                p = self.peer(s.side)
                argv = [sys.executable, "-I", PROBE, "peer", "--port", str(PROBE_PORT), "--token", token,
                        "--timeout", f"{timeout:.3f}", "--target", p.ipv4, "--target", p.ipv6]
                procs[s.side] = self.popen(s.side, argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, text=True, track=False)
            events = _read_json_events(procs, deadline, until=lambda ev: ev.get("event") in ("done", "exit"))
            ok = all(events[s] and events[s][-1].get("event") == "done" for s in procs)
            if not ok:
                detail = []
                for s, p in procs.items():
                    last = events[s][-1] if events[s] else {}
                    missing = last.get("missing") or [t for t in (self.peer(s).ipv4, self.peer(s).ipv6)
                                                     if t not in last.get("answered", [])]
                    if last.get("event") != "done":
                        detail.append(f"{self.side(s).netns} got no UDP reply from {', '.join(missing)}")
                raise NamespaceError(
                    f"pair {self.prefix} not ready within {timeout:g} s: {'; '.join(detail)}")
        finally:
            for p in procs.values():
                _finish(p)
        # Traffic flows, but the kernel publishes operstate UP (IFF_RUNNING, which tools and providers
        # enumerating interfaces look at) through linkwatch, at most once a second: wait for it too.
        pause = 0.01
        while True:
            states = {s.ifname: self.operstate(s.side) for s in (self.a, self.b)}
            if all(v == "UP" for v in states.values()):
                return
            if time.monotonic() + pause > deadline:
                raise NamespaceError(f"pair {self.prefix}: veth operstate not UP within {timeout:g} s: {states}")
            time.sleep(pause)  # a poll interval inside a deadline, not a guess at readiness
            pause = min(pause * 2, 0.1)

    def operstate(self, side):
        """The kernel's operstate of ``side``'s veth ("UP", "DOWN", "LOWERLAYERDOWN", ...)."""
        s = self.side(side)
        proc = _ip("-j", "link", "show", "dev", s.ifname, netns=s.netns)
        return json.loads(proc.stdout)[0].get("operstate", "UNKNOWN")

    def close(self):
        """Stop processes started in the pair, delete the veth and both namespaces (idempotent)."""
        with _live_lock:
            _live.pop(id(self), None)
        errors = []
        for p in self._procs:
            _stop_process(p)
        self._procs.clear()
        if self.a is None:
            return
        existing = list_namespaces()
        if self.a.netns in existing:
            # Deleting the veth first removes both ends now, even if something still pins a namespace.
            _ip("link", "del", "dev", self.a.ifname, netns=self.a.netns, check=False)
            _ip("link", "del", "dev", self.a.control_ifname, netns=self.a.netns, check=False)
        for s in (self.a, self.b):
            try:
                delete_namespace(s.netns)
            except NamespaceError as e:
                errors.append(str(e))
        self._up = False
        self._impaired.clear()
        if errors:
            raise NamespaceError("; ".join(errors))

    down = close

    # ---- running things inside

    def _exec_argv(self, side, argv):
        if isinstance(argv, str):
            raise TypeError("argv must be a list of strings (no shell): e.g. ['ip', 'addr']")
        return [tool("ip"), "netns", "exec", self.side(side).netns, *map(str, argv)]

    def run(self, side, argv, timeout=DEFAULT_RUN_TIMEOUT, **kwargs):
        """subprocess.run(argv) inside ``side``'s namespace; default timeout 60 s."""
        return subprocess.run(self._exec_argv(side, argv), timeout=timeout, **kwargs)

    def popen(self, side, argv, track=True, **kwargs):
        """subprocess.Popen(argv) inside ``side``'s namespace; stopped by close() if still running.

        ``ip netns exec`` execs the command, so ``proc.pid`` is the command itself (signals reach it).
        """
        proc = subprocess.Popen(self._exec_argv(side, argv), **kwargs)
        if track:
            self._procs.append(proc)
        return proc

    # ---- impairment

    def _nft(self, netns, script, check_only=False):
        argv = [tool("nft")] + (["-c"] if check_only else []) + ["-f", "-"]
        return self.run(netns, argv, input=script, capture_output=True, text=True, timeout=30)

    @staticmethod
    def _impair_script(hook, device, loss_percent, udp_dport, every=None, offset=0):
        match = f"udp dport {int(udp_dport)} " if udp_dport is not None else ""
        rules = []
        if every:
            # Counted, not drawn: the same packets drop on every run (the k-th matching packet, k from 0,
            # drops when k mod every == offset), so a lossy cell replays exactly.
            rules.append(f"{match}numgen inc mod {int(every)} == {int(offset)} drop")
        elif loss_percent:
            # 1/100 % resolution: numgen draws 0..9999 per packet.
            threshold = int(round(float(loss_percent) * 100))
            if threshold >= 10000:
                rules.append(f"{match}drop")
            else:
                rules.append(f"{match}numgen random mod 10000 < {threshold} drop")
        body = "\n".join(f"    {r}" for r in rules)
        return (
            # "add table; delete table; table {...}" replaces any earlier impairment atomically.
            "add table netdev uet_impair\n"
            "delete table netdev uet_impair\n"
            "table netdev uet_impair {\n"
            f"  chain {hook} {{\n"
            f"    type filter hook {hook} device \"{device}\" priority 0; policy accept;\n"
            f"{body}\n"
            "  }\n"
            "}\n")

    def egress_supported(self):
        """True if nft and the kernel accept a netdev egress chain on this pair's veth (checked with nft -c)."""
        script = self._impair_script("egress", self.a.ifname, 0, None)
        proc = self._nft(self.a.netns, script, check_only=True)
        return proc.returncode == 0

    def impair(self, side, loss_percent=None, udp_dport=None, every=None, offset=0):
        """Drop ``loss_percent`` % (0..100, 0.01 steps) of the packets leaving ``side``'s veth, or, with
        ``every``, a counted pattern: each ``every``-th matching packet from the ``offset``-th on.

        ``udp_dport`` (e.g. 4793, UET) restricts the drop to that UDP destination port.  Replaces
        any earlier impairment of that side.  Uses the netdev egress hook of ``side``'s veth; if
        that is not supported, the netdev ingress hook of the peer's veth (``self.impair_hook``).
        """
        if loss_percent is not None and not 0 <= float(loss_percent) <= 100:
            raise ValueError(f"loss_percent must be within 0..100, not {loss_percent}")
        if every is not None and not (int(every) >= 2 and 0 <= int(offset) < int(every)):
            raise ValueError(f"every must be >= 2 and 0 <= offset < every, not every={every} offset={offset}")
        tool("nft")
        me, other = self.side(side), self.peer(side)
        if self.impair_hook is None:
            self.impair_hook = "egress" if self.egress_supported() else "ingress-of-peer"
        if self.impair_hook == "egress":
            netns, hook, device = me.netns, "egress", me.ifname
        else:
            netns, hook, device = other.netns, "ingress", other.ifname
        proc = self._nft(netns, self._impair_script(hook, device, loss_percent, udp_dport, every, offset))
        if proc.returncode != 0:
            raise NamespaceError(f"nft in {netns} rejected the {hook} impairment: {proc.stderr.strip()}")
        self._impaired[me.side] = netns

    def clear_impairment(self, side):
        """Remove the impairment of ``side`` (no error if there is none)."""
        me = self.side(side)
        netns = self._impaired.pop(me.side, None)
        for ns in ([netns] if netns else [me.netns, self.peer(side).netns]):
            # "add; delete" never fails on a missing table.
            self._nft(ns, "add table netdev uet_impair\ndelete table netdev uet_impair\n")

    def impairment(self, side):
        """The nft ruleset text now applied for ``side`` ('' if none)."""
        me = self.side(side)
        ns = self._impaired.get(me.side)
        if not ns:
            return ""
        proc = self.run(ns, [tool("nft"), "list", "table", "netdev", "uet_impair"],
                        capture_output=True, text=True, timeout=30)
        return proc.stdout if proc.returncode == 0 else ""

    # ---- capture

    def capture(self, side, path, filter="udp", interface=None, ready_timeout=10.0, snaplen=0,
                buffer_kib=32768):
        """Context manager: tcpdump on ``side``'s veth (or ``interface``, e.g. "any") writing ``path``.

        Returns once tcpdump said "listening on" (bounded by ``ready_timeout``); on exit sends SIGINT
        and waits, so the pcap is complete.  The object's ``stats`` has tcpdump's closing counts
        (captured, received_by_filter, dropped_by_kernel); ``buffer_kib`` is tcpdump's -B (the kernel
        ring; a burst larger than the ring can hold while tcpdump is descheduled is dropped and
        counted in dropped_by_kernel).  ``snaplen`` 0: MTU + 128, which holds a whole veth frame and
        keeps the ring's slots small.
        """
        return Capture(self, side, path, filter, interface, ready_timeout, snaplen, buffer_kib)


class Capture:
    def __init__(self, pair, side, path, filter, interface, ready_timeout, snaplen, buffer_kib):
        self.pair = pair
        self.side = pair.side(side)
        self.path = os.fspath(path)
        self.filter = filter
        self.interface = interface or self.side.ifname
        self.ready_timeout = ready_timeout
        self.snaplen = snaplen
        self.buffer_kib = buffer_kib
        self.proc = None
        self.stderr = ""
        self.stats = {}

    def __enter__(self):
        # --immediate-mode: each packet is handed to tcpdump at once (no 1 s ring-block delay);
        # -U: and written to the file at once; -Z root: no privilege drop that could not write path.
        snaplen = self.snaplen
        if not snaplen:
            # libpcap sizes every ring slot by the snap length, and neither "any" (no MTU) nor a veth
            # (segmentation offloads on, so libpcap does not trust its MTU) caps it: at 256 KiB a slot,
            # the 32 MiB ring holds 128 frames, and a burst of a 1 MiB transfer's reads overflowed it
            # (126-280 frames dropped by the kernel).  Whole veth frames fit in MTU + 128 (Ethernet or
            # cooked header); only larger loopback packets on "any" get truncated.  Another interface
            # (e.g. "lo") gets its own MTU.
            snaplen = self._interface_mtu() + 128
        argv = [tool("tcpdump"), "-i", self.interface, "-w", self.path, "-U", "--immediate-mode", "-n",
                "-s", str(snaplen), "-B", str(int(self.buffer_kib)), "-Z", "root"]
        if self.filter:
            argv += self.filter.split() if isinstance(self.filter, str) else list(self.filter)
        self.proc = self.pair.popen(self.side.side, argv, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + self.ready_timeout
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stderr, selectors.EVENT_READ)
        reader = self._reader = _Lines(self.proc.stderr)
        lines = []
        try:
            while not any("listening on" in line for line in lines):
                left = deadline - time.monotonic()
                if left <= 0:
                    self._stop(sync=False)
                    raise NamespaceError(f"tcpdump in {self.side.netns} did not say 'listening on' "
                                         f"within {self.ready_timeout:g} s: {''.join(lines).strip()}")
                if not sel.select(left):
                    continue
                lines += reader.read()
                if reader.eof and not any("listening on" in line for line in lines):
                    self._stop(sync=False)
                    raise NamespaceError(f"tcpdump in {self.side.netns} exited ({self.proc.returncode}) "
                                         f"before listening: {''.join(lines).strip()}")
        finally:
            sel.close()
        self.stderr = "".join(lines)
        return self

    def _interface_mtu(self):
        if self.interface in ("any", self.side.ifname):
            return int(self.pair.mtu or 1500)
        path = f"/sys/class/net/{self.interface}/mtu"  # ip netns exec mounts the namespace's /sys
        got = self.pair.run(self.side.side, ["cat", path], capture_output=True, text=True, timeout=10)
        if got.returncode != 0 or not got.stdout.strip().isdigit():
            raise NamespaceError(f"no interface {self.interface!r} in {self.side.netns}: {got.stderr.strip()}")
        return int(got.stdout)

    STATS_RE = re.compile(r"(\d+) packets? captured, (\d+) packets? received by filter, "
                          r"(\d+) packets? dropped by kernel")

    def sync(self, timeout=5.0):
        """Wait (bounded) until tcpdump has written every packet its socket has received so far.

        SIGUSR1 makes tcpdump print "N packets captured, M packets received by filter, D packets
        dropped by kernel" without stopping; packets that reached the socket but not yet the file
        show as N + D < M.  Returns (captured, received, dropped) of the last answer; raises
        NamespaceError if tcpdump does not catch up.
        """
        deadline = time.monotonic() + timeout
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stderr, selectors.EVENT_READ)
        last = None
        try:
            while time.monotonic() < deadline and self.proc.poll() is None:
                self.proc.send_signal(signal.SIGUSR1)
                answer = None
                while answer is None and time.monotonic() < deadline:
                    if not sel.select(max(0.0, deadline - time.monotonic())):
                        continue
                    for line in self._reader.read():
                        self.stderr += line
                        m = self.STATS_RE.search(line)
                        if m:
                            answer = (int(m[1]), int(m[2]), int(m[3]))
                    if self._reader.eof:
                        break
                if answer is None:
                    break
                last = answer
                if answer[0] + answer[2] >= answer[1]:
                    return answer
        finally:
            sel.close()
        raise NamespaceError(f"tcpdump in {self.side.netns} did not catch up within {timeout:g} s "
                             f"(captured, received by filter, dropped by kernel) = {last}")

    def _stop(self, sync=True):
        if sync and self.proc.poll() is None:
            try:
                self.sync()
            except NamespaceError:
                pass  # stop anyway; stats["captured"] < stats["received_by_filter"] shows the loss
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            rest = self.proc.communicate(timeout=10)[1] or ""
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rest = self.proc.communicate()[1] or ""
        self.stderr += rest
        for key in ("captured", "received by filter", "dropped by kernel"):
            found = re.findall(rf"(\d+) packets? {key}", self.stderr)
            if found:  # the last one is tcpdump's summary at exit
                self.stats[key.replace(" ", "_")] = int(found[-1])
        if self.proc in self.pair._procs:
            self.pair._procs.remove(self.proc)

    def __exit__(self, *exc):
        self._stop()
        return False


class _Lines:
    """Lines of a pipe read with os.read (never a buffered readline: with select, a buffered reader can
    hold a second complete line in user space while the pipe looks empty, and the wait would stall)."""

    def __init__(self, fileobj):
        self.fd = fileobj.fileno()
        self.buf = b""
        self.eof = False

    def read(self):
        """Complete lines (str) now available after one os.read; sets eof at end of stream."""
        chunk = os.read(self.fd, 65536)
        if not chunk:
            self.eof = True
            rest, self.buf = self.buf, b""
            return [rest.decode(errors="replace")] if rest else []
        self.buf += chunk
        *lines, self.buf = self.buf.split(b"\n")
        return [line.decode(errors="replace") + "\n" for line in lines]


def _read_json_events(procs, deadline, until):
    """Read JSON lines from each proc's stdout until ``until(event)`` holds for each, EOF, or deadline."""
    events = {k: [] for k in procs}
    sel = selectors.DefaultSelector()
    for k, p in procs.items():
        sel.register(p.stdout, selectors.EVENT_READ, (k, _Lines(p.stdout)))
    try:
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            for key, _ in sel.select(left):
                k, reader = key.data
                finished = False
                for line in reader.read():
                    try:
                        ev = json.loads(line)
                    except ValueError:
                        continue
                    events[k].append(ev)
                    finished = finished or until(ev)
                if finished or reader.eof:
                    sel.unregister(key.fileobj)
    finally:
        sel.close()
    return events


def _stop_process(proc, grace=2.0):
    """SIGTERM a process still running (tcpdump then closes its file cleanly), SIGKILL after ``grace``."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for f in (proc.stdin, proc.stdout, proc.stderr):
        try:
            if f:
                f.close()
        except OSError:
            pass


def _finish(proc, grace=2.0):
    """Close stdin, then terminate / kill a helper process if it does not exit on its own."""
    try:
        if proc.stdin and not proc.stdin.closed:
            proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for f in (proc.stdout, proc.stderr):
        try:
            if f:
                f.close()
        except OSError:
            pass


# --------------------------------------------------------------------------------------------
# pairs that exist on the host (for the CLI)


def existing_pairs():
    """{prefix: {"owner", "index", "a", "b", "alive"}} for every uet-* namespace on the host."""
    pairs = {}
    for name in list_namespaces():
        m = NAME_RE.match(name)
        if not m:
            continue
        prefix = name[:-2]
        entry = pairs.setdefault(prefix, {"prefix": prefix, "owner": m["owner"], "index": int(m["index"])})
        entry[m["side"]] = name
        owner = m["owner"]
        entry["alive"] = (not owner.isdigit()) or _pid_alive(int(owner))
    return pairs


def attach(prefix_or_index):
    """A NamespacePair object for an existing pair (e.g. made by the CLI), without creating anything."""
    pairs = existing_pairs()
    key = str(prefix_or_index)
    found = pairs.get(key) or next((p for p in pairs.values() if str(p["index"]) == key), None)
    if not found:
        raise NamespaceError(f"no pair {key!r}: see 'python3 -m containers list'")
    pair = NamespacePair(owner=found["owner"], keep=True, index=found["index"])
    pair.a, pair.b = pair._sides_for(found["index"])
    pair._up = True
    return pair


def delete_pair(prefix):
    """Delete both namespaces of an existing pair by prefix; returns the names deleted."""
    removed = []
    for side in SIDES:
        if delete_namespace(f"{prefix}-{side}"):
            removed.append(f"{prefix}-{side}")
    return removed
