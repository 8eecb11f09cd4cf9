"""The sample task files that ship with nsb (``nsb task samples``), each with the
line that says what it measures, so a user finds one to start from."""

from __future__ import annotations

import os
import re
import stat
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
    """$NSB_SAMPLES, else the installed copy (<prefix>/share/nsb/samples: setup.cfg's
    data_files), else the source checkout's samples/ next to the nsb package (an
    editable install); None when there is none."""
    candidates = [os.environ.get(ENV), Path(sys.prefix) / "share" / "nsb" / "samples",
                  Path(__file__).resolve().parents[2] / "samples"]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


def find(root: Path) -> list[Sample]:
    """Every task file under ``root`` (nsb's or NSB's schema), sorted by path; only
    regular files are read and symbolic links to directories are not followed."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            path = Path(folder) / name
            if name.endswith((".yaml", ".yml")) and _is_regular(path):
                text = _head(path)
                if _SCHEMA.search(text):
                    found.append(Sample(path.relative_to(root), describe(text, str(path))))
    return sorted(found, key=lambda s: s.path)


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:  # a dangling link, a loop of links, no permission
        return False


def _head(path: Path) -> str:
    try:
        with path.open("rb") as file:
            return file.read(65536).decode("utf-8", errors="replace")
    except OSError:
        return ""


def describe(text: str, file: str = "<sample>") -> str:
    """The task's ``description:``, else the first sentence of its first comment; on
    one line, as the template reads with its defaults (``{{ chains | default(2) }}
    chains`` is "2 chains"); Jinja that cannot be rendered so is left out."""
    text = _rendered(text, file)
    match = _DESCRIPTION.search(text)
    if match:
        return _one_line(match.group(1)) or "(no description)"
    words: list[str] = []
    for line in text.splitlines():
        if not line.startswith("#") or (words and not line.strip("# ")):
            break
        more = line.strip("# ").split()
        if words and more and words[-1].endswith("_"):  # a name broken over two lines
            words[-1] += more.pop(0)
        words += more
    first = re.split(r"(?<=[a-z0-9)])[.:] ", " ".join(words), maxsplit=1)[0]
    return _one_line(first.rstrip(".:")) or "(no description)"


def _rendered(text: str, file: str) -> str:
    """The sample as its template's defaults render it (no task args), else as written."""
    from nsb.errors import TaskError
    from nsb.task import render

    try:
        return render.render(text, file, {}, strict=False)
    except TaskError:
        return text


_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}")


def _one_line(text: str) -> str:
    return " ".join(_JINJA.sub("", text).split())
