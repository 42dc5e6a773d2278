"""uet-entity, the privileged entity: identity from the kernel, validation before work, state that
outlives kill -9, and clear errors. Messages are built by pytest/entity/control.py from spec/control.yaml."""
import os
import random
import struct
import subprocess
import threading

import pytest

import control as c

NOBODY = 65534


def as_process(entity, args, user=None):
    """Start `uet-entity-ctl ARGS` as a process that waits for a line on stdin first, so that its pid is known
    (and mapped) before it asks: `exec` keeps the shell's pid."""
    ctl = " ".join([str(entity.ctl), "--socket", str(entity.socket), *map(str, args)])
    cmd = ["sh", "-c", f"read go; exec {ctl}"]
    if user is not None:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def go(proc):
    out, err = proc.communicate("go\n", timeout=10)
    return proc.returncode, out, err


class TestIdentity:
    def test_a_process_gets_the_jobids_mapped_to_it_and_no_other(self, entity):
        proc = as_process(entity, ["get", "--service", "svc"], user=NOBODY)
        assert entity.run_ctl("map", "--pid", proc.pid, "--service", "svc", "--job", 291, "--job", 292).returncode == 0
        assert entity.run_ctl("map", "--pid", proc.pid, "--service", "other", "--job", 7).returncode == 0
        rc, out, err = go(proc)
        assert (rc, out.split()) == (0, ["291", "292"]), err

    def test_check_says_yes_only_for_a_granted_jobid(self, entity):
        granted = as_process(entity, ["check", "--service", "svc", "--job", 291], user=NOBODY)
        other = as_process(entity, ["check", "--service", "svc", "--job", 293], user=NOBODY)
        for p in (granted, other):
            assert entity.run_ctl("map", "--pid", p.pid, "--service", "svc", "--job", 291).returncode == 0
        assert go(granted)[0] == 0
        rc, _, err = go(other)
        assert rc == 1 and "JobID 293 is not granted to pid" in err and "uid 65534" in err

    def test_only_root_maps_unmaps_and_lists(self, entity):
        for args in (["map", "--pid", 1, "--service", "s", "--job", 5], ["unmap", "--pid", 1, "--service", "s"],
                     ["list"]):
            r = entity.run_ctl(*args, user=NOBODY)
            assert r.returncode == 1, r
            assert "needs the administrator (uid 0); the caller is pid" in r.stderr and "uid 65534" in r.stderr
        assert entity.run_ctl("list").stdout == ""  # nothing was mapped

    def test_a_process_asks_only_for_itself(self, entity):
        """The pid a request names is never the asker's identity: JOB_GET takes no pid at all."""
        conn = c.Connection(entity.socket)
        reply = conn.call(c.message("JOB_GET", c.string("service", "svc"), c.u32("pid", 1)))
        assert reply["error"] == 22 and "pid is not taken by JOB_GET" in reply["what"]
        assert reply["attr"] == c.ATTR["pid"]

    def test_unmap_withdraws_and_says_when_there_was_nothing(self, entity):
        assert entity.run_ctl("map", "--pid", 99, "--service", "s", "--job", 5, "--job", 6).returncode == 0
        assert entity.run_ctl("unmap", "--pid", 99, "--service", "s", "--job", 5).returncode == 0
        assert entity.run_ctl("list").stdout.split("\n")[:-1] == ["99 s 6"]
        r = entity.run_ctl("unmap", "--pid", 99, "--service", "s", "--job", 5)
        assert r.returncode == 1 and "no map of pid 99 for service 's' holds those JobIDs" in r.stderr


