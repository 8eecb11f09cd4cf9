"""The code blocks of README.md and the site's pages (docs/), each with how the tests
check it.

Every fenced block is preceded by a marker line ``<!-- example: KIND NOTE -->``:

- ``run``: shell commands, run as they are (tests/functional/test_doc_examples.py);
- ``dry-run``: ``nsb task start`` commands, run with ``--dry-run`` (the real run is
  the sample's own functional test, named in NOTE);
- ``usage``: command synopses; each ``nsb`` subcommand and ``--option`` must exist,
  each ``make`` target must be in the Makefile, each script must answer ``--help``;
- ``task``: a whole task file, validated;
- ``task-fragment BASE``: top-level task keys put into the task file BASE, validated;
- ``nsb-conf``: an nsb.conf, loaded (unknown sections or options are errors);
- ``entry-points``: a setup.cfg entry-point section naming nsb namespaces;
- ``output NOTE``: what a command prints; NOTE says what checks it;
- ``checked-by TEST NOTE``: run by another test file, which reads it from the document;
- ``not-run REASON``: shown, never run (REASON says why: e.g. it needs docker).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
KINDS = {"run", "dry-run", "usage", "task", "task-fragment", "nsb-conf", "entry-points",
         "output", "not-run", "checked-by"}
NEEDS_NOTE = {"task-fragment", "output", "not-run", "checked-by"}

_MARK = re.compile(r"^<!--\s*example:\s*(\S+)\s*(.*?)\s*-->\s*$")
_FENCE = re.compile(r"^```(\S*)\s*$")


@dataclass(frozen=True)
class Example:
    file: Path
    line: int  # of the opening fence
    kind: str  # "" when the block has no marker
    note: str
    lang: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.file.relative_to(ROOT)}:{self.line}"

    def commands(self) -> list[str]:
        """Command lines without comments and prompts; continuation lines joined."""
        joined = self.text.replace("\\\n", " ")
        lines = []
        for raw in joined.splitlines():
            line = _strip_comment(raw).strip()
            if line.startswith("$ "):
                line = line[2:]
            if line:
                lines.append(line)
        return lines


def _strip_comment(line: str) -> str:
    """Drop a trailing ``# comment`` that is not inside quotes."""
    quote = None
    for index, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index]
    return line


def parse(path: Path) -> list[Example]:
    lines = path.read_text().splitlines()
    found, index = [], 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if not fence:
            index += 1
            continue
        start = index
        end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("```"))
        previous = next((lines[i] for i in range(start - 1, -1, -1) if lines[i].strip()), "")
        mark = _MARK.match(previous.strip())
        kind, note = (mark.group(1), mark.group(2)) if mark else ("", "")
        found.append(Example(path, start + 1, kind, note, fence.group(1),
                             "\n".join(lines[start + 1:end]) + "\n"))
        index = end + 1
    return found


def examples(kind: str | None = None) -> list[Example]:
    every = [e for path in DOCUMENTS for e in parse(path)]
    return [e for e in every if kind is None or e.kind == kind]


def merge_task(base_text: str, fragment: str) -> str:
    """``base_text`` (a task file) with its top-level keys that ``fragment`` sets
    replaced by the fragment's."""
    keys = {m.group(1) for m in re.finditer(r"^([A-Za-z_]\w*):", fragment, re.M)}
    kept, skipping = [], False
    for line in base_text.splitlines():
        top = re.match(r"^([A-Za-z_]\w*):", line)
        if top:
            skipping = top.group(1) in keys
        if not skipping:
            kept.append(line)
    return "\n".join(kept) + "\n" + fragment
