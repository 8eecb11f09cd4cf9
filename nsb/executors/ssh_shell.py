"""The ``sh`` snippets that start and watch a detached process on an SSH node.

Kept apart as plain text and pure parsing so that the executor (which
launches) and the process (which polls, waits and signals) share them without
depending on each other.
"""

from __future__ import annotations

import re
import shlex
import signal
from collections.abc import Iterable

# $1 status file, then the command. "nsb-pid PID" (or "nsb-missing") goes to fd 3,
# which is then closed; signals stop the command, and the shell still records its
# status (its own messages, such as "Terminated", stay out of the log).
WRAPPER = ('status=$1; shift; '
            'command -v "$1" >/dev/null 2>&1 || { echo nsb-missing >&3; exit 127; }; '
            'echo "nsb-pid $$" >&3; exec 3>&- 4>&2 2>/dev/null; '
            'trap : HUP INT QUIT TERM USR1 USR2 ALRM; '
            "sh -c 'exec 2>&4 4>&-; exec \"$@\"' sh \"$@\"; echo \"$?\" > \"$status\"")
# $1 status file, $2 pid: prints the exit status, "running" or "gone" (zombies are gone)
_ALIVE = 's=$(cat /proc/"$2"/stat 2>/dev/null) && s=${s##*) } && [ "${s%% *}" != Z ]'
POLL = f'if [ -s "$1" ]; then cat "$1"; elif {_ALIVE}; then echo running; else echo gone; fi'
WAIT = f'while [ ! -s "$1" ] && {_ALIVE}; do sleep 0.05; done'
# $1 signal name, $2 process group
SIGNAL = 'kill -s "$1" -- "-$2" 2>/dev/null; :'
# every argument a process group to SIGKILL
KILL_GROUPS = 'for g; do kill -s KILL -- "-$g" 2>/dev/null; done; :'


def slug(text: str) -> str:
    """``text`` made safe (and short enough) for a file name on the node."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:40]


def launch_command(run_dir: str, status_path: str, argv: list[str], remote_log: str,
                   pipes: bool) -> str:
    """The remote command line that starts ``argv`` detached behind ``WRAPPER``.

    With ``pipes`` the session stays attached (``setsid -w``) so that stdin and
    stdout are the channel; otherwise it forks off and only the pid comes back.
    """
    wrapped = shlex.join(["setsid", "-w" if pipes else "-f", "sh", "-c", WRAPPER, "nsb",
                          status_path, *argv])
    quoted_log = shlex.quote(remote_log)
    redirect = f"3>&1 2>>{quoted_log}" if pipes else f"3>&1 </dev/null >>{quoted_log} 2>&1"
    return f"mkdir -p -m 700 {shlex.quote(run_dir)} && {wrapped} {redirect}"


def tagged_pid(lines: Iterable[str | None]) -> str:
    """The wrapper's answer among ``lines``: a pid, "nsb-missing" or ''."""
    for line in lines:
        word = (line or "").strip()
        if word == "nsb-missing" or word.startswith("nsb-pid "):
            return word.removeprefix("nsb-pid ")
    return ""


def polled_returncode(answer: str, killed: bool) -> int | None:
    """The exit code ``POLL`` reported as Popen would (-N for signal N); None while running."""
    if answer == "running":
        return None
    if answer.isdigit():
        code = int(answer)
        return -(code - 128) if 128 < code <= 128 + 64 else code
    # killed with SIGKILL before its shell could record a status
    return -signal.SIGKILL if killed else 255
