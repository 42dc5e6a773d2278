"""Helper processes of a pair: reading their output lines and JSON events without stalling, and stopping
them within a bound.
"""
import json
import os
import selectors
import subprocess
import time


class Lines:
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


def read_json_events(procs, deadline, until):
    """Read JSON lines from each proc's stdout until ``until(event)`` holds for each, EOF, or deadline."""
    events = {k: [] for k in procs}
    sel = selectors.DefaultSelector()
    for k, p in procs.items():
        sel.register(p.stdout, selectors.EVENT_READ, (k, Lines(p.stdout)))
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


def _close_pipes(*files):
    for f in files:
        try:
            if f:
                f.close()
        except OSError:
            pass


def _terminate(proc, grace):
    """SIGTERM, then SIGKILL after ``grace`` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def stop_process(proc, grace=2.0):
    """SIGTERM a process still running (tcpdump then closes its file cleanly), SIGKILL after ``grace``."""
    if proc.poll() is None:
        _terminate(proc, grace)
    _close_pipes(proc.stdin, proc.stdout, proc.stderr)


def finish(proc, grace=2.0):
    """Close stdin, then terminate / kill a helper process if it does not exit on its own."""
    if proc.stdin and not proc.stdin.closed:
        _close_pipes(proc.stdin)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        _terminate(proc, grace)
    _close_pipes(proc.stdout, proc.stderr)