BAD = [
    ("short", c.message("JOB_GET")[:12], "shorter than its headers"),
    ("length", c.message("JOB_GET", c.string("service", "s"), length=200), "netlink length says 200"),
    ("family", c.message("JOB_GET", c.string("service", "s"), family=0x21), "not the UET family"),
    ("command", c.message(99), "unknown command 99"),
    ("version", c.message("JOB_GET", c.string("service", "s"), version=7), "family version 7"),
    ("request flag", c.message("JOB_GET", c.string("service", "s"), flags=0), "request flag is not set"),
    ("unknown attribute", c.message("JOB_GET", c.string("service", "s"), c.attr(61, b"\0" * 4)), "unknown attribute 61"),
    ("missing", c.message("JOB_CHECK", c.string("service", "s")), "JOB_CHECK needs job_id"),
    ("twice", c.message("JOB_GET", c.string("service", "s"), c.string("service", "t")), "service appears twice"),
    ("long string", c.message("JOB_GET", c.string("service", "x" * 65)), "65 bytes, at most 64"),
    ("no NUL", c.message("JOB_GET", c.attr(c.ATTR["service"], b"abcd")), "not a NUL-terminated string"),
    ("range", c.message("JOB_CHECK", c.string("service", "s"), c.u32("job_id", 0x1000000)), "outside 1..16777215"),
    ("width", c.message("JOB_CHECK", c.string("service", "s"), c.attr(c.ATTR["job_id"], b"\1\0")), "must be 4 bytes"),
    ("nested flag", c.message("JOB_GET", c.attr(c.ATTR["service"], b"s\0", nested=True)), "marked nested"),
    ("attribute length", c.message("JOB_GET", struct.pack("=HH", 300, c.ATTR["service"]) + b"s\0\0\0"), "300 bytes"),
    ("truncated attribute", c.message("JOB_GET", c.string("service", "s"), b"\5\0"), "too few for an attribute header"),
    ("nest content", c.message("ADDR_ALLOC", c.string("service", "s"),
                               c.attr(c.ATTR["address"], c.attr(c.NEST["fep_address"]["pid_on_fep"],
                                                                struct.pack("=H", 5000)), nested=True)),
     "pid_on_fep = 5000 is outside 0..4095"),
]


