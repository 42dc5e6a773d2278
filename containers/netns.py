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
import ipaddress
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass

from .capture import Capture
from .host import HostLock, NamespaceError, ip, pid_alive, require_root, tool
from .impair import Impairment
from .processes import finish, read_json_events, stop_process

PREFIX = "uet"
# The owner tag of the CLI's pairs; UET_CLI_TAG gives a caller its own (lowercase letters and digits, not
# all digits: a numeric owner is a PID), so that the tests' `down --all` never touches another run's pairs.
CLI_TAG = os.environ.get("UET_CLI_TAG") or "cli"
MAX_INDEX = 511  # 198.18.0.0/15 holds 512 /24s; index 0 is left unused
NETNS_DIR = "/run/netns"
PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe.py")
PROBE_PORT = 47999
DEFAULT_RUN_TIMEOUT = 60.0
SIDES = ("a", "b")

# uet-<owner>-<n>-<side>; owner is a PID (cleaned when dead) or a tag such as "cli" (never auto-cleaned)
NAME_RE = re.compile(rf"^{PREFIX}-(?P<owner>[a-z0-9]+)-(?P<index>\d+)-(?P<side>[ab])$")
PID_NAME_RE = re.compile(rf"^{PREFIX}-(?P<pid>\d+)-(?P<index>\d+)-(?P<side>[ab])$")


def list_namespaces():
    """Names of all named network namespaces (those ``ip netns`` knows), sorted."""
    try:
        return sorted(os.listdir(NETNS_DIR))
    except FileNotFoundError:
        return []



def _kill_netns_pids(netns, sig=signal.SIGKILL):
    """Signal every process whose network namespace is ``netns`` (those left behind by a run)."""
    proc = ip("netns", "pids", netns, check=False)
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
    proc = ip("netns", "delete", netns, check=False)
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
        if pid == os.getpid() or pid_alive(pid):
            continue
        try:
            if delete_namespace(name):
                removed.append(name)
        except NamespaceError:
            pass
    return removed



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


class NamespacePair(Impairment):
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
        with HostLock():
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
                self._add_namespaces()
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

    def _add_namespaces(self):
        """Makes the two named namespaces (a subclass may name namespaces that something else made)."""
        ip("netns", "add", self.a.netns)
        ip("netns", "add", self.b.netns)

    def _configure(self):
        a, b = self.a, self.b
        # Created directly inside the namespaces: the names never meet the host's interfaces.
        ip("link", "add", a.ifname, "netns", a.netns, "type", "veth",
            "peer", "name", b.ifname, "netns", b.netns)
        # The control link: what the two sides say to each other about a test stays off the test link,
        # which is captured and impaired (as packetimpact keeps its control channel apart).
        ip("link", "add", a.control_ifname, "netns", a.netns, "type", "veth",
            "peer", "name", b.control_ifname, "netns", b.netns)
        for s in (a, b):
            ip("link", "set", "lo", "up", netns=s.netns)
            if self.mtu:
                ip("link", "set", "dev", s.ifname, "mtu", str(int(self.mtu)), netns=s.netns)
            ip("addr", "add", f"{s.ipv4}/{s.ipv4_prefixlen}", "dev", s.ifname, netns=s.netns)
            ip("-6", "addr", "add", f"{s.ipv6}/{s.ipv6_prefixlen}", "dev", s.ifname, "nodad",
                netns=s.netns)
            ip("link", "set", "dev", s.ifname, "up", netns=s.netns)
            ip("link", "set", "dev", s.control_ifname, "up", netns=s.netns)
            ip("-6", "addr", "add", f"{s.control_ipv6}/64", "dev", s.control_ifname, "nodad", netns=s.netns)
            # A veth takes a UDP GSO packet whole (a softuet run of equal frames, outbox.cpp) and cuts it
            # at the receiving socket, so a capture would show one packet of many frames. Segmented before
            # the device, captures show the datagrams the wire carries.
            ip("netns", "exec", s.netns, tool("ethtool"), "-K", s.ifname, "tx-udp-segmentation", "off")

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
            events = read_json_events(procs, deadline, until=lambda ev: ev.get("event") in ("done", "exit"))
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
                finish(p)
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
        proc = ip("-j", "link", "show", "dev", s.ifname, netns=s.netns)
        return json.loads(proc.stdout)[0].get("operstate", "UNKNOWN")

    def close(self):
        """Stop processes started in the pair, delete the veth and both namespaces (idempotent)."""
        with _live_lock:
            _live.pop(id(self), None)
        errors = []
        for p in self._procs:
            stop_process(p)
        self._procs.clear()
        if self.a is None:
            return
        existing = list_namespaces()
        if self.a.netns in existing:
            # Deleting the veth first removes both ends now, even if something still pins a namespace.
            ip("link", "del", "dev", self.a.ifname, netns=self.a.netns, check=False)
            ip("link", "del", "dev", self.a.control_ifname, netns=self.a.netns, check=False)
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
        entry["alive"] = (not owner.isdigit()) or pid_alive(int(owner))
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
