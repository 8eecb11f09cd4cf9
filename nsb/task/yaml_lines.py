"""YAML parsing that remembers the line of every key, so errors can point at it."""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from nsb.errors import TaskError

KeyPath = tuple  # of str keys and int indices


@dataclass
class LocatedDocument:
    """Parsed YAML data plus the 1-based line of each key path in it."""

    data: object
    file: str
    lines: dict[KeyPath, int] = field(default_factory=dict)

    def line_of(self, path: KeyPath) -> int | None:
        """Line of ``path`` or of its nearest ancestor that has one."""
        path = tuple(path)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get((), None)

    def error(self, path: KeyPath, message: str) -> TaskError:
        return TaskError(message, self.file, self.line_of(path), format_path(path))


def format_path(path: KeyPath) -> str:
    """``('scenarios', 0, 'vnfs')`` -> ``scenarios[0].vnfs``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def parse(text: str, file: str) -> LocatedDocument:
    """Parse one YAML document; syntax errors become a TaskError with the line."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or str(exc)
        raise TaskError(f"invalid YAML: {problem}", file, line) from None
    except yaml.YAMLError as exc:
        raise TaskError(f"invalid YAML: {exc}", file) from None
    finally:
        loader.dispose()
    doc = LocatedDocument(data, file)
    if node is not None:
        _record_lines(node, (), doc.lines)
    return doc


def _record_lines(node: yaml.Node, path: KeyPath, lines: dict) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            key_path = path + (key_node.value,)
            lines[key_path] = key_node.start_mark.line + 1
            _record_lines(value_node, key_path, lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _record_lines(item, path + (index,), lines)
