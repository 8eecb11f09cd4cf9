"""The README is the user's front door and the site (mkdocs.yml, docs/) the manual: the
README stays short (what nsb is, the two commands, the first task and its table, links
into the site), each of its links reaches a page or a section that exists, and the
site's navigation holds every page, in the parts a newcomer looks for."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
FRONT_DOOR_LINES = 200
SECTIONS = ["The two commands", "A first task: RFC 2544 on the embedded lab",
            "Where to go from here"]
PARTS = ["Home", "Getting started", "Concepts", "How-to guides", "Reference", "Accuracy",
         "Development"]


def _headings(text: str, level: str = "## ") -> list[str]:
    headings, fence = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith(level):
            headings.append(line[len(level):])
    return headings


def _anchor(title: str) -> str:
    """The anchor mkdocs (and GitHub) give a heading."""
    return re.sub(r"[^\w\- ]", "", title.lower()).strip().replace(" ", "-")


def test_the_readme_is_a_short_front_door():
    text = README.read_text()
    assert len(text.splitlines()) <= FRONT_DOOR_LINES
    assert _headings(text) == SECTIONS


def test_every_link_of_the_readme_reaches_a_page_and_its_section():
    links = re.findall(r"\]\((docs/[^)#]+)(?:#([\w-]+))?\)", README.read_text())
    assert len(links) >= 10
    for page, anchor in links:
        target = ROOT / page
        assert target.is_file(), page
        if anchor:
            titles = [t for level in ("# ", "## ", "### ", "#### ")
                      for t in _headings(target.read_text(), level)]
            assert anchor in {_anchor(t) for t in titles}, f"{page}#{anchor}"


def _nav_pages(items) -> list[str]:
    pages = []
    for item in items:
        if isinstance(item, str):
            pages.append(item)
        elif isinstance(item, dict):
            for value in item.values():
                pages += _nav_pages(value if isinstance(value, list) else [value])
    return pages


def test_the_site_navigation_has_every_page_in_the_parts_a_newcomer_looks_for():
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    assert [next(iter(part)) for part in nav] == PARTS
    pages = _nav_pages(nav)
    on_disk = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    assert sorted(pages) == on_disk
