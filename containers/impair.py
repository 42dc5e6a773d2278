"""Impairment of a pair's test link: nftables on the veth's netdev egress hook, else the peer's ingress hook
(no ``tc netem`` on this kernel). A mixin of the pair classes: it needs ``side``, ``peer`` and ``run``.
"""
from .host import NamespaceError, tool


# The counted loss repeats after this many matching datagrams, a prime. With a cycle of `every` itself, a
# sender whose retransmission round is a multiple of `every` datagrams and starts with a dropped one meets that
# drop at every try: softuet's ROD go-back-N resent the same 42 datagrams (the 42 messages not yet ACKed, each
# one GSO datagram of 2 packets; 42 = 6 x 7) from the lost PSN round after round, ~1.2 ms apart, until its
# 10 s give-up, and Reliability.OrderedMessagesArriveInOrderUnderLoss failed whenever a busy host's timing
# left such a round (seed 1704287051). From round to round that datagram's count moves by the round's length
# modulo the cycle: with a prime cycle longer than any round it cannot stay on the drops, which are every
# `every`-th count, for long: 15 rounds in a row at most (rounds of 7 or 94 datagrams walk down them one by
# one), within softuet's 20 tries (pytest/containers/test_impair.py).
LOSS_CYCLE = 101


def counted_drops(every, offset, cycle=LOSS_CYCLE):
    """The counts modulo `cycle` the counted loss drops: every `every`-th from `offset` (about 1 in `every`)."""
    return list(range(int(offset), int(cycle), int(every)))


def counted_pattern(every, offset, cycle=LOSS_CYCLE):
    """The counted loss in words, as the cell plan and the report print it."""
    drops = counted_drops(every, offset, cycle)
    return (f"about every {every}th UET datagram of each direction dropped: counting from 0, those whose count mod "
            f"{cycle} is {drops[0]}, {drops[1]}, ..., {drops[-1]} (every {every}th from {offset}, repeating every "
            f"{cycle}, a prime, so no retransmission round shorter than that meets a drop at every try)")


def impair_script(hook, device, loss_percent, udp_dport, every=None, offset=0, table="uet_impair"):
    """The nft script of a drop on `device`'s `hook`, in netdev table `table` (it replaces an earlier one)."""
    # "any": every UDP datagram (a provider whose UET port is its own choice; the test link carries only UET).
    match = "meta l4proto udp " if udp_dport == "any" else f"udp dport {int(udp_dport)} " if udp_dport is not None else ""
    rules = []
    if every:
        # Counted, not drawn: the same packets drop on every run (the k-th matching datagram, k from 0, drops
        # when k mod LOSS_CYCLE is one of counted_drops), so a lossy cell replays exactly.
        drops = ", ".join(str(k) for k in counted_drops(every, offset))
        rules.append(f"{match}numgen inc mod {LOSS_CYCLE} {{ {drops} }} drop")
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
        f"add table netdev {table}\n"
        f"delete table netdev {table}\n"
        f"table netdev {table} {{\n"
        f"  chain {hook} {{\n"
        f"    type filter hook {hook} device \"{device}\" priority 0; policy accept;\n"
        f"{body}\n"
        "  }\n"
        "}\n")


class Impairment:
    """Counted or drawn UDP loss on one side's veth; ``impair_hook`` says which hook is in use."""

    def _nft(self, netns, script, check_only=False):
        argv = [tool("nft")] + (["-c"] if check_only else []) + ["-f", "-"]
        return self.run(netns, argv, input=script, capture_output=True, text=True, timeout=30)

    def egress_supported(self):
        """True if nft and the kernel accept a netdev egress chain on this pair's veth (checked with nft -c)."""
        script = impair_script("egress", self.a.ifname, 0, None)
        proc = self._nft(self.a.netns, script, check_only=True)
        return proc.returncode == 0

    def impair(self, side, loss_percent=None, udp_dport=None, every=None, offset=0):
        """Drop ``loss_percent`` % (0..100, 0.01 steps) of the packets leaving ``side``'s veth, or, with
        ``every``, a counted pattern: each ``every``-th matching datagram from the ``offset``-th on, in cycles of
        LOSS_CYCLE datagrams (counted_drops).

        ``udp_dport`` (e.g. 4793, UET) restricts the drop to that UDP destination port ("any": to UDP).  Replaces
        any earlier impairment of that side.  Uses the netdev egress hook of ``side``'s veth; if
        that is not supported, the netdev ingress hook of the peer's veth (``self.impair_hook``).
        """
        if loss_percent is not None and not 0 <= float(loss_percent) <= 100:
            raise ValueError(f"loss_percent must be within 0..100, not {loss_percent}")
        if every is not None and not (2 <= int(every) <= LOSS_CYCLE // 2 and 0 <= int(offset) < int(every)):
            raise ValueError(f"every must be within 2..{LOSS_CYCLE // 2} and 0 <= offset < every, not every={every} "
                             f"offset={offset}")
        tool("nft")
        me, other = self.side(side), self.peer(side)
        if self.impair_hook is None:
            self.impair_hook = "egress" if self.egress_supported() else "ingress-of-peer"
        if self.impair_hook == "egress":
            netns, hook, device = me.netns, "egress", me.ifname
        else:
            netns, hook, device = other.netns, "ingress", other.ifname
        proc = self._nft(netns, impair_script(hook, device, loss_percent, udp_dport, every, offset))
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
