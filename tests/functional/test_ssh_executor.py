"""SshExecutor against a real sshd running in a network namespace (no mocks)."""

import json
import logging
import secrets
import select
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from nsb.errors import PrerequisiteError, RunError
from nsb.executors.ssh import SshExecutor
from tests.conftest import requires_root
from tests.functional.sshd_node import PREFIX, sshd_node


@pytest.fixture
def executor(node):
    ex = SshExecutor("vnf_0", node.host, key_filename=node.key_filename,
                     run_id=f"test{secrets.token_hex(3)}")
    yield ex
    ex.stop_all()
    ex.close()


def live(pred) -> list[int]:
    """Pids of processes (not zombies) whose (pgid, cmdline) satisfy ``pred``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            cmdline = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        state, _ppid, pgid = text[text.rindex(")") + 2:].split()[:3]
        if state != "Z" and pred(int(pgid), cmdline):
            found.append(int(stat.parent.name))
    return found


def in_group(pgid: int) -> list[int]:
    return live(lambda group, _cmd: group == pgid)


def eventually(check, timeout: float = 10.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not met within {timeout} s (last: {value!r})")
        time.sleep(0.1)


def remote_exists(node, path: str) -> bool:
    return node.ns("test", "-e", path).returncode == 0


# commands

def test_run_returns_output_and_exit_codes(executor, node):
    result = executor.run(["sh", "-c", "echo out; echo err >&2; exit 3"], check=False)
    assert (result.returncode, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert f"inet {node.host}/30" in executor.run(["ip", "-4", "-o", "addr", "show"]).stdout
    assert executor.run(["cat"], input="line one\nline two\n").stdout == "line one\nline two\n"
    with pytest.raises(RunError) as failed:
        executor.run(["sh", "-c", "echo first >&2; echo 'the real reason' >&2; exit 4"])
    assert str(failed.value).startswith("vnf_0: ")
    assert "exit 4" in str(failed.value) and "the real reason" in str(failed.value)
    with pytest.raises(PrerequisiteError, match="vnf_0: command not found: no-such-binary"):
        executor.run(["no-such-binary", "--help"])
    assert executor.which("sh") in ("/usr/bin/sh", "/bin/sh")
    assert executor.which("no-such-binary") is None


def test_run_timeout_raises_and_leaves_nothing_running(executor):
    marker = f"{secrets.randbelow(10**6) + 10**6}.5"  # a unique sleep length
    with pytest.raises(RunError, match=r"vnf_0: sleep did not finish within 1 s"):
        executor.run(["sleep", marker], timeout=1)
    eventually(lambda: not live(lambda _g, cmd: f"sleep {marker}" in cmd), timeout=15,
               what="timed-out command killed on the node")


def test_arguments_arrive_intact(executor, node):
    args = ["two words", "it's", 'say "hi"', "$HOME", "a;b", "`id`", "$(id)", "*", "",
            "line\nbreak", "back\\slash", "-n"]
    code = "import json, sys; print(json.dumps(sys.argv[1:]))"
    assert json.loads(executor.run(["python3", "-c", code, *args]).stdout) == args
    # nothing ran that the arguments spelled: no file from a pasted redirection
    target = f"/tmp/{PREFIX}quoting-{secrets.token_hex(3)}"
    executor.run(["echo", f"> {target}"])
    assert not remote_exists(node, target)


# long-running processes

def test_start_logs_on_the_node_and_stop_leaves_nothing(executor, node, tmp_path):
    log = tmp_path / "results" / "vnf_0-sleeper.log"
    process = executor.start(["sh", "-c", "echo started; sleep 1000"], log_path=str(log))
    assert process.argv == ["sh", "-c", "echo started; sleep 1000"]
    assert process.log_path == str(log)
    eventually(lambda: "started" in executor.read_file(str(log)), what="log visible")
    assert log.read_text() == "started\n"            # copied into the results directory
    assert process.poll() is None
    assert len(in_group(process.pid)) >= 2           # sh wrapper, sh -c, sleep
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(0.5)
    remote_logs = node.ns("sh", "-c", f"cat {executor.run_dir}/*sleeper.log").stdout
    assert remote_logs == "started\n"                # the log lives on the node
    assert process.stop(grace_s=5) == -signal.SIGTERM
    assert in_group(process.pid) == []
    assert process.poll() == -signal.SIGTERM
    assert log.read_text() == "started\n"            # appended once, not twice


def test_exit_code_and_both_streams_in_log(executor, tmp_path):
    log = tmp_path / "exits.log"
    process = executor.start(["sh", "-c", "echo to-out; echo to-err >&2; exit 7"],
                             log_path=str(log))
    assert process.wait(20) == 7
    assert sorted(log.read_text().split()) == ["to-err", "to-out"]
    second = executor.start(["sh", "-c", "echo second"], log_path=str(log))
    assert second.wait(20) == 0
    assert executor.read_file(str(log)).split().count("second") == 1  # same log, appended


def test_stop_kills_a_group_that_ignores_sigterm(executor):
    process = executor.start(["sh", "-c", "trap '' TERM; sleep 1000"])
    eventually(lambda: len(in_group(process.pid)) >= 3, what="sleep started")
    assert process.stop(grace_s=1) == -signal.SIGKILL
    assert in_group(process.pid) == []


def test_start_missing_binary_is_a_prerequisite_error(executor):
    with pytest.raises(PrerequisiteError, match="vnf_0: command not found: no-such-vnf"):
        executor.start(["no-such-vnf", "-x"])


def test_signal_reaches_the_process_group(executor, tmp_path):
    log = tmp_path / "sig.log"
    process = executor.start(["sh", "-c", "trap 'echo got-usr1; exit 5' USR1; "
                              "echo ready; while :; do sleep 0.1; done"], log_path=str(log))
    eventually(lambda: "ready" in executor.read_file(str(log)), what="ready")
    process.signal(signal.SIGUSR1)
    assert process.wait(20) == 5
    assert "got-usr1" in log.read_text()


def test_pipes_connect_stdin_and_stdout(executor, tmp_path):
    log = tmp_path / "pipes.log"
    cat = executor.start(["cat"], log_path=str(log), pipes=True)
    cat.write_line("hello over ssh")
    assert cat.read_line(10) == "hello over ssh"
    cat.write_line("second")
    assert cat.read_line(10) == "second"
    with pytest.raises(subprocess.TimeoutExpired):
        cat.read_line(0.3)
    assert cat.poll() is None
    cat.stop(grace_s=5)
    assert in_group(cat.pid) == []
    with pytest.raises(EOFError):
        cat.read_line(5)
    with pytest.raises(BrokenPipeError):
        cat.write_line("too late")

    script = 'read x; echo "got $x"; echo "to-log" >&2; echo last'
    proc = executor.start(["sh", "-c", script], log_path=str(log), pipes=True)
    proc.write_line("abc")
    assert proc.wait(20) == 0
    assert proc.read_all(10) == "got abc\nlast\n"    # stdout only, no pid line
    assert log.read_text() == "to-log\n"             # stderr went to the log


# files

def test_write_read_put_get(executor, node, tmp_path):
    base = f"/tmp/{PREFIX}files-{secrets.token_hex(3)}"
    try:
        executor.write_file(f"{base}/deep/dir/conf.txt", "key = 'value'\n")
        assert node.ns("cat", f"{base}/deep/dir/conf.txt").stdout == "key = 'value'\n"
        assert executor.read_file(f"{base}/deep/dir/conf.txt") == "key = 'value'\n"
        payload = bytes(range(256)) * 1000
        (tmp_path / "up.bin").write_bytes(payload)
        executor.put(str(tmp_path / "up.bin"), f"{base}/other/up.bin")
        assert node.ns("sha256sum", f"{base}/other/up.bin").stdout.split()[0] == \
            subprocess.run(["sha256sum", str(tmp_path / "up.bin")], capture_output=True,
                           text=True).stdout.split()[0]
        executor.get(f"{base}/other/up.bin", str(tmp_path / "back" / "down.bin"))
        assert (tmp_path / "back" / "down.bin").read_bytes() == payload
        with pytest.raises(FileNotFoundError):
            executor.read_file(f"{base}/missing")
    finally:
        node.ns("rm", "-rf", base)


# TCP to the node's loopback

ECHO_SERVER = """
import socket, sys
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", int(sys.argv[1])))
server.listen()
print("listening", flush=True)
while True:
    conn, _ = server.accept()
    with conn, conn.makefile("rwb") as f:
        for line in f:
            f.write(b"echo " + line)
            f.flush()
