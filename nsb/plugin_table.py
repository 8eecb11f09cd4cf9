"""The site's plugin table (docs/reference/plugin-list.md), made from the installed
plugins (`nsb plugin list --markdown`), so that the table cannot drift from what is
installed."""

from __future__ import annotations

from importlib.metadata import entry_points

BEGIN = "<!-- plugin-table: made by `nsb plugin list --markdown` -->"
END = "<!-- end of plugin-table -->"


def rows() -> list[tuple[str, str, tuple[str, ...], str]]:
    """(namespace, nsb's name, NSB's other names, first docstring line) per plugin class."""
    from nsb import plugins

    found = []
    for info in plugins.describe_all():
        same = sorted(ep.name for ep in entry_points(group=info.namespace)
                      if ep.value == info.target)
        own = sorted((n for n in same if n[:1].islower()), key=lambda n: (len(n), n))
        name = own[0] if own else same[0]
        if info.name == name:
            found.append((info.namespace, name, tuple(n for n in same if n != name),
                          info.summary))
    return found


def markdown() -> str:
    """The table, between the markers the page keeps it in."""
    lines = [BEGIN, "", "| namespace | plugin | other names | what it is |",
             "|---|---|---|---|"]
    for namespace, name, aliases, summary in rows():
        also = ", ".join(f"`{a}`" for a in aliases)
        lines.append(f"| `{namespace}` | `{name}` | {also} | {summary.replace('|', '/')} |")
    return "\n".join(lines + ["", END])


def names_in(text: str) -> dict[str, set[str]]:
    """namespace -> every plugin name (and alias) the table in ``text`` lists."""
    start, end = text.index(BEGIN), text.index(END)
    listed: dict[str, set[str]] = {}
    for line in text[start:end].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`nsb."):
            names = {cells[1].strip("`")} | {a.strip(" `") for a in cells[2].split(",")
                                             if a.strip()}
            listed.setdefault(cells[0].strip("`"), set()).update(names)
    return listed
