"""YAML parsing that remembers the line of every key, so errors can point at it."""

from __future__ import annotations

import math
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


MAX_DEPTH = 64          # Yardstick's deepest sample nests 12 levels
MAX_VALUES = 100_000    # after alias expansion; its largest sample has ~2,000
MAX_INT_DIGITS = 30


def parse(text: str, file: str) -> LocatedDocument:
    """Parse one YAML document; every problem becomes a TaskError with the line.

    Limits hold while composing, before anything is built: nesting depth, the
    number of values after alias expansion (no "billion laughs"), alias cycles.
    Duplicate keys, keys that are not text and numbers nsb cannot use (NaN,
    infinity, integers of thousands of digits) are errors where they appear.
    """
    try:
        loader = _Loader(text, file)
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise TaskError(f"invalid YAML: character {exc.character!r} is not allowed in YAML",
                        file, line) from None
    doc = LocatedDocument(None, file)
    try:
        node = loader.get_single_node()
        if node is not None:
            _Checker(doc).check(node)
            doc.data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or str(exc)
        raise TaskError(f"invalid YAML: {problem}", file, line) from None
    except yaml.YAMLError as exc:
        raise TaskError(f"invalid YAML: {exc}", file) from None
    finally:
        loader.dispose()
    return doc


class _Loader(yaml.SafeLoader):
    """SafeLoader that stops composing at MAX_DEPTH (PyYAML recurses per level)."""

    def __init__(self, text: str, file: str):
        super().__init__(text)
        self._file = file
        self._depth = 0

    def compose_node(self, parent, index):
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise TaskError(f"nested more than {MAX_DEPTH} levels deep", self._file,
                                mark.line + 1)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_MERGE = "tag:yaml.org,2002:merge"
_TAG_NAMES = {"tag:yaml.org,2002:null": "null", "tag:yaml.org,2002:bool": "a boolean",
              _FLOAT: "a number"}


class _Checker:
    """One pass over the composed nodes: limits, keys, numbers, and every key's line."""

    def __init__(self, doc: LocatedDocument):
        self.doc = doc
        self.sizes: dict[int, int] = {}
        self.open: set[int] = set()

    def error(self, node: yaml.Node, path: KeyPath, message: str) -> TaskError:
        return TaskError(message, self.doc.file, node.start_mark.line + 1, format_path(path))

    def check(self, node: yaml.Node) -> None:
        self._size(node, ())  # raises where a limit is passed

    def _size(self, node: yaml.Node, path: KeyPath) -> int:
        key = id(node)
        if key in self.sizes:  # an alias: counted again, not walked again
            return self.sizes[key]
        if key in self.open:
            raise self.error(node, path, "an alias refers to a node that contains it")
        self.doc.lines.setdefault(path, node.start_mark.line + 1)
        self.open.add(key)
        size = 1
        if isinstance(node, yaml.MappingNode):
            seen: dict[str, int] = {}
            for key_node, value_node in node.value:
                name = self._key(key_node, path)
                key_path = path + (name,)
                if name in seen and key_node.tag != _MERGE:
                    raise self.error(key_node, key_path,
                                     f"duplicate key '{name}' (first given at line {seen[name]})")
                seen[name] = key_node.start_mark.line + 1
                self.doc.lines.setdefault(key_path, key_node.start_mark.line + 1)
                size += self._size(value_node, key_path)
                self._check_budget(size, node, path)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                size += self._size(item, path + (index,))
                self._check_budget(size, node, path)
        else:
            self._scalar(node, path)
        self.open.discard(key)
        self.sizes[key] = size
        return size

    def _check_budget(self, size: int, node: yaml.Node, path: KeyPath) -> None:
        if size > MAX_VALUES:
            raise self.error(node, path, f"holds more than {MAX_VALUES:,} values (after "
                             "expanding aliases); that is the limit")

    def _key(self, node: yaml.Node, path: KeyPath) -> str:
        if not isinstance(node, yaml.ScalarNode):
            raise self.error(node, path, "a key must be text, not a list or mapping")
        if node.tag == _INT:
            self._scalar(node, path)
            node.tag = _STR  # 1: x is the key "1", as in JSON
        elif node.tag not in (_STR, _MERGE):
            what = _TAG_NAMES.get(node.tag, node.tag)
            raise self.error(node, path, f"the key {node.value!r} is read as {what}, and a "
                             "key must be text; put it in quotes")
        return node.value

    def _scalar(self, node: yaml.ScalarNode, path: KeyPath) -> None:
        value = node.value.replace("_", "").lstrip("+-")
        if node.tag == _FLOAT and not _finite(value):
            raise self.error(node, path, f"{node.value} is not a number nsb can use; give a "
                             "finite number")
        if node.tag == _INT and len(value) > MAX_INT_DIGITS:
            raise self.error(node, path, f"an integer of {len(value)} digits; at most "
                             f"{MAX_INT_DIGITS} are accepted")


def _finite(text: str) -> bool:
    if text.lower() in (".nan", ".inf"):
        return False
    try:
        return math.isfinite(float(text))
    except ValueError:  # base 60 (1:30.5): finite
        return True