"""


def test_connect_tcp_reaches_the_nodes_loopback(executor, tmp_path):
    with pytest.raises(ConnectionRefusedError):
        executor.connect_tcp(8475)
    log = tmp_path / "echo.log"
    executor.start(["python3", "-c", ECHO_SERVER, "8474"], log_path=str(log))
    eventually(lambda: "listening" in executor.read_file(str(log)), what="server listening")
    sock = executor.connect_tcp(8474, timeout=5)
    try:
        sock.settimeout(5)
        sock.sendall(b"version\n")
        ready, _, _ = select.select([sock], [], [], 5)
        assert ready == [sock]
        assert sock.fileno() >= 0
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = sock.recv(100)
            assert chunk, "connection closed before the reply"
            reply += chunk
        assert reply == b"echo version\n"
    finally:
        sock.close()


# dropped connections and authentication

def test_dropped_connection_reconnects_once_and_says_so(executor, node, caplog):
    sleeper = executor.start(["sleep", "1000"])
    assert executor.run(["true"]).returncode == 0
    sessions = node.session_pids()
    assert sessions, "no sshd session process below the listener"
    caplog.set_level(logging.WARNING, logger="nsb.executors.ssh")
    for pid in sessions:
        subprocess.run(["kill", "-KILL", str(pid)], check=True)
    assert executor.run(["echo", "after"]).stdout == "after\n"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "ssh to node vnf_0" in warnings[0] \
        and "reconnected" in warnings[0], warnings
    assert not set(sessions) & set(node.session_pids())     # a new session
    assert sleeper.poll() is None                          # detached: it survived
    assert sleeper.stop(grace_s=5) == -signal.SIGTERM
    assert in_group(sleeper.pid) == []


def test_connection_dropped_mid_command_retries_it(executor, node, caplog):
    marker = f"nsb-mid-{secrets.token_hex(3)}"
    outcome = {}

    def slow():
        outcome["result"] = executor.run(["sh", "-c", f"sleep 1.5; echo {marker}", marker])

    executor.connect()
    caplog.set_level(logging.WARNING, logger="nsb.executors.ssh")
    thread = threading.Thread(target=slow)
    thread.start()
    eventually(lambda: live(lambda _g, cmd: f"echo {marker}" in cmd), what="command running")
    for pid in node.session_pids():
        subprocess.run(["kill", "-KILL", str(pid)], check=True)
    thread.join(30)
    assert outcome["result"].stdout == f"{marker}\n"
    assert any("dropped" in r.getMessage() and "reconnected" in r.getMessage()
               for r in caplog.records)


def test_second_failure_is_a_run_error_naming_the_node(tmp_path):
    requires_root()
    with sshd_node() as lone:
        executor = SshExecutor("tg_0", lone.host, key_filename=lone.key_filename,
                               connect_timeout=3)
        assert executor.run(["true"]).returncode == 0
        sessions = lone.session_pids()
        assert sessions
        lone.sshd.kill()                        # no listener: reconnecting cannot work
        lone.sshd.wait(5)
        for pid in sessions:
            subprocess.run(["kill", "-KILL", str(pid)], check=True)
        with pytest.raises(RunError) as failed:
            executor.run(["true"])
        message = str(failed.value)
        assert "node tg_0" in message and lone.host in message and "reconnecting failed" \
            in message
        executor.close()


def test_wrong_key_names_the_node_and_hides_the_key(node, tmp_path):
    wrong = tmp_path / "wrong_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(wrong)],
                   check=True)
    executor = SshExecutor("vnf_0", node.host, key_filename=str(wrong),
                           password="pw-never-shown")
    assert "pw-never-shown" not in repr(executor)
    with pytest.raises(PrerequisiteError) as failed:
        executor.run(["true"])
    message = str(failed.value)
    assert message.startswith(f"node vnf_0 (root@{node.host}:22): authentication failed "
                              f"with key {wrong}")
    secret_lines = [line for line in wrong.read_text().splitlines() if "-----" not in line]
    public = (tmp_path / "wrong_key.pub").read_text().split()[1]
    for secret in [*secret_lines, public, "pw-never-shown"]:
        assert secret not in message
    assert "\n" not in message


def test_unreachable_port_names_node_host_and_port(node):
    executor = SshExecutor("vnf_1", node.host, port=2222, key_filename=node.key_filename,
                           connect_timeout=3)
    with pytest.raises(PrerequisiteError) as failed:
        executor.connect()
    assert str(failed.value).startswith(f"node vnf_1 (root@{node.host}:2222): cannot connect: ")


# teardown

def test_stop_all_and_node_teardown_leave_nothing(tmp_path):
    requires_root()
    with sshd_node() as lone:
        netns, config = lone.netns, str(lone.workdir / "sshd_config")
        executor = SshExecutor("vnf_0", lone.host, key_filename=lone.key_filename,
                               run_id=f"test{secrets.token_hex(3)}")
        log = tmp_path / "all.log"
        started = [executor.start(["sh", "-c", "echo a; sleep 1000"], log_path=str(log)),
                   executor.start(["sleep", "1001"]),
                   executor.start(["cat"], log_path=str(log), pipes=True)]
        spawner = executor.start(["sh", "-c", "sleep 1002 & echo spawned"])
        assert spawner.wait(20) == 0
        eventually(lambda: live(lambda g, cmd: g == spawner.pid and "1002" in cmd),
                   what="background child left running")
        eventually(lambda: "a" in executor.read_file(str(log)), what="first log line")
        assert remote_exists(lone, executor.run_dir)
        executor.stop_all()
        assert not remote_exists(lone, executor.run_dir)
        for process in [*started, spawner]:
            assert in_group(process.pid) == []
        assert not live(lambda _g, cmd: executor.run_dir in cmd)
        assert log.read_text() == "a\n"
        executor.close()
        eventually(lambda: lone.session_pids() == [], what="ssh session closed")
    assert netns not in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                       text=True).stdout
    assert f"nsbs{netns[len(PREFIX):]}" not in subprocess.run(
        ["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    assert not live(lambda _g, cmd: config in cmd)
    assert not Path(config).exists()
