"""Points InfluxDB did not take, kept in the task's results directory until pushed.

- ``influxdb.spool.lp``: line protocol, appended batch by batch (each line keeps
  its own nanosecond timestamp), never rewritten.
- ``influxdb.spool.sent``: how many bytes (whole lines) of it have reached the
  server; replaced atomically after every acknowledged batch, so a push that
  stops half-way resumes where it stopped and a second push sends nothing.
- ``influxdb.spool.target.json``: where the points were going (no secrets), the
  default for ``nsb results push``.
- ``influxdb.rejected.lp``: batches the server refused as bad data (a retry
  cannot help), with the reason in the log.

Appends and pushes take an exclusive lock (flock) on the results directory; a
push keeps it while it sends, so two pushes never send the same lines.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from nsb.errors import TaskError
from nsb.outputs import atomic_file

SPOOL_FILE = "influxdb.spool.lp"
SENT_FILE = "influxdb.spool.sent"
TARGET_FILE = "influxdb.spool.target.json"
REJECTED_FILE = "influxdb.rejected.lp"


@dataclass(frozen=True)
class Pending:
    """Unsent whole lines from byte ``start``; ``ends[i]`` is the offset after line i."""

    start: int
    lines: list[str]
    ends: list[int]


class Spool:
    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self.path = self.directory / SPOOL_FILE
        self.sent_path = self.directory / SENT_FILE
        self.target_path = self.directory / TARGET_FILE
        self.rejected_path = self.directory / REJECTED_FILE

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        self.directory.mkdir(parents=True, exist_ok=True)
        handle = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield
        finally:
            os.close(handle)  # releases the lock

    def append(self, lines: list[str], destination: dict | None = None) -> None:
        """Add lines durably (fsync) before anyone is told they are safe."""
        with self.locked():
            if destination is not None and not self.target_path.exists():
                atomic_file.write(self.target_path, json.dumps(destination, indent=1) + "\n")
            append_lines(self.path, lines)

    def reject(self, lines: list[str]) -> None:
        with self.locked():
            append_lines(self.rejected_path, lines)

    def sent_offset(self) -> int:
        try:
            return int(json.loads(self.sent_path.read_text())["sent_bytes"])
        except FileNotFoundError:
            return 0
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{self.sent_path} is damaged ({exc}); it records how much of "
                             f"{self.path.name} was already pushed") from None

    def pending(self) -> Pending:
        """Whole lines not yet sent (a line still being written is left for later)."""
        start = self.sent_offset()
        try:
            with open(self.path, "rb") as spool:
                spool.seek(start)
                data = spool.read()
        except FileNotFoundError:
            return Pending(start, [], [])
        lines, ends, offset = [], [], start
        for raw in data.splitlines(keepends=True):
            if not raw.endswith(b"\n"):
                break
            offset += len(raw)
            text = raw.decode("utf-8").rstrip("\n")
            if text.strip():
                lines.append(text)
                ends.append(offset)
            elif ends:
                ends[-1] = offset
        return Pending(start, lines, ends)

    def mark_sent(self, offset: int, points: int) -> None:
        """Everything before ``offset`` has reached the server (atomic replace)."""
        previous = self._sent_record()
        record = {"sent_bytes": offset, "sent_points": previous.get("sent_points", 0) + points,
                  "pushed_at": time.time()}
        atomic_file.write(self.sent_path, json.dumps(record) + "\n")

    def _sent_record(self) -> dict:
        try:
            return json.loads(self.sent_path.read_text())
        except (FileNotFoundError, ValueError):
            return {}

    def destination(self) -> dict:
        try:
            target = json.loads(self.target_path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise TaskError(f"damaged: {exc}; give the destination with --url and the other "
                            "options", str(self.target_path)) from None
        if not isinstance(target, dict):
            raise TaskError("damaged: not a JSON object; give the destination with --url and "
                            "the other options", str(self.target_path))
        return target


def append_lines(path: Path, lines: list[str]) -> None:
    if not lines:
        return
    with open(path, "a", encoding="utf-8") as out:
        out.write("".join(line + "\n" for line in lines))
        out.flush()
        os.fsync(out.fileno())
