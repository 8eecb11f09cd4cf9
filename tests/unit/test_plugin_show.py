"""`nsb plugin show`: a plugin's options from its schema; NSB's names resolve."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

from nsb import plugin_options
from nsb.plugins import NAMESPACES
from tests.doc_examples import ROOT, examples


@pytest.mark.parametrize("asked, namespace, name", [
    ("TrexTrafficGenRFC", "nsb.vnfs", "trex"),
    ("FWApproxVnf", "nsb.vnfs", "vfw"),
    ("ProxApproxVnf", "nsb.vnfs", "prox"),  # an NSB descriptor id, no entry point of its own
    ("ProxBinSearchProfile", "nsb.traffic_profiles", "binsearch"),
    ("Node", "nsb.contexts", "baremetal"),
])
def test_nsb_names_resolve_to_the_plugin_they_are(nsb_main, asked, namespace, name):
    (found,) = plugin_options.resolve(asked)
    assert (found.namespace, found.name, found.nsb_name) == (namespace, name, asked)
    assert asked in found.aliases
    code, out, err = nsb_main("plugin", "show", asked)
    assert code == 0, err
    assert out.splitlines()[0].startswith(f"{asked}: NSB's name for the ")
    assert out.splitlines()[1].startswith(f"{name} (")


def test_an_nsb_profile_of_its_own_is_no_alias(nsb_main):
    (found,) = plugin_options.resolve("RFC2544Profile")
    assert (found.name, found.nsb_name, found.aliases) == ("RFC2544Profile", "", ())
    code, out, _ = nsb_main("plugin", "show", "RFC2544Profile")
    assert code == 0 and "allowed_drop_rate: string or number" in out


def test_options_show_type_default_allowed_and_description(nsb_main):
    code, out, _ = nsb_main("plugin", "show", "trafgen")
    assert code == 0
    lines = out.splitlines()
    at = lines.index("  count_received: string, default \"trial_port\", "
                     "one of \"trial_port\", \"link\"")
    assert lines[at + 1].strip().startswith("received frames: those with the trial's UDP port")
    assert any(line.startswith("  flows: integer, default 1, 1..") for line in lines)


def test_the_schema_becomes_one_fact_per_kind():
    class Plugin:
        OPTIONS_SCHEMA = {"required": ["path"], "properties": {
            "path": {"type": "string", "minLength": 1, "description": "where it is"},
            "mode": {"enum": ["a", 1, True], "default": "a"},
            "cores": {"type": "array", "items": {"type": "integer", "maximum": 7}},
            "rate": {"anyOf": [{"type": "number", "exclusiveMinimum": 0},
                               {"type": "string", "pattern": "^[0-9]+%$"}]},
            "free": {},
        }}

    by_name = {o.name: o for o in plugin_options.options(Plugin)}
    assert by_name["path"] == plugin_options.OptionDoc("path", "string", "", "length >= 1",
                                                       True, "where it is")
    assert (by_name["mode"].type, by_name["mode"].default) == ("boolean or integer or string",
                                                               '"a"')
    assert by_name["mode"].allowed == 'one of "a", 1, true'
    assert (by_name["cores"].type, by_name["cores"].allowed) == ("list of integer",
                                                                 "each (<= 7)")
    assert by_name["rate"].type == "number or string"
    assert by_name["rate"].allowed == "number: > 0; string: matching ^[0-9]+%$"
    assert (by_name["free"].type, by_name["free"].required) == ("any", False)


def test_every_installed_plugin_shows(nsb_main):
    for namespace in NAMESPACES:
        for ep in entry_points(group=namespace):
            code, out, err = nsb_main("plugin", "show", ep.name)
            assert code == 0, err
            assert "options:" in out or "options: none" in out


@pytest.mark.parametrize("asked, hint", [("testpm", "did you mean 'testpmd'?"),
                                          ("TrexTrafficGenRF", "did you mean 'TrexTrafficGenRFC'?"),
                                          ("zzzzzz", "`nsb plugin list` lists them all")])
def test_an_unknown_name_is_one_line_with_a_hint_and_exit_2(nsb_main, asked, hint):
    code, out, err = nsb_main("plugin", "show", asked)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [err.strip()]
    assert f"unknown plugin '{asked}'" in err and hint in err


def test_names_differing_in_case_resolve():
    (found,) = plugin_options.resolve("TESTPMD")
    assert (found.name, found.nsb_name) == ("testpmd", "")


def test_the_plugins_page_shows_what_plugin_show_prints(nsb_main):
    (shown,) = [e for e in examples("checked-by") if "nsb plugin show" in e.text]
    assert shown.file == ROOT / "docs" / "reference" / "plugin-list.md"
    command, *printed = shown.text.strip().splitlines()
    code, out, _ = nsb_main(*command.removeprefix("$ nsb ").split())
    assert code == 0 and out.strip().splitlines() == printed


@pytest.mark.parametrize("name", ["testpmd", "l3fwd", "l2fwd", "trafgen", "trex", "ovs", "prox",
                                  "baremetal", "Iteration", "Duration", "ProxDuration",
                                  "Search", "binsearch", "fixed", "ramp", "acl", "fastndr",
                                  "irq", "RFC2544Profile", "FixedProfile", "router",
                                  "agnostic", "file", "netns", "libvirt", "vfw"])
def test_these_plugins_describe_every_option(name):
    (found,) = plugin_options.resolve(name)
    undescribed = [o.name for o in plugin_options.options(plugin_options.load(found))
                   if not o.description]
    assert undescribed == [], f"{name}: options without a description: {undescribed}"


def test_an_empty_or_huge_name_is_one_short_line(nsb_main):
    code, _, err = nsb_main("plugin", "show", "")
    assert code == 2 and "a plugin name is needed" in err
    code, _, err = nsb_main("plugin", "show", "x" * 5000)
    assert code == 2 and len(err) < 200 and len(err.strip().splitlines()) == 1


def test_plugin_list_of_a_plugin_name_points_at_plugin_show(nsb_main):
    code, out, err = nsb_main("plugin", "list", "testpmd")
    assert code == 2 and "`nsb plugin show testpmd`" in err and out == ""
    code, _, err = nsb_main("plugin", "list", "nosuch")
    assert code == 2 and "unknown plugin namespace 'nosuch'" in err
