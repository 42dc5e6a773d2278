"""A tcpdump capture on one side of a pair, ready when tcpdump says it listens, complete when it stops."""
import os
import re
import selectors
import signal
import subprocess
import time

from .host import NamespaceError, tool
from .processes import Lines


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
        reader = self._reader = Lines(self.proc.stderr)
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
