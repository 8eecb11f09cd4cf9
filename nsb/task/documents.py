"""Located documents: a YAML file read, rendered and parsed with the line of every
key, and ``Where`` a value came from, so that any error can point at it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nsb.errors import TaskError
from nsb.task import input_file, line_map, render, yaml_lines
from nsb.task.yaml_lines import LocatedDocument


@dataclass(frozen=True)
class Where:
    """Where a piece of the task came from, to point errors at it."""

    doc: LocatedDocument
    path: tuple

    def error(self, message: str, *subpath) -> TaskError:
        return self.doc.error(self.path + tuple(subpath), message)


def read_document(path: Path, task_args: dict | None = None, strict: bool = True,
                  where: Where | None = None, what: str = "file") -> LocatedDocument:
    """Read, render and parse one YAML file (task, profile, pod, topology, descriptor).

    A file that cannot be read is reported at ``where``, the key that names it
    (``what`` says which kind of file it should be).
    """
    shown = _shown(path)
    try:
        text = input_file.read_text(path, shown)
    except TaskError as exc:
        if where is None:
            raise
        if exc.message == "file not found":
            raise where.error(f"{what} not found: {path}") from None
        raise where.error(f"{what} {shown}: {exc.message}") from None
    rendered = render.render(text, shown, task_args, strict)
    if rendered == text:
        return yaml_lines.parse(rendered, shown)
    mapping = line_map.source_lines(text, rendered)  # errors point into the file
    try:
        doc = yaml_lines.parse(rendered, shown)
    except TaskError as exc:
        raise line_map.remap(exc, mapping) from None
    doc.lines = {path: mapping[line - 1] if 0 < line <= len(mapping) else line
                 for path, line in doc.lines.items()}
    return doc


def _shown(path: Path) -> str:
    try:
        return str(input_file.resolve(path).relative_to(Path.cwd()))
    except ValueError:
        return str(path)
