"""Files replaced whole or not at all, so a crash or a full disk mid-write leaves
the previous version readable."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def write(path: Path, text: str) -> None:
    """``text`` into ``path`` through a synced temporary file and a rename; on a
    failure the temporary file is removed and the error raised."""
    path = Path(path)
    temp = path.with_name(f".{path.name}.tmp")
    try:
        with open(temp, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
