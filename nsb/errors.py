"""Errors a user can act on.

The CLI prints ``str(error)`` as one line and exits with the error's code: 2 for
bad input, 3 when the machine or a component failed (a missing binary, a node
that cannot be reached, a VNF that died), 4 when a run met its end but missed an
SLA, 5 when no SLA was missed but some could not be judged because the traffic
generator set the numbers; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class NsbError(Exception):
    """A problem the user can fix: bad input, missing binary, no root."""

    exit_code = 2


class TaskError(NsbError):
    """Bad task file content, located by file, line and key path."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None,
                 key_path: str | None = None):
        self.message = message
        self.file = file
        self.line = line
        self.key_path = key_path
        super().__init__(self._format())

    def _format(self) -> str:
        where = ""
        if self.file:
            where = self.file + (f":{self.line}" if self.line else "") + ": "
        key = f"{self.key_path}: " if self.key_path else ""
        return f"{where}{key}{self.message}"


class TaskErrors(TaskError):
    """Several mistakes found in one pass: one located line each, so a user fixes
    them in one go. Reads as its first error where one is expected."""

    def __init__(self, errors: list[TaskError]):
        self.errors = list(errors)
        first = self.errors[0]
        super().__init__(first.message, first.file, first.line, first.key_path)

    SHOWN = 20  # a loop repeating one mistake needs no hundred lines

    def _format(self) -> str:
        lines = [str(error) for error in self.errors[:self.SHOWN]]
        if len(self.errors) > self.SHOWN:
            lines.append(f"{self.errors[0].file or 'input'}: {len(self.errors) - self.SHOWN} "
                         "more mistakes like these are not shown")
        return "\n".join(lines)


def raise_all(errors: list[TaskError]) -> None:
    """Raise ``errors`` (nothing when empty; one alone as itself), ordered by line."""
    errors = sorted(errors, key=lambda e: (e.file or "", e.line or 0, e.key_path or ""))
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise TaskErrors(errors)


class PrerequisiteError(NsbError):
    """Something the run needs is missing on the machine (binary, root, module)."""

    exit_code = 3


class RunError(NsbError):
    """A component failed while the task ran (process died, timeout)."""

    exit_code = 3


class PluginContractError(NsbError):
    """A plugin handed a seam of nsb's something it does not take (a profile passing a
    list where a trial belongs): one line naming the plugin, what it passed and what
    was expected."""

    exit_code = 3


class SlaMissed(NsbError):
    """The run finished but its results missed an SLA given with --sla."""

    exit_code = 4


class SlaNotComparable(NsbError):
    """No SLA was missed, but the generator limited results an SLA compares: CI
    must not read generator noise as a DUT regression, nor as a pass."""

    exit_code = 5


class Interrupted(NsbError):
    """The run was stopped by SIGINT or SIGTERM; teardown still runs."""

    def __init__(self, signame: str):
        super().__init__(f"interrupted by {signame}; cleaned up")
        self.signame = signame
