"""The sample task files that ship with nsb (``nsb task samples``), each with the
line that says what it measures, so a user finds one to start from."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ENV = "NSB_SAMPLES"  # a samples directory of one's own
_SCHEMA = re.compile(r"^schema:\s*[\"']?(nsb|yardstick):task:", re.MULTILINE)
_DESCRIPTION = re.compile(r"^description:\s*[\"']?(.+?)[\"']?\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Sample:
    path: Path  # relative to the samples directory
    description: str


def directory() -> Path | None:
    """$NSB_SAMPLES, else an installed copy (<prefix>/share/nsb/samples), else the
    source checkout's samples/ next to the nsb package; None when there is none."""
    candidates = [os.environ.get(ENV), Path(sys.prefix) / "share" / "nsb" / "samples",
                  Path(__file__).resolve().parents[2] / "samples"]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


def find(root: Path) -> list[Sample]:
    """Every task file under ``root`` (nsb's or NSB's schema), sorted by path."""
    found = []
    for path in sorted(root.rglob("*.y*ml")):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")[:65536]
        except OSError:
            continue
        if path.is_file() and _SCHEMA.search(text):
            found.append(Sample(path.relative_to(root), describe(text)))
    return found


def describe(text: str) -> str:
    """The task's ``description:``, else the first sentence of its first comment."""
    match = _DESCRIPTION.search(text)
    if match:
        return match.group(1)
    words: list[str] = []
    for line in text.splitlines():
        if not line.startswith("#") or (words and not line.strip("# ")):
            break
        words += line.strip("# ").split()
    first = re.split(r"(?<=[a-z0-9)])[.:] ", " ".join(words), maxsplit=1)[0]
    return first.rstrip(".:") or "(no description)"
