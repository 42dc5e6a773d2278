"""uet-agent (containers/agent) through the harness's client (containers/agent_client.py): it starts what it
is asked with exactly the environment given, reports each end with the wait status and CPU time, names
what it cannot do, and never lets a process outlive the connection that asked for it."""
import json
import os
import pathlib
import signal
import subprocess
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

from containers import agent_client  # noqa: E402
from containers.agent_client import AgentError, AgentProcess  # noqa: E402

PATH = {"PATH": "/usr/bin:/bin"}


@pytest.fixture
def secret(tmp_path):
    """The run's secret, in its 0600 file."""
    return agent_client.RunSecret.make(tmp_path)


@pytest.fixture
def agent(build_dir, tmp_path, secret):
    """A running uet-agent on a unix socket and on TCP loopback; yields {"unix", "tcp", "pid", "secret"}."""
    sock = tmp_path / "agent.sock"
    proc = subprocess.Popen([str(build_dir / "bin" / "uet-agent"), "--listen", f"unix:{sock}", "--listen",
                             "[127.0.0.1]:0", "--secret-file", str(secret.path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()  # the agent prints it once both listeners are up (or exits)
    assert line, proc.stderr.read()
    said = json.loads(line)
    yield {"unix": said["listen"][0], "tcp": said["listen"][1], "pid": proc.pid, "secret": secret.value}
    if proc.poll() is None:  # one test kills it on purpose
        proc.terminate()
        assert proc.wait(timeout=10) == 0


class TestSpawn:
    def test_hello_names_the_agent(self, agent):
        said = agent_client.hello(agent["unix"], agent["secret"])
        assert said["event"] == "hello" and said["pid"] == agent["pid"]

    def test_exit_status_output_and_exact_environment(self, agent, tmp_path):
        out = tmp_path / "out.log"
        out.write_text("before\n")
        p = AgentProcess(agent["tcp"], ["sh", "-c", "env | sort; exit 3"], {**PATH, "ONLY_THIS": "x y"},
                         output=str(out), cwd=str(tmp_path), secret=agent["secret"])
        assert p.wait(10) == 3
        lines = out.read_text().splitlines()
        assert lines[0] == "before"  # appended to, never truncated
        assert sorted(lines[1:]) == sorted(["ONLY_THIS=x y", "PATH=/usr/bin:/bin", f"PWD={tmp_path}"])

    def test_a_signal_death_is_reported_with_its_signal(self, agent):
        p = AgentProcess(agent["unix"], ["sh", "-c", "kill -TERM $$"], PATH, secret=agent["secret"])
        assert p.wait(10) == -signal.SIGTERM
        assert os.WIFSIGNALED(p.status) and os.WTERMSIG(p.status) == signal.SIGTERM

    def test_cpu_time_is_reported(self, agent):
        p = AgentProcess(agent["unix"], ["sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"], PATH, secret=agent["secret"])
        assert p.wait(30) == 0
        assert p.cpu_seconds > 0.01

    def test_kill_reaches_the_whole_process_group(self, agent, tmp_path, wait_gone):
        p = AgentProcess(agent["unix"], ["sh", "-c", f"sleep 60 & echo $! > {tmp_path}/child; wait"], PATH, secret=agent["secret"])
        deadline = time.monotonic() + 120  # against a hang only: a loaded host may take seconds to start sh
        while not (tmp_path / "child").exists() or not (tmp_path / "child").read_text().strip():
            assert time.monotonic() < deadline
            time.sleep(0.01)  # a poll inside a deadline
        child = int((tmp_path / "child").read_text())
        p.kill(signal.SIGKILL)
        assert p.wait(10) == -signal.SIGKILL
        assert wait_gone(child)

    def test_a_process_does_not_outlive_its_asker(self, agent, tmp_path, wait_gone):
        p = AgentProcess(agent["unix"], ["sleep", "60"], PATH, secret=agent["secret"])
        pid = p.pid
        p.close()  # the harness went away without waiting
        assert wait_gone(pid)


class TestRefusals:
    def test_a_program_that_cannot_start_is_named(self, agent):
        with pytest.raises(AgentError, match=r"cannot start /no/such/program in /: No such file or directory"):
            AgentProcess(agent["unix"], ["/no/such/program"], PATH, secret=agent["secret"])

    def test_an_output_that_cannot_be_opened_is_named(self, agent):
        with pytest.raises(AgentError, match=r"cannot open output /no/such/dir/log"):
            AgentProcess(agent["unix"], ["true"], PATH, output="/no/such/dir/log", secret=agent["secret"])

    def test_a_bad_request_is_answered_and_the_agent_serves_on(self, agent):
        import socket
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(agent["unix"][len("unix:"):])
            got = b""
            while got.count(b"\n") < 1:
                chunk = s.recv(4096)
                assert chunk
                got += chunk
            nonce = json.loads(got.splitlines()[0])["nonce"]
            auth = json.dumps({"op": "auth", "mac": agent_client.answer(agent["secret"], nonce)}).encode()
            s.sendall(auth + b'\n{"op":"spawn","argv":[]}\nnot json\n')
            got = got.split(b"\n", 1)[1]
            while got.count(b"\n") < 2:
                chunk = s.recv(4096)
                assert chunk
                got += chunk
        first, second = [json.loads(x) for x in got.splitlines()[:2]]
        assert first == {"event": "error", "message": "bad request: argv is empty"}
        assert second == {"event": "error", "message": "bad request: not JSON"}
        assert agent_client.hello(agent["unix"], agent["secret"])["pid"] == agent["pid"]

    def test_an_agent_that_is_not_there_is_named(self, tmp_path):
        with pytest.raises(AgentError, match=r"did not answer within 0.2 s"):
            agent_client.hello(f"unix:{tmp_path}/none.sock", "x" * 64, timeout=0.2)

    def test_a_lost_agent_ends_the_wait(self, agent, wait_gone):
        p = AgentProcess(agent["unix"], ["sleep", "60"], PATH, secret=agent["secret"])
        pid = p.pid
        os.kill(agent["pid"], signal.SIGKILL)
        assert p.wait(10) is None and p.lost
        assert wait_gone(agent["pid"])
        os.kill(pid, signal.SIGKILL)  # orphaned by the agent's death: this test's to stop

    def test_sigterm_stops_the_agent_and_what_it_started(self, build_dir, tmp_path, secret, wait_gone):
        proc = subprocess.Popen([str(build_dir / "bin" / "uet-agent"), "--listen", f"unix:{tmp_path}/a.sock",
                                 "--secret-file", str(secret.path)], stdout=subprocess.PIPE, text=True)
        proc.stdout.readline()
        p = AgentProcess(f"unix:{tmp_path}/a.sock", ["sleep", "60"], PATH, secret=secret.value)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
        assert wait_gone(p.pid)

    def test_a_bad_listen_address_is_named(self, build_dir, secret):
        got = subprocess.run([str(build_dir / "bin" / "uet-agent"), "--listen", "nowhere", "--secret-file", str(secret.path)],
                             capture_output=True, text=True, timeout=10)
        assert got.returncode == 2
        assert "'nowhere' is neither unix:PATH nor [address]:port" in got.stderr
