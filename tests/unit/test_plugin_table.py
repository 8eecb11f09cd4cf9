"""The plugin table (docs/reference/plugin-list.md) is the installed plugins: none
missing, none extra."""

from __future__ import annotations

from importlib.metadata import entry_points

from nsb import plugin_table
from nsb.plugins import NAMESPACES
from tests.doc_examples import ROOT

PAGE = ROOT / "docs" / "reference" / "plugin-list.md"


def installed() -> dict[str, set[str]]:
    return {ns: {ep.name for ep in entry_points(group=ns)} for ns in NAMESPACES
            if entry_points(group=ns)}


def test_the_page_lists_every_installed_plugin_and_no_other():
    listed = plugin_table.names_in(PAGE.read_text())
    for namespace, names in installed().items():
        missing = names - listed.get(namespace, set())
        assert not missing, f"plugin-list.md's plugin table lacks {namespace} {sorted(missing)}"
    for namespace, names in listed.items():
        extra = names - installed().get(namespace, set())
        assert not extra, f"plugin-list.md's plugin table lists {namespace} {sorted(extra)}, " \
                          "which is not installed"


def test_the_page_table_is_the_generated_one():
    text = PAGE.read_text()
    table = text[text.index(plugin_table.BEGIN):text.index(plugin_table.END)
                 + len(plugin_table.END)]
    assert table == plugin_table.markdown(), \
        "plugin-list.md's plugin table is stale: replace it with `nsb plugin list --markdown`"


def test_a_table_missing_a_plugin_or_listing_an_extra_one_is_caught():
    table = plugin_table.markdown()
    assert plugin_table.names_in(table) == installed()
    without = "\n".join(line for line in table.splitlines() if "`testpmd`" not in line)
    assert "testpmd" not in plugin_table.names_in(without)["nsb.vnfs"]
    extra = table.replace(plugin_table.END,
                          "| `nsb.vnfs` | `gone` |  | removed |\n" + plugin_table.END)
    assert "gone" in plugin_table.names_in(extra)["nsb.vnfs"]


def test_plugin_list_markdown_prints_the_table(nsb_main):
    code, out, _ = nsb_main("plugin", "list", "--markdown")
    assert code == 0 and out.strip() == plugin_table.markdown()
