"""Run commands in a pod's container through the Kubernetes API's exec (no SSH into
pods): each command is one exec; a long-running program is started in the background
inside the container, its process group and exit code kept in files there."""

from __future__ import annotations

import base64
import logging
import os
import shlex
import signal
import subprocess
import time
import uuid
from pathlib import Path

from nsb.errors import RunError
from nsb.executors.base import CommandResult, Executor, Process, tail

LOG = logging.getLogger(__name__)

PROC_DIR = "/tmp/nsb-proc"  # in the container: each started program's pid and exit code


def _stream():
    from kubernetes import stream  # the kubernetes extra; imported where a pod is reached

    return stream


class PodExecutor(Executor):
    """Commands in container ``container`` of pod ``pod`` (namespace ``namespace``)."""

    def __init__(self, core_api, namespace: str, pod: str, container: str):
        self.api = core_api
        self.namespace = namespace
        self.pod = pod
        self.container = container
        self.name = f"pod {namespace}/{pod}"
        self.facts: dict = {}  # the pod, its images and the cluster's version (platform facts)
        self._processes: list[PodProcess] = []
        self._logs: dict[str, str] = {}  # a process's log_path -> its log in the pod

    def exec_stream(self, argv: list[str], stdin: bool = False):
        """An open exec session (the kubernetes client's WSClient)."""
        return _stream().stream(
            self.api.connect_get_namespaced_pod_exec, self.pod, self.namespace,
            container=self.container, command=list(argv), stdin=stdin, stdout=True,
            stderr=True, tty=False, _preload_content=False)

    def run(self, argv, *, timeout=60.0, check=True, input=None) -> CommandResult:
        argv = list(argv)
        if input is not None:  # no half-close of stdin over exec: the input is an argument
            encoded = base64.b64encode(input.encode()).decode()
            argv = ["sh", "-c", 'echo "$0" | base64 -d | "$@"', encoded, *argv]
        try:
            session = self.exec_stream(argv)
        except Exception as exc:  # the API refused the exec (pod gone, not running)
            raise RunError(f"{self.name}: exec of {argv[0]} failed: {exc}") from None
        stdout, stderr = [], []
        deadline = time.monotonic() + timeout
        try:
            while session.is_open():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RunError(f"{self.name}: {argv[0]} did not finish within {timeout:g} s")
                session.update(timeout=min(left, 1.0))
                stdout.append(session.read_stdout(timeout=0) if session.peek_stdout() else "")
                stderr.append(session.read_stderr(timeout=0) if session.peek_stderr() else "")
            returncode = session.returncode
        finally:
            session.close()
        result = CommandResult(argv, returncode if returncode is not None else -1,
                               "".join(stdout), "".join(stderr))
        if returncode == 127 or "executable file not found" in result.stderr:
            result.returncode = 127
        if check and result.returncode != 0:
            raise RunError(f"{self.name}: {' '.join(argv)} failed (exit {result.returncode}): "
                           f"{tail(result.stderr or result.stdout, 3)}")
        return result

    def start(self, argv, *, log_path=None, pipes=False) -> PodProcess:
        tag = uuid.uuid4().hex[:12]
        base = f"{PROC_DIR}/{tag}"
        # the log is written in the pod; log_path, on this machine, is its copy
        log = f"{base}.log" if log_path else "/dev/null"
        if log_path:
            self._logs[log_path] = log
        command = shlex.join(list(argv))
        # its own session (the group to signal); the exit code kept when it ends
        wrapper = (f"echo $$ > {base}.pid; {command} 2>>{log}"
                   + ("" if pipes else f" >>{log}") + f"; echo $? > {base}.rc")
        if pipes:
            session = self.exec_stream(["setsid", "sh", "-c", f"mkdir -p {PROC_DIR}; {wrapper}"],
                                       stdin=True)
        else:
            self.run(["sh", "-c", f"mkdir -p {PROC_DIR}; setsid sh -c {shlex.quote(wrapper)} "
                      f"</dev/null >/dev/null 2>&1 &"])
            session = None
        process = PodProcess(self, list(argv), log_path, base, session)
        self._processes.append(process)
        return process

    def write_file(self, path: str, content: str) -> None:
        self.run(["sh", "-c", 'mkdir -p "$(dirname "$1")" && cat > "$1"', "sh", path],
                 input=content)

    def read_file(self, path: str) -> str:
        """A file in the pod; a process's ``log_path`` is copied here first, then read."""
        if path in self._logs:
            self._sync_log(path)
            return Path(path).read_text(errors="replace") if os.path.exists(path) else ""
        return self.run(["cat", path], timeout=30).stdout

    def _sync_log(self, path: str) -> None:
        try:
            text = self.run(["cat", self._logs[path]], timeout=30, check=False).stdout
        except RunError as exc:  # the pod is gone: the copy keeps what it had
            LOG.debug("%s: log %s not refreshed: %s", self.name, path, exc)
            return
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)

    def connect_tcp(self, port, host="127.0.0.1", timeout=5.0):
        """A port-forward to the pod's ``port`` (the API server relays it)."""
        if host not in ("127.0.0.1", "localhost"):
            raise OSError(f"{self.name}: only the pod's own ports can be reached, not {host}")
        forward = _stream().portforward(
            self.api.connect_get_namespaced_pod_portforward, self.pod, self.namespace,
            ports=str(port))
        sock = forward.socket(port)
        sock.settimeout(timeout)
        error = forward.error(port)
        if error:
            raise ConnectionRefusedError(error)
        return sock

    def stop_all(self) -> None:
        for process in reversed(self._processes):
            try:
                process.stop(grace_s=3.0)
            except RunError as exc:  # the pod may be gone already
                LOG.debug("%s: %s", self.name, exc)
        self._processes.clear()
        for path in self._logs:  # the results keep the programs' logs
            self._sync_log(path)