class TestValidation:
    @pytest.mark.parametrize("name,data,says", BAD, ids=[b[0] for b in BAD])
    def test_a_bad_message_gets_an_error_naming_it_and_the_entity_serves_on(self, entity, name, data, says):
        conn = c.Connection(entity.socket)
        reply = conn.call(data)
        assert reply["error"] > 0 and says in reply["what"], reply
        assert entity.run_ctl("map", "--pid", 5, "--service", "s", "--job", 9).returncode == 0
        assert entity.run_ctl("list").stdout == "5 s 9\n"

    def test_an_oversized_message_is_refused(self, entity):
        conn = c.Connection(entity.socket)
        reply = conn.call(c.message("JOB_GET", c.string("service", "s"), c.attr(c.ATTR["key"], b"\0" * 9000)))
        assert reply["error"] == 90 and "is over 8192" in reply["what"]  # EMSGSIZE

    def test_thousands_of_random_messages_leave_it_serving(self, entity):
        """Random bytes and real requests with bytes changed: each gets a reply that parses; then it serves."""
        rng = random.Random(4793)
        good = [c.message("JOB_GET", c.string("service", "svc")),
                c.message("JOB_CHECK", c.string("service", "svc"), c.u32("job_id", 5)),
                c.message("JOB_LIST", c.u32("pid", 3))]
        conn = c.Connection(entity.socket)
        for i in range(3000):
            data = bytearray(rng.choice(good)) if i % 3 else bytearray(rng.randbytes(rng.randrange(1, 80)))
            for _ in range(rng.randrange(1, 4)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            reply = conn.call(bytes(data))
            assert "error" in reply
        assert entity.run_ctl("map", "--pid", 5, "--service", "s", "--job", 9).returncode == 0


class TestRestart:
    def test_kill_9_loses_nothing_acknowledged(self, entity):
        """A burst of maps, the entity killed in its middle, restarted: every acknowledged map is there."""
        acknowledged = []
        conn = c.Connection(entity.socket)
        # The kill lands after a number of acknowledged maps, not after a time: a loaded machine acknowledges
        # fewer maps a second, and the burst must be under way whatever the load. The maps keep coming while
        # the killer kills.
        seed = random.SystemRandom().randrange(1 << 32)
        kill_at = random.Random(seed).randrange(20, 200)
        reached = threading.Event()
        killer = threading.Thread(target=lambda: reached.wait(120) and entity.kill9())
        killer.start()
        try:
            for pid in range(1000, 100000):
                reply = conn.call(c.message("JOB_MAP", c.u32("pid", pid), c.string("service", "burst"),
                                            c.u32("job_id", pid % 0xFFFFFF or 1), seq=pid))
                assert reply["error"] == 0, reply
                acknowledged.append(pid)
                if len(acknowledged) == kill_at:
                    reached.set()
        except OSError:
            pass  # the connection died with the entity
        finally:
            reached.set()
        killer.join()
        assert len(acknowledged) >= kill_at, f"seed {seed}: the entity died after {len(acknowledged)} maps"
        entity.start()
        listed = {int(line.split()[0]) for line in entity.run_ctl("list", "--service", "burst").stdout.splitlines()}
        missing = [p for p in acknowledged if p not in listed]
        assert not missing, f"{len(missing)} acknowledged maps lost, first {missing[:5]}"

    def test_a_second_entity_on_the_same_socket_is_refused(self, entity, build_dir):
        r = subprocess.run([str(entity.binary), "--socket", str(entity.socket), "--store", str(entity.folder / "b.db")],
                           capture_output=True, text=True, timeout=10)
        assert r.returncode == 3 and "another entity already serves" in r.stderr

    def test_a_stale_socket_is_taken_over(self, entity):
        entity.kill9()  # leaves its socket file behind
        assert entity.socket.exists()
        entity.start()
        assert entity.run_ctl("list").returncode == 0


class TestCommandLine:
    def test_an_unopenable_store_is_named(self, build_dir, tmp_path):
        r = subprocess.run([str(build_dir / "bin" / "uet-entity"), "--socket", str(tmp_path / "s"), "--store",
                            "/nonexistent/e.db"], capture_output=True, text=True, timeout=10)
        assert r.returncode == 3 and "/nonexistent/e.db" in r.stderr

    def test_no_entity_is_exit_3_and_bad_usage_exit_2(self, build_dir, tmp_path):
        ctl = str(build_dir / "bin" / "uet-entity-ctl")
        r = subprocess.run([ctl, "--socket", str(tmp_path / "none"), "list"], capture_output=True, text=True, timeout=10)
        assert r.returncode == 3 and "no privileged entity answers at" in r.stderr
        r = subprocess.run([ctl, "map", "--pid", "1", "--service", "s", "--job", "0"], capture_output=True, text=True,
                           timeout=10)
        assert r.returncode == 2 and "--job" in r.stderr


def nest(name: str, *attrs: bytes) -> bytes:
    return c.attr(c.ATTR[name], b"".join(attrs), nested=True)


def nested(nest_name: str, field: str, v: int, fmt: str = "=I") -> bytes:
    return c.attr(c.NEST[nest_name][field], struct.pack(fmt, v))


def values(reply: dict, name: str) -> list[bytes]:
    return [v for aid, v in reply["attrs"] if aid == c.ATTR[name]]


class TestAddressAllocation:
    """ADDR_ALLOC, the endpoint-creation path (spec 2.2.5.3.5.1): this test process is both the launcher
    (root: it maps its own pid) and the process that opens an endpoint."""

    def allocate(self, conn, *extra):
        ip = c.attr(c.NEST["fep_address"]["ip"], bytes([198, 18, 0x12, 0x34]))
        return conn.call(c.message("ADDR_ALLOC", c.string("service", "svc"), nest("address", ip), *extra))

    def test_the_response_names_jobid_mode_pid_on_fep_initiator_and_bindings(self, entity):
        conn = c.Connection(entity.socket)
        binding = nest("sec_bindings", nested("security_binding", "sdi", 0x77), nested("security_binding", "job_id", 291))
        assert conn.call(c.message("JOB_MAP", c.u32("pid", os.getpid()), c.string("service", "svc"),
                                   c.u32("job_id", 291), c.u32("job_id", 292), binding))["error"] == 0
        reply = self.allocate(conn)
        assert reply["error"] == 0, reply
        assert struct.unpack("=I", values(reply, "job_id")[0])[0] == 291  # the first of several
        assert values(reply, "address_mode") == [bytes([c.SPEC["allocation"]["address_mode"]])]
        address = dict(c.parse_attrs(values(reply, "address")[0]))
        pid_on_fep = struct.unpack("=H", address[c.NEST["fep_address"]["pid_on_fep"]])[0]
        assert pid_on_fep == c.SPEC["allocation"]["pid_on_fep_first"]
        initiator = struct.unpack("=I", address[c.NEST["fep_address"]["initiator_id"]])[0]
        assert initiator == ((0xC6121234 & 0xFFFFF) << 12 | pid_on_fep)  # low 20 bits of 198.18.18.52, then the PIDonFEP
        bindings = [dict(c.parse_attrs(b)) for b in values(reply, "sec_bindings")]
        assert [struct.unpack("=I", b[c.NEST["security_binding"]["sdi"]])[0] for b in bindings] == [0x77]
        # The same process keeps its PIDonFEP; a JobID it asks for is given only when granted.
        asked = self.allocate(conn, c.u32("job_id", 292))
        assert struct.unpack("=I", values(asked, "job_id")[0])[0] == 292
        refused = self.allocate(conn, c.u32("job_id", 293))
        assert refused["error"] == 13 and "JobID 293 is not granted" in refused["what"]  # EACCES

    def test_a_process_without_a_map_gets_no_address(self, entity):
        reply = self.allocate(c.Connection(entity.socket))
        assert reply["error"] == 2 and "no JobID is mapped to pid" in reply["what"]  # ENOENT

    def test_pid_on_fep_is_given_back_when_the_last_map_goes(self, entity):
        conn = c.Connection(entity.socket)
        me = c.u32("pid", os.getpid())
        # Another process holds the first PIDonFEP...
        assert conn.call(c.message("JOB_MAP", c.u32("pid", 1), c.string("service", "svc"), c.u32("job_id", 5)))["error"] == 0
        assert conn.call(c.message("JOB_MAP", me, c.string("service", "svc"), c.u32("job_id", 5)))["error"] == 0
        first = dict(c.parse_attrs(values(self.allocate(conn), "address")[0]))[c.NEST["fep_address"]["pid_on_fep"]]
        assert conn.call(c.message("JOB_UNMAP", me, c.string("service", "svc")))["error"] == 0
        assert conn.call(c.message("JOB_MAP", me, c.string("service", "svc"), c.u32("job_id", 6)))["error"] == 0
        again = dict(c.parse_attrs(values(self.allocate(conn), "address")[0]))[c.NEST["fep_address"]["pid_on_fep"]]
        assert first == again  # the lowest free one, taken again


class TestKeys:
    KEY = bytes(range(32))

    def test_a_key_goes_only_to_a_process_of_its_job(self, entity):
        conn = c.Connection(entity.socket)
        update = c.message("KEY_UPDATE", c.u32("sdi", 9), c.attr(c.ATTR["key"], self.KEY),
                           c.attr(c.ATTR["epoch"], struct.pack("=H", 3)), c.u32("job_id", 291))
        assert conn.call(update)["error"] == 0
        request = c.message("KEY_REQUEST", c.u32("sdi", 9))
        refused = conn.call(request)
        assert refused["error"] == 13 and "bound to JobID 291" in refused["what"]
        assert conn.call(c.message("JOB_MAP", c.u32("pid", os.getpid()), c.string("service", "s"),
                                   c.u32("job_id", 291)))["error"] == 0
        reply = conn.call(request)
        assert reply["error"] == 0 and values(reply, "key") == [self.KEY]
        assert values(reply, "epoch") == [struct.pack("=H", 3)]

    # Another process, connected, waits 1 s for anything the entity sends it unasked.
    BYSTANDER = ("import socket, sys\n"
                 "s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET); s.connect(sys.argv[1]); s.settimeout(1)\n"
                 "print('ready', flush=True)\n"
                 "try:\n    print('sent', len(s.recv(65536)))\nexcept TimeoutError:\n    print('nothing')\n")

    def test_an_update_is_sent_unasked_to_each_process_that_asked_before_the_update_returns(self, entity):
        asker = c.Connection(entity.socket)
        assert asker.call(c.message("JOB_MAP", c.u32("pid", os.getpid()), c.string("service", "s"),
                                    c.u32("job_id", 292)))["error"] == 0
        r = entity.run_ctl("key-update", "--sdi", 10, "--key", self.KEY.hex(), "--epoch", 1, "--job", 292)
        assert r.returncode == 0, r.stderr
        assert values(asker.call(c.message("KEY_REQUEST", c.u32("sdi", 10))), "epoch") == [struct.pack("=H", 1)]
        bystander = subprocess.Popen(["/usr/bin/python3", "-c", self.BYSTANDER, str(entity.socket)],
                                     stdout=subprocess.PIPE, text=True)
        assert bystander.stdout.readline().strip() == "ready"
        new_key = bytes(reversed(self.KEY))
        r = entity.run_ctl("key-update", "--sdi", 10, "--key", new_key.hex(), "--epoch", 2, "--job", 292)
        assert r.returncode == 0, r.stderr
        # Waiting already when the administrator's command returned: KEY_REQUEST's reply, sequence number 0.
        asker.sock.setblocking(False)
        pushed = asker.receive()
        assert pushed["seq"] == 0 and pushed["cmd"] == c.CMD["KEY_REQUEST"]
        assert values(pushed, "key") == [new_key] and values(pushed, "epoch") == [struct.pack("=H", 2)]
        out, _ = bystander.communicate(timeout=10)
        assert out.strip() == "nothing"  # a process that never asked is sent nothing

    def test_a_key_update_needs_a_key_of_the_right_length(self, entity):
        r = entity.run_ctl("key-update", "--sdi", 10, "--key", "abcd", "--epoch", 1)
        assert r.returncode == 2 and "--key abcd is not 32 bytes of hex" in r.stderr

    def test_only_root_updates_keys_and_an_unknown_domain_is_named(self, entity):
        r = entity.run_ctl("list", user=NOBODY)  # the same rule as every admin command
        assert r.returncode == 1 and "needs the administrator" in r.stderr
        reply = c.Connection(entity.socket).call(c.message("KEY_REQUEST", c.u32("sdi", 12)))
        assert reply["error"] == 2 and "no key for secure domain 12" in reply["what"]


class TestDump:
    def test_a_long_list_comes_in_several_replies_then_done(self, entity):
        conn = c.Connection(entity.socket)
        for pid in range(1, 601):
            assert conn.call(c.message("JOB_MAP", c.u32("pid", pid), c.string("service", "many"),
                                       c.u32("job_id", pid)))["error"] == 0
        parts = conn.call_all(c.message("JOB_LIST"))
        assert len(parts) >= 2 and all(p["multi"] for p in parts)
        maps = [v for p in parts for aid, v in p["attrs"] if aid == c.ATTR["map"]]
        assert len(maps) == 600
        assert {struct.unpack("=I", v)[0] for p in parts for aid, v in p["attrs"] if aid == c.ATTR["count"]} == {600}
        assert len(entity.run_ctl("list").stdout.splitlines()) == 600
