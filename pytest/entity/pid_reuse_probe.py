"""The pid-reuse probe (issue 24, finding 3), run as root as the init of a pid namespace of its own
(`unshare --pid --fork --mount-proc`): nothing else forks in it, so writing pid-1 to ns_last_pid makes the
next process take a chosen pid, deterministically, without touching the host's pids.

    pid_reuse_probe.py BIN_DIR FOLDER SCENARIO

It starts a uet-entity (BIN_DIR/uet-entity, socket and store in FOLDER), then, by SCENARIO:
- `exited`: a process (user nobody) is mapped JobID 291 with secure domain 7, whose key is bound to 291; it asks
  and is served; it exits; a second process of user nobody is given its pid and asks the same.
- `inherited`: a process connects and exits leaving its connection to a child; a process given its pid is
  mapped; the child asks over the old connection (SO_PEERCRED still says that pid).
It prints one JSON object: the pids, and the replies each asker got (error number, words, the key if sent)."""
import json
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import control as c  # noqa: E402

KEY = bytes(range(0x40, 0x60))
SDI, JOB, SERVICE = 7, 291, "svc"
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
DEADLINE_S = 10.0

# An asker, run as nobody: connects (or takes the connection it was handed as fd 3), waits for a line on
# stdin, sends each request (hex argv) and prints each reply (hex), then exits. Self-contained: user nobody
# may not read the checkout.
ASKER = ("import socket, sys\n"
         "s = socket.socket(fileno=3) if sys.argv[1] == '-' else socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)\n"
         "s.settimeout(5)\n"
         "if sys.argv[1] != '-': s.connect(sys.argv[1])\n"
         "import os; print('ready', os.getpid(), flush=True)\n"
         "sys.stdin.readline()\n"
         "for h in sys.argv[2:]:\n"
         "    s.send(bytes.fromhex(h)); print(s.recv(65536).hex(), flush=True)\n")

# A process that connects, is answered once (so the entity has taken the connection while it lives), hands
# the connection to a child (fd 3; the child shares its stdin and stdout) and exits: the child outlives it.
LEAVER = ("import os, socket, subprocess, sys\n"
          "s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.settimeout(5); s.connect(sys.argv[1])\n"
          "s.send(bytes.fromhex(sys.argv[2])); s.recv(65536)\n"
          "os.dup2(s.fileno(), 3)\n"
          "subprocess.Popen([sys.executable, '-c', sys.argv[3], '-', *sys.argv[4:]], pass_fds=(3,))\n"
          "os._exit(0)\n")

REQUESTS = [c.message("JOB_CHECK", c.string("service", SERVICE), c.u32("job_id", JOB), seq=1),
            c.message("KEY_REQUEST", c.u32("sdi", SDI), seq=2),
            c.message("ADDR_ALLOC", c.string("service", SERVICE), seq=3)]


def wait_serving(proc, sock):
    end = time.monotonic() + DEADLINE_S
    while proc.poll() is None and time.monotonic() < end:
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
            try:
                s.connect(sock)
                return
            except OSError:
                time.sleep(0.01)
    raise SystemExit(f"uet-entity did not serve {sock} (exit {proc.poll()})")


def ctl(bin_dir, sock, *args):
    r = subprocess.run([f"{bin_dir}/uet-entity-ctl", "--socket", sock, *map(str, args)], capture_output=True,
                       text=True, timeout=DEADLINE_S)
    if r.returncode != 0:
        raise SystemExit(f"uet-entity-ctl {' '.join(map(str, args))}: {r.stderr}")


def asker(sock):
    proc = subprocess.Popen([*NOBODY, sys.executable, "-c", ASKER, sock, *(r.hex() for r in REQUESTS)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().split()[0] == "ready"
    return proc


def answers(proc):
    """Lets `proc` (an ASKER, or the process whose stdin and stdout it shares) ask; its replies as
    {error, what, key}."""
    out, _ = proc.communicate("go\n", timeout=DEADLINE_S)
    got = []
    for line in out.split():
        r = c.parse_reply(bytes.fromhex(line))
        keys = [v for aid, v in r.get("attrs", []) if aid == c.ATTR["key"]]
        got.append({"error": r["error"], "what": r.get("what", ""), "key": keys[0].hex() if keys else None})
    return got


def next_pid_is(pid):
    """The namespace's next process takes `pid` (nothing else forks in it)."""
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(pid - 1))


def grant(bin_dir, sock, pid):
    ctl(bin_dir, sock, "map", "--pid", pid, "--service", SERVICE, "--job", JOB, "--sdi", SDI)
    ctl(bin_dir, sock, "key-update", "--sdi", SDI, "--key", KEY.hex(), "--epoch", 1, "--job", JOB)


def exited(bin_dir, sock):
    """A granted process exits; another (user nobody) is given its pid and asks."""
    first = asker(sock)
    grant(bin_dir, sock, first.pid)
    served = answers(first)  # then it exits
    next_pid_is(first.pid)
    second = asker(sock)
    return {"granted_pid": first.pid, "asker_pid": second.pid, "granted": served, "asker": answers(second)}


def inherited(bin_dir, sock):
    """A connection outlives the process that opened it; a process given that pid is granted; the connection's
    holder asks over it."""
    hello = c.message("JOB_GET", c.string("service", SERVICE), seq=9).hex()
    leaver = subprocess.Popen([*NOBODY, sys.executable, "-c", LEAVER, sock, hello, ASKER,
                               *(r.hex() for r in REQUESTS)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    leaver.wait(timeout=DEADLINE_S)
    assert leaver.stdout.readline().split()[0] == "ready"  # the child's
    next_pid_is(leaver.pid)
    granted = subprocess.Popen([*NOBODY, "sleep", "60"])
    try:
        grant(bin_dir, sock, granted.pid)
        return {"granted_pid": granted.pid, "asker_pid": leaver.pid, "granted": [], "asker": answers(leaver)}
    finally:
        granted.kill()
        granted.wait(timeout=DEADLINE_S)


def main():
    bin_dir, folder, scenario = sys.argv[1:4]
    sock = f"{folder}/control.sock"
    entity = subprocess.Popen([f"{bin_dir}/uet-entity", "--socket", sock, "--store", f"{folder}/entity.db"],
                              stdout=subprocess.DEVNULL, stderr=open(f"{folder}/entity.log", "a"))
    try:
        wait_serving(entity, sock)
        print(json.dumps({"exited": exited, "inherited": inherited}[scenario](bin_dir, sock)))
    finally:
        entity.terminate()
        entity.wait(timeout=DEADLINE_S)


if __name__ == "__main__":
    main()
