"""The README is the user's front door: the basics (install and run, a first task,
the task file reference, results, configuration, plugins) come before the details of
generators, DUTs and contexts and before NSB compatibility, and its contents list
names every section in order."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
BASICS = ["The two commands", "A first task: RFC 2544 on the embedded lab", "Task files",
          "Results", "Configuration", "Plugins"]


def _sections() -> list[str]:
    headings, fence = [], False
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("## "):
            headings.append(line[3:])
    return headings


def test_the_basics_come_first_and_nsb_compatibility_after_the_details():
    sections = _sections()
    assert sections[:len(BASICS)] == BASICS
    assert sections.index("PROX and Yardstick/NSB task files") > sections.index(
        "VMs: the libvirt context")
    assert sections[-1] == "Development"


def test_the_contents_list_links_every_section_in_order():
    text = README.read_text()
    listed = re.findall(r"^- \[(.+)\]\(#([\w-]+)\)$", text.split("\n## ", 1)[0], re.M)
    assert [title for title, _ in listed] == _sections()
    for title, anchor in listed:  # GitHub's anchors: lower case, punctuation dropped
        assert anchor == re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
