"""What the limits on input must still let through, and what they turn into.

The hostile corpus (tests/functional/test_hostile_input.py) checks that bad
input ends in one line; these check that good input keeps its meaning.
"""

import pytest
import yaml

from nsb import redact
from nsb.errors import TaskError
from nsb.task import input_file, limits, render, yaml_lines


def test_aliases_and_merge_keys_within_the_budget_still_work():
    doc = yaml_lines.parse("base: &b {a: 1}\nuse:\n  <<: *b\n  c: 2\nagain: *b\n", "f.yaml")
    assert doc.data == {"base": {"a": 1}, "use": {"a": 1, "c": 2}, "again": {"a": 1}}
    assert doc.line_of(("use", "c")) == 4


def test_integer_keys_become_text_and_other_scalars_are_refused():
    assert yaml_lines.parse("1: x\n", "f.yaml").data == {"1": "x"}
    with pytest.raises(TaskError, match="f.yaml:2: the key 'yes' is read as a boolean"):
        yaml_lines.parse("a: 1\nyes: 2\n", "f.yaml")


def test_duplicate_keys_point_at_the_second_and_name_the_first():
    with pytest.raises(TaskError) as caught:
        yaml_lines.parse("a:\n  b: 1\n  c: 2\n  b: 3\n", "f.yaml")
    assert str(caught.value) == "f.yaml:4: a.b: duplicate key 'b' (first given at line 2)"


@pytest.mark.parametrize("text", [".nan", "-.inf", ".Inf", "1.0e+999"])
def test_non_finite_numbers_are_refused(text):
    with pytest.raises(TaskError, match="not a number nsb can use"):
        yaml_lines.parse(f"duration: {text}\n", "f.yaml")


def test_nesting_limit_is_generous_for_real_files():
    deep = "".join("  " * i + f"k{i}:\n" for i in range(yaml_lines.MAX_DEPTH - 2)) + \
        "  " * (yaml_lines.MAX_DEPTH - 2) + "end\n"
    yaml_lines.parse(deep, "f.yaml")
    too_deep = "x: " + "[" * (yaml_lines.MAX_DEPTH + 1) + "]" * (yaml_lines.MAX_DEPTH + 1)
    with pytest.raises(TaskError, match=f"nested more than {yaml_lines.MAX_DEPTH} levels"):
        yaml_lines.parse(too_deep, "f.yaml")


def test_a_task_arg_string_stays_one_value():
    template = "a: {{ x }}\nb: [{{ y }}]\nc: {{ z }}\n"
    args = {"x": "io\n  testpmd_path: /bin/true", "y": "1], evil: [2", "z": "/opt/prox"}
    # render() refuses nothing here (parse_task_args does); the YAML sees one value each
    data = yaml.safe_load(render.render(template, "t.yaml", args))
    assert data == {"a": args["x"], "b": [args["y"]], "c": "/opt/prox"}


def test_task_arg_floats_stay_floats():
    rendered = render.render("d: {{ d }}\ne: {{ e }}\n", "t.yaml", {"d": 1e-05, "e": 2.5e20})
    assert yaml.safe_load(rendered) == {"d": 1e-05, "e": 2.5e20}


def test_task_args_are_checked_where_they_are_given(tmp_path):
    with pytest.raises(TaskError, match=r"^--task-args: a.b\[1\]: a value must be one line"):
        render.parse_task_args('{"a": {"b": ["ok", "two\\nlines"]}}', None)
    args = tmp_path / "args.yaml"
    args.write_text("mode: io\nrate: .nan\n")
    with pytest.raises(TaskError, match="args.yaml:2: rate: .nan is not a number"):
        render.parse_task_args(None, str(args))
    assert render.parse_task_args('{"n": 1e-05}', None) == {"n": 1e-05}


@pytest.mark.parametrize("expression, limit", [
    ("range(10 ** 6) | list", "range() of 1,000,000 items"),
    ("'x' * 10 ** 7", "repeating 1 items 10,000,000 times"),
    ("10 ** 100000", "larger than 4096 bits"),
    ("'%2000000s' % 'x'", "format width"),
    ("'x' | center(10 ** 7)", "center() with 10,000,000"),
])
def test_template_limits_name_what_went_past_them(expression, limit):
    with pytest.raises(TaskError) as caught:
        render.render(f"a: 1\nb: {{{{ {expression} }}}}\n", "t.yaml")
    assert str(caught.value).startswith("t.yaml:2: template error: ")
    assert limit in str(caught.value)


def test_small_uses_of_the_limited_operations_still_work():
    text = "{{ range(3) | list }} {{ 'ab' * 2 }} {{ 2 ** 10 }} {{ '%5s' % 'x' }} " \
           "{{ 'a-b' | replace('-', '_') }} {{ 'x' | center(3) }}"
    assert render.render(text, "t.yaml") == "[0, 1, 2] abab 1024     x a_b  x "


def test_the_memory_ceiling_is_lifted_after_rendering():
    import resource

    before = resource.getrlimit(resource.RLIMIT_AS)
    with limits.bounded("t.yaml"):
        assert resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY
    assert resource.getrlimit(resource.RLIMIT_AS) == before


def test_input_files_must_be_small_regular_utf8(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (input_file.MAX_INPUT_BYTES + 1))
    with pytest.raises(TaskError, match="more than the 512 KiB"):
        input_file.read_text(big)
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"a: 1\nb: caf\xe9\n")
    with pytest.raises(TaskError, match=r"bad.yaml:2: not UTF-8 text: byte 0xe9 at column 7"):
        input_file.read_text(bad, "bad.yaml")
    with pytest.raises(TaskError, match="is a directory"):
        input_file.read_text(tmp_path)


def test_secrets_are_masked_in_values_and_urls():
    args = {"token": "abc", "nested": {"db_password": "p", "url": "http://u:pw@h:8086/x"},
            "empty_password": "", "mode": "io"}
    assert redact.values(args) == {"token": "***", "nested": {
        "db_password": "***", "url": "http://***@h:8086/x"}, "empty_password": "",
        "mode": "io"}
    assert redact.text("see ftp://admin:s3cret@db:21 now") == "see ftp://***@db:21 now"


def test_a_template_past_a_limit_is_rendered_once(tmp_path, monkeypatch):
    """Loading a task reads it leniently first (for its sweep section), then strictly;
    a template that went past a limit the first time stops there, or it would take
    its time and memory twice (the freed memory counted against the second render)."""
    from nsb.task import sweep

    task = tmp_path / "task.yaml"
    task.write_text("a: {{ range(10 ** 6) | list }}\n")
    renders = []
    real = limits.bounded
    monkeypatch.setattr(limits, "bounded", lambda file: renders.append(file) or real(file))
    with pytest.raises(render.TemplateLimitError, match="range"):
        sweep.load(task, {}, None, "--task-args")
    assert len(renders) == 1
