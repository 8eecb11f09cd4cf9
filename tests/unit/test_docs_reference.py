"""The site's reference pages are the code's: made again here and compared with the
pages in docs/reference, and what they must hold (every plugin with every option,
every sample with every task argument, every command) checked against the code."""

from __future__ import annotations

import importlib.util

import pytest

from nsb import plugin_options, plugins
from nsb.task import samples, template_args
from tests.doc_examples import ROOT

REFERENCE = ROOT / "docs" / "reference"


def _generator():
    spec = importlib.util.spec_from_file_location("docs_reference",
                                                  ROOT / "tools" / "docs" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MADE = _generator().made()


@pytest.mark.parametrize("name", sorted(MADE))
def test_the_page_is_what_the_code_makes(name):
    assert (REFERENCE / name).read_text() == MADE[name], \
        f"docs/reference/{name} is stale: run .venv/bin/python tools/docs/reference.py"


def test_every_plugin_and_every_option_is_on_the_plugins_page():
    page = MADE["plugins.md"]
    for namespace in plugins.NAMESPACES:
        for info in plugins.describe_all(namespace):
            (found,) = [f for f in plugin_options.resolve(info.name) if f.namespace == namespace]
            assert f"### {found.name}\n" in page
            section = page.split(f"### {found.name}\n", 1)[1].split("\n### ", 1)[0]
            for option in plugin_options.options(plugin_options.load(found)):
                assert f"| `{option.name}`" in section, (found.name, option.name)


def test_every_sample_and_its_task_arguments_are_on_the_samples_page():
    page = MADE["samples.md"]
    found = samples.find(ROOT / "samples")
    assert len(found) > 20
    for sample in found:
        section = page.split(f"## {sample.path}\n", 1)[1].split("\n## ", 1)[0]
        for arg in template_args.task_args(ROOT / "samples" / sample.path):
            assert f"| `{arg.name}` |" in section, (sample.path, arg.name)


def test_every_command_is_on_the_command_line_page():
    page = MADE["cli.md"]
    for command in ("nsb task start", "nsb task validate", "nsb plugin show", "nsb report trend",
                    "nsb results push", "nsb ansible install", "nsb grafana push"):
        assert f"## {command}\n" in page, command
    assert "--frame-size" in page and "--task-args" in page


def test_the_plugin_api_page_states_the_seams_signatures_with_their_types():
    page = MADE["plugin-api.md"]
    assert "def run_trial(self, trial: Trial) -> TrialResult" in page
    assert "def measure(self, trial: Trial, at: SearchPoint" in page
    assert "def execute(self, measurer: Measurer) -> None" in page
