"""A SampleVNF's command line, on a pseudo-terminal.

The SampleVNFs read commands at a prompt (``pipeline>``, ``Replay>``) that ends
no line: written to a pipe it would sit in their output buffer. ``script``
(util-linux) runs the program on a pseudo-terminal, where the prompt is
written at once, and relays it, on every executor. After a command nsb sends
an empty line: the prompt that answers it ends the command's output, so a
command is done when a line holds the prompt alone.
"""

from __future__ import annotations

import collections
import re
import shlex
import subprocess
import threading
import time
from pathlib import Path

from nsb.errors import RunError
from nsb.executors.base import Executor, Process

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]")
NUDGE_S = 2.0  # without output this long, an empty line asks for a new prompt


def clean(line: str) -> str:
    return ANSI.sub("", line).replace("\r", "").rstrip()


class Console:
    """``argv`` under ``script`` (behind ``launcher``) on ``executor``; its output goes to
    ``log_path`` (a file on this machine) as it is read."""

    def __init__(self, executor: Executor, argv: list[str], prompt: str, log_path: str,
                 who: str, launcher: list[str] | None = None):
        self.executor, self.argv, self.prompt = executor, argv, prompt
        self.log_path, self.who = log_path, who
        self.launcher = list(launcher or [])  # what ``script`` itself runs under
        self.process: Process | None = None
        self.lines: collections.deque[str] = collections.deque(maxlen=400)
        self._lock = threading.Lock()

    def command_line(self) -> list[str]:
        return [*self.launcher, "script", "-qfec", shlex.join(self.argv), "/dev/null"]

    def start(self) -> Process:
        self.process = self.executor.start(self.command_line(), log_path=self.log_path,
                                           pipes=True)
        return self.process

    def tail(self, count: int = 12) -> str:
        return "\n".join(list(self.lines)[-count:])

    def _read(self, timeout: float) -> str | None:
        """The next line (None when none came within ``timeout``)."""
        try:
            line = clean(self.process.read_line(timeout))
        except subprocess.TimeoutExpired:
            return None
        except EOFError:
            raise RunError(f"{self.who}: {self.argv[0]} exited (code "
                           f"{self._exit_code()}); its last lines:\n{self.tail()}") from None
        self.lines.append(line)
        with Path(self.log_path).open("a") as log:
            log.write(line + "\n")
        return line

    def _exit_code(self):
        try:
            return self.process.wait(2)
        except subprocess.TimeoutExpired:
            return "none yet"

    def wait_prompt(self, timeout: float) -> None:
        """Return once the prompt showed; an empty line every few seconds asks again."""
        deadline = time.monotonic() + timeout
        quiet_since = time.monotonic()
        while time.monotonic() < deadline:
            line = self._read(0.5)
            if line is not None:
                quiet_since = time.monotonic()
                if self.prompt in line:
                    return
            elif time.monotonic() - quiet_since > NUDGE_S:
                self.process.write_line("")
                quiet_since = time.monotonic()
        raise RunError(f"{self.who}: no '{self.prompt}' prompt within {timeout:g} s "
                       f"(vnf_start_timeout in nsb.conf); its last lines:\n{self.tail()}")

    def command(self, text: str, timeout: float = 30.0) -> str:
        """``text`` at the prompt; its answer (the lines up to the next prompt)."""
        with self._lock:
            self.process.write_line(text)
            self.process.write_line("")
            deadline = time.monotonic() + timeout
            answer: list[str] | None = None
            while time.monotonic() < deadline:
                line = self._read(min(1.0, max(0.01, deadline - time.monotonic())))
                if line is None:
                    continue
                if answer is None:
                    if text in line:  # its echo: the answer follows
                        answer = []
                elif line.strip() == self.prompt.strip():
                    return "\n".join(answer)
                else:
                    answer.append(line)
        raise RunError(f"{self.who}: '{text}' got no answer within {timeout:g} s; its "
                       f"last lines:\n{self.tail()}")

    def quit(self, grace_s: float = 10.0) -> int | None:
        """``quit`` at the prompt, then the process stopped if it did not end."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            try:
                self.process.write_line("quit")
                self.process.wait(grace_s)
            except (OSError, subprocess.TimeoutExpired, ValueError):
                pass
        code = self.process.stop(grace_s=5.0)
        self.process = None
        return code
