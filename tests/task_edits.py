"""A sample task file with some of its text replaced, written where a test reads it."""

from pathlib import Path


def edited(sample: Path, directory: Path, replace: dict, name: str = "task.yaml") -> str:
    """``sample`` with each key of ``replace`` (which must be in it) replaced, as
    ``directory/name``; its path."""
    text = sample.read_text()
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    path = directory / name
    path.write_text(text)
    return str(path)
