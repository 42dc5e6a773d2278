"""Impairment of a pair's test link: nftables on the veth's netdev egress hook, else the peer's ingress hook
(no ``tc netem`` on this kernel). A mixin of the pair classes: it needs ``side``, ``peer`` and ``run``.
"""
from .host import NamespaceError, tool


def impair_script(hook, device, loss_percent, udp_dport, every=None, offset=0, table="uet_impair"):
    """The nft script of a drop on `device`'s `hook`, in netdev table `table` (it replaces an earlier one)."""
    # "any": every UDP datagram (a provider whose UET port is its own choice; the test link carries only UET).
    match = "meta l4proto udp " if udp_dport == "any" else f"udp dport {int(udp_dport)} " if udp_dport is not None else ""
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
        ``every``, a counted pattern: each ``every``-th matching packet from the ``offset``-th on.

        ``udp_dport`` (e.g. 4793, UET) restricts the drop to that UDP destination port ("any": to UDP).  Replaces
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
