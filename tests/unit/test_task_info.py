"""`nsb task args` (what a task's templates read, with defaults, no internals) and
`nsb task samples` (the task files that ship, with their descriptions)."""

from __future__ import annotations

from pathlib import Path

from nsb.task import samples, template_args
from tests.doc_examples import ROOT, examples

NSB_TASK = """\
# a task
{% set lab = (context | default("Node")) == "netns" %}
{% set rate = rate or 50 %}
schema: "yardstick:task:0.1"
sizes: [{% for size in sizes | default([64, 1518]) %}{{ size }},{% endfor %}]
scenarios:
- type: NSPerf
  topology: topo.yaml
  traffic_profile: {{ profile | default("profile.yaml") }}
  options:
    speed: {{ speed_gbps | default(10 if lab else 1) }}
{% if trex_path is defined %}
    trex_path: {{ trex_path }}
{% endif %}
    where: "{{ machine.trex_path }} {{ range(2) | list }} {{ pod }}"
"""
TOPOLOGY = "nsd: {{ get(extra_args, 'x', 1) }} {{ vld_name | default('uplink') }}\n"
PROFILE = ("{% set frame_rate = get(extra_args, 'frame_rate', 100) %}\n"
           "traffic_profile: {duration: {{ duration }}, mix: {{ imix }}, "
           "flow: {{ flow }}, s: {{ seed }}}\n")


def write_task(folder: Path, scenario_options: str = "") -> Path:
    (folder / "topo.yaml").write_text(TOPOLOGY)
    (folder / "profile.yaml").write_text(PROFILE)
    task = folder / "tc.yaml"
    task.write_text(NSB_TASK.replace("  options:\n", "  options:\n" + scenario_options))
    return task


def by_name(path: Path) -> dict:
    return {a.name: a for a in template_args.task_args(path)}


def test_arguments_with_defaults_as_written_and_no_internals(tmp_path):
    found = by_name(write_task(tmp_path))
    assert set(found) == {"context", "rate", "sizes", "profile", "speed_gbps", "trex_path",
                          "pod", "vld_name", "duration", "seed"}
    assert found["context"].shown_default == '"Node"'
    assert found["rate"].shown_default == "50"  # Yardstick's {% set x = x or D %}
    assert found["sizes"].shown_default == "[64, 1518]"
    assert found["speed_gbps"].shown_default == "10 if lab else 1"
    assert found["trex_path"].shown_default == "(optional)"  # read behind `is defined`
    assert found["pod"].shown_default == "(required)"
    assert found["vld_name"].files == ["topo.yaml"]
    # the profile's duration is NSB's 30 s unless the scenario sets one
    assert (found["duration"].shown_default, found["duration"].files) == ("30",
                                                                           ["profile.yaml"])
    assert found["seed"].files == ["profile.yaml"]


def test_a_scenario_duration_takes_the_profile_duration_away(tmp_path):
    found = by_name(write_task(tmp_path, "    duration: 5\n"))
    assert "duration" not in found and "seed" in found


def test_an_nsb_task_file_takes_its_own_arguments_only(tmp_path):
    task = tmp_path / "own.yaml"
    task.write_text('schema: "nsb:task:0.1"\n{% set x = 1 %}\nd: {{ x }} {{ n | default(3) }}\n'
                    "{% for i in range(2) %}{{ i }}{% endfor %}\n")
    assert [(a.name, a.shown_default) for a in template_args.task_args(task)] == [("n", "3")]


