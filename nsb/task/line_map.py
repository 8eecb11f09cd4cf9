"""Lines of a rendered Jinja2 template mapped back to the file's lines, so that an
error in a templated task points at a line the user can open (a loop's output is
longer than the file; its lines are the loop body's)."""

from __future__ import annotations

import difflib
import re

from nsb.errors import TaskError

_TEMPLATE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}")
WINDOW = 60  # source lines looked back for a line a loop or a block repeated


def source_lines(source: str, rendered: str) -> list[int]:
    """For each rendered line (0-based), the 1-based line of ``source`` it came from."""
    src, out = source.splitlines(), rendered.splitlines()
    shapes = [_TEMPLATE.sub("", line).strip() for line in src]
    patterns = [_pattern(line) for line in src]
    mapping = [1] * len(out)
    matcher = difflib.SequenceMatcher(None, src, out, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for j in range(j1, j2):
            if tag == "equal":
                mapping[j] = i1 + (j - j1) + 1
            else:
                mapping[j] = _closest(out[j], shapes, patterns, i1, i2)
    last = max(len(src), 1)
    return [min(max(line, 1), last) for line in mapping]


def _pattern(line: str) -> re.Pattern:
    """The line as a regular expression: its text literally, each template part any
    text (a loop body's line matches every line it rendered)."""
    parts = _TEMPLATE.split(line)
    return re.compile(".*".join(re.escape(part) for part in parts))


def _closest(line: str, shapes: list[str], patterns: list, i1: int, i2: int) -> int:
    """The source line most like ``line``, among the replaced ones and those just before
    (a loop's body): one whose pattern it matches, else the most similar text; else
    the first replaced line, or the line before the change."""
    best, best_score = i1 if i2 > i1 else i1 - 1, 0.0
    stripped = line.strip()
    for index in reversed(range(max(0, i1 - WINDOW), i2)):  # the nearest wins a tie
        if patterns[index].fullmatch(line):
            score = 2.0 + len(shapes[index]) / 1000  # the more text, the surer
        else:
            matcher = difflib.SequenceMatcher(None, shapes[index], stripped, autojunk=False)
            if matcher.real_quick_ratio() <= best_score or matcher.quick_ratio() <= best_score:
                continue
            score = matcher.ratio()
        if score > best_score:
            best, best_score = index, score
    return best + 1


def remap(error: TaskError, mapping: list[int]) -> TaskError:
    """``error`` located at the file's line instead of the rendered one."""
    if error.line is None or not mapping:
        return error
    line = mapping[min(error.line, len(mapping)) - 1]
    return TaskError(error.message, error.file, line, error.key_path)
