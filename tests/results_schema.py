"""docs/results.schema.json checked on the results files the tests make nsb write."""

import json
from pathlib import Path

from jsonschema import Draft202012Validator

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "docs" / "results.schema.json"
SCHEMA = json.loads(SCHEMA_FILE.read_text())
Draft202012Validator.check_schema(SCHEMA)
VALIDATOR = Draft202012Validator(SCHEMA)


def problems(doc) -> list[str]:
    """Each way ``doc`` differs from the schema, as 'path: message'."""
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:300]}"
            for e in sorted(VALIDATOR.iter_errors(doc), key=lambda e: list(e.absolute_path))]


def check(doc, where: str = "results.json") -> dict:
    """``doc`` when it follows the schema; AssertionError naming what does not."""
    found = problems(doc)
    assert not found, f"{where} does not follow {SCHEMA_FILE.name}: " + "; ".join(found[:5])
    return doc


def written_by_nsb(doc) -> bool:
    """Test inputs written by hand (old formats, broken files) do not name a format."""
    return isinstance(doc, dict) and str(doc.get("format", "")).startswith("nsb-results/")


def check_tree(root: Path) -> int:
    """Check every results.json nsb wrote under ``root``; how many were checked."""
    checked = 0
    for path in sorted(Path(root).rglob("results.json")):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError, RecursionError):
            continue
        if written_by_nsb(doc):
            check(doc, str(path))
            checked += 1
    return checked