def test_task_args_command_prints_a_table_and_errors_are_one_line(nsb_main, tmp_path):
    code, out, err = nsb_main("task", "args", str(write_task(tmp_path)))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["ARGUMENT", "DEFAULT", "READ", "BY"]
    assert any(line.split()[:2] == ["duration", "30"] and line.endswith("profile.yaml")
               for line in lines)
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: {{ x \n")
    code, out, err = nsb_main("task", "args", str(broken))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "broken.yaml" in err and "template error" in err
    code, _, err = nsb_main("task", "args", str(tmp_path / "missing.yaml"))
    assert code == 2 and "file not found" in err


def test_every_sample_task_file_has_its_arguments_listed(nsb_main):
    for sample in samples.find(ROOT / "samples"):
        code, out, err = nsb_main("task", "args", str(ROOT / "samples" / sample.path))
        assert code == 0, f"{sample.path}: {err}"


def test_the_bogus_arg_error_leaves_internals_out_and_points_at_task_args(nsb_main):
    code, _, err = nsb_main("task", "validate", "samples/trex/tc_trex_testpmd_rfc2544.yaml",
                            "--task-args", '{"bogus": 1}')
    assert code == 2 and "nsb task args FILE" in err
    listed = err.split("they read: ")[1]
    for internal in ("imix", "flow", "extra_args", "machine"):
        assert internal not in listed.replace("flows", "")


def test_the_task_files_page_shows_what_task_args_prints(nsb_main):
    (shown,) = [e for e in examples("checked-by") if "nsb task args" in e.text]
    assert shown.file == ROOT / "docs" / "concepts" / "task-files.md"
    command, *printed = shown.text.strip().splitlines()
    code, out, _ = nsb_main(*command.removeprefix("$ nsb ").split())
    assert code == 0 and out.strip().splitlines() == printed


def test_samples_are_task_files_with_their_description(tmp_path, monkeypatch, nsb_main):
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "tc_a.yaml").write_text('schema: "nsb:task:0.1"\n'
                                                "description: A in the lab\n")
    (tmp_path / "tc_b.yaml").write_text("# NSB's B test, as NSB writes it: more\n# here.\n"
                                        "schema: yardstick:task:0.1\n")
    (tmp_path / "pod.yaml").write_text("nodes: []\n")  # a pod is no sample
    monkeypatch.setenv(samples.ENV, str(tmp_path))
    assert samples.directory() == tmp_path
    assert [(str(s.path), s.description) for s in samples.find(tmp_path)] == [
        ("lab/tc_a.yaml", "A in the lab"), ("tc_b.yaml", "NSB's B test, as NSB writes it")]
    code, out, _ = nsb_main("task", "samples")
    assert code == 0
    assert out.splitlines()[1:] == ["  lab/tc_a.yaml  A in the lab",
                                    "  tc_b.yaml      NSB's B test, as NSB writes it"]


def test_the_checkout_samples_are_listed_without_configuration(monkeypatch, nsb_main):
    monkeypatch.delenv(samples.ENV, raising=False)
    monkeypatch.chdir(ROOT)
    code, out, _ = nsb_main("task", "samples")
    assert code == 0 and out.splitlines()[0] == "samples in samples:"
    for task in ROOT.glob("samples/**/tc_*.yaml"):
        assert f"  {task.relative_to(ROOT / 'samples')} " in out


def test_every_shipped_sample_has_one_clean_line(monkeypatch, nsb_main):
    """Descriptions read as the template's defaults render them, never as Jinja."""
    monkeypatch.delenv(samples.ENV, raising=False)
    monkeypatch.chdir(ROOT)
    code, out, _ = nsb_main("task", "samples")
    shipped = [str(sample.path) for sample in samples.find(ROOT / "samples")]
    lines = out.splitlines()[1:]
    assert code == 0 and len(lines) == len(shipped)
    for line, path in zip(lines, shipped, strict=True):
        described = line.removeprefix(f"  {path}").strip()
        assert line.startswith(f"  {path} ") and described, line
        assert not any(mark in described for mark in ("{{", "}}", "{%", "%}", "{#")), line
        assert described != "(no description)", line
    assert "  chains/tc_testpmd_chains.yaml " in out
    assert "2 service chain(s) of testpmd, RFC 2544" in out


def test_a_description_is_rendered_with_the_templates_defaults():
    text = ('{% set n = n | default(4) %}\nschema: "nsb:task:0.1"\n'
            'description: "{{ n }} chains{{ \' over memif\' if link == \'memif\' }}, '
            '{{ size | default(64) }} B"\n')
    assert samples.describe(text) == "4 chains, 64 B"
    # what cannot be rendered is left out, never shown as Jinja
    assert samples.describe("description: {{ 1 // 0 }} chains {% if x %}\n") == "chains"
    # a comment's file name broken over two lines is one word again
    assert samples.describe("# NSB's test (tc_ipv4_1rule_\n# 1flow.yaml): more\n") == \
        "NSB's test (tc_ipv4_1rule_1flow.yaml)"


def test_no_samples_directory_is_one_line(monkeypatch, nsb_main, tmp_path):
    monkeypatch.setattr(samples, "directory", lambda: None)
    code, out, err = nsb_main("task", "samples")
    assert code == 2 and samples.ENV in err and len(err.strip().splitlines()) == 1


def test_a_template_nested_too_deep_is_one_line(nsb_main, tmp_path):
    deep = tmp_path / "deep.yaml"
    deep.write_text("a: {{ " + "(" * 3000 + "1" + ")" * 3000 + " }}\n")
    code, out, err = nsb_main("task", "args", str(deep))
    assert code == 2 and "Traceback" not in err and "nested" in err
    assert len(err.strip().splitlines()) == 1


def test_samples_skip_what_is_no_regular_file(tmp_path, monkeypatch):
    import os

    (tmp_path / "tc_ok.yaml").write_text('schema: "nsb:task:0.1"\ndescription: ok\n')
    os.mkfifo(tmp_path / "tc_fifo.yaml")  # reading it would block
    (tmp_path / "tc_loop.yaml").symlink_to(tmp_path / "tc_loop.yaml")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to(tmp_path)  # a loop of directories
    (tmp_path / "tc_bin.yaml").write_bytes(b"\xff\xfe\x00")
    assert [str(s.path) for s in samples.find(tmp_path)] == ["tc_ok.yaml"]