class PodProcess(Process):
    """A program started in a pod's container, known by the pid file its wrapper wrote."""

    def __init__(self, executor: PodExecutor, argv: list[str], log_path: str | None,
                 base: str, session):
        self.executor = executor
        self.argv = argv
        self.log_path = log_path
        self.base = base
        self.session = session
        self._returncode: int | None = None
        self._buffer = ""

    def _state(self) -> tuple[str, str]:
        """(pid, exit code) as the wrapper left them ('' where not written yet)."""
        out = self.executor.run(["sh", "-c", f"cat {self.base}.pid 2>/dev/null; echo /; "
                                 f"cat {self.base}.rc 2>/dev/null"], check=False).stdout
        pid, _, code = out.partition("/")
        return pid.strip(), code.strip()

    def poll(self) -> int | None:
        if self._returncode is None:
            pid, code = self._state()
            if code:
                self._returncode = int(code)
            elif pid and self.executor.run(["kill", "-0", pid], check=False).returncode != 0:
                self._returncode = -signal.SIGKILL  # gone without its wrapper
        return self._returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(self.argv, timeout)
            time.sleep(0.2)
        return self._returncode

    def signal(self, signum: int) -> None:
        pid, _ = self._state()
        if pid:
            self.executor.run(["kill", f"-{int(signum)}", "--", f"-{pid}"], check=False)

    def stop(self, grace_s: float = 5.0) -> int | None:
        if self.poll() is None:
            self.signal(signal.SIGTERM)
            try:
                self.wait(grace_s)
            except subprocess.TimeoutExpired:
                LOG.warning("%s ignored SIGTERM for %.1f s; killing it", self.argv[0], grace_s)
        self.signal(signal.SIGKILL)
        if self.session is not None:
            self.session.close()
        return self._returncode

    def write_line(self, line: str) -> None:
        self.session.write_stdin(line + "\n")

    def _fill(self, deadline: float) -> bool:
        """More output into the buffer; False once the program closed it."""
        if not self.session.is_open():
            return False
        self.session.update(timeout=max(0.0, min(0.5, deadline - time.monotonic())))
        if self.session.peek_stdout():
            self._buffer += self.session.read_stdout(timeout=0)
        return True

    def read_line(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while "\n" not in self._buffer:
            if not self._fill(deadline):
                if self._buffer:
                    line, self._buffer = self._buffer, ""
                    return line
                raise EOFError(f"{self.argv[0]} closed its output")
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(self.argv, timeout)
        line, self._buffer = self._buffer.split("\n", 1)
        return line

    def read_all(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while self._fill(deadline):
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(self.argv, timeout)
        out, self._buffer = self._buffer, ""
        return out
