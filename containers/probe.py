"""Small UDP tools that run *inside* a namespace (``ip netns exec NS python3 -I probe.py ...``).

Standard library only, no imports from the rest of the suite, so it runs under ``python3 -I``.
Every mode is bounded by ``--timeout`` and reports one JSON object on stdout as its last line.

Modes
-----
``peer``   readiness: bind a dual-stack UDP socket on ``--port``, answer every ``ping`` with ``pong``,
           send ``ping`` to each ``--target`` (every 50 ms) until each has answered, then print
           ``done`` and keep answering until stdin closes (or the timeout), so the other side can
           finish too.  Exit 0 if every target answered, 1 if not (the JSON names who did not).
``recv``   count datagrams: bind ``--port`` (data) and ``--marker-port``; print ``ready``; stop at the
           first datagram on the marker port (sent after the data, over the same veth, so all data
           that survived is already queued) or at the timeout; print the count.
``send``   send ``--count`` datagrams of ``--size`` bytes to ``--host``:``--port``, then
           ``--markers`` datagrams to ``--marker-port``.
"""
import argparse
import json
import os
import select
import socket
import sys
import time

RCVBUF = 8 << 20  # room for every datagram of a test burst: the default (~208 KiB) drops after ~250


def _bind(port):
    """A dual-stack (IPv4-mapped + IPv6) UDP socket on [::]:port with a large receive buffer."""
    sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    for opt in (getattr(socket, "SO_RCVBUFFORCE", 33), socket.SO_RCVBUF):
        try:
            sock.setsockopt(socket.SOL_SOCKET, opt, RCVBUF)
            break
        except OSError:
            continue
    sock.bind(("::", port))
    return sock


def _addr(host, port):
    """Socket address for an IPv4 or IPv6 literal, as the dual-stack socket wants it."""
    if ":" in host:
        return (host, port, 0, 0)
    return ("::ffff:" + host, port, 0, 0)


def _plain(addr):
    host = addr[0]
    return host[7:] if host.startswith("::ffff:") else host


def _emit(obj):
    print(json.dumps(obj), flush=True)


def peer(args):
    sock = _bind(args.port)
    deadline = time.monotonic() + args.timeout
    pending = {t: _addr(t, args.port) for t in args.target}
    answered = []
    token = f"ping {args.token}".encode()
    reply = f"pong {args.token}".encode()
    fds = [sock]
    stdin_open = True
    done_said = False
    next_send = 0.0
    _emit({"event": "ready", "port": sock.getsockname()[1]})
    while True:
        now = time.monotonic()
        if now >= deadline:
            break
        if pending and now >= next_send:
            for host, addr in pending.items():
                try:
                    sock.sendto(token, addr)
                except OSError:  # e.g. ENETUNREACH while the link is still coming up: retry
                    pass
            next_send = now + 0.05
        if not pending and not done_said:
            _emit({"event": "done", "answered": answered})
            done_said = True
        wait = max(0.0, min(deadline, next_send if pending else deadline) - now)
        watch = fds + ([sys.stdin] if (done_said and stdin_open) else [])
        readable, _, _ = select.select(watch, [], [], wait)
        for r in readable:
            if r is sys.stdin:
                if not os.read(sys.stdin.fileno(), 4096):
                    stdin_open = False
                    _emit({"event": "exit", "ok": True, "answered": answered, "missing": []})
                    return 0
                continue
            data, src = sock.recvfrom(2048)
            if data == token:
                sock.sendto(reply, src)
            elif data == reply:
                host = _plain(src)
                if host in pending:
                    del pending[host]
                    answered.append(host)
    _emit({"event": "exit", "ok": not pending, "answered": answered, "missing": sorted(pending)})
    return 0 if not pending else 1


def recv(args):
    data_sock = _bind(args.port)
    marker_sock = _bind(args.marker_port)
    deadline = time.monotonic() + args.timeout
    count = 0
    payload_bytes = 0
    marker = False
    _emit({"event": "ready", "port": args.port, "marker_port": args.marker_port})
    while not marker:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        readable, _, _ = select.select([data_sock, marker_sock], [], [], left)
        if data_sock in readable:
            payload_bytes += len(data_sock.recv(65535))
            count += 1
        if marker_sock in readable:
            marker_sock.recv(65535)
            marker = True
    # Everything sent before the marker is already queued: drain it without waiting.
    data_sock.setblocking(False)
    while True:
        try:
            payload_bytes += len(data_sock.recv(65535))
            count += 1
        except BlockingIOError:
            break
    _emit({"event": "exit", "received": count, "bytes": payload_bytes, "marker": marker})
    return 0


def send(args):
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_DGRAM)
    sent = errors = 0
    for i in range(args.count):
        body = i.to_bytes(4, "big") + bytes(max(0, args.size - 4))
        try:
            sock.sendto(body[: max(args.size, 4)], (args.host, args.port))
            sent += 1
        except OSError:
            errors += 1
    for _ in range(args.markers):
        try:
            sock.sendto(b"end", (args.host, args.marker_port))
        except OSError:
            errors += 1
    _emit({"event": "exit", "sent": sent, "errors": errors})
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("peer")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--target", action="append", default=[])
    p.add_argument("--token", default="uet")
    p.add_argument("--timeout", type=float, default=10.0)
    r = sub.add_parser("recv")
    r.add_argument("--port", type=int, default=4793)
    r.add_argument("--marker-port", type=int, default=4794)
    r.add_argument("--timeout", type=float, default=10.0)
    s = sub.add_parser("send")
    s.add_argument("--host", required=True)
    s.add_argument("--port", type=int, default=4793)
    s.add_argument("--marker-port", type=int, default=4794)
    s.add_argument("--count", type=int, default=1)
    s.add_argument("--size", type=int, default=64)
    s.add_argument("--markers", type=int, default=3)
    args = parser.parse_args(argv)
    return {"peer": peer, "recv": recv, "send": send}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())
