"""Bad input: one clear line (file:line, key path, what is allowed), exit 2, no traceback."""

import re
import textwrap

import pytest

from tests.conftest import SAMPLE

GOOD = SAMPLE.read_text()


def write(tmp_path, text, name="task.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def check_one_line_error(result, *fragments):
    code, out, err = result
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def test_sample_is_valid(nsb_main):
    code, out, err = nsb_main("task", "validate", str(SAMPLE))
    assert code == 0, err
    assert "valid" in out


def test_malformed_yaml_names_file_and_line(nsb_main, tmp_path):
    path = write(tmp_path, GOOD.replace("  type: netns", "  type: [netns"))
    line = check_one_line_error(nsb_main("task", "validate", str(path)), "task.yaml:",
                                "invalid YAML")
    assert re.search(r"task\.yaml:\d+: ", line)


def test_unknown_plugin_lists_installed(nsb_main, tmp_path):
    path = write(tmp_path, GOOD.replace("type: binsearch", "type: binsaerch"))
    check_one_line_error(nsb_main("task", "validate", str(path)),
                         "traffic_profile.type", "unknown traffic profile plugin 'binsaerch'",
                         "did you mean 'binsearch'", "installed:", "fixed")


def test_unknown_vnf_plugin(nsb_main, tmp_path):
    path = write(tmp_path, GOOD.replace("type: testpmd", "type: testpdm"))
    check_one_line_error(nsb_main("task", "validate", str(path)), "vnfs[0].type",
                         "unknown VNF plugin 'testpdm'", "testpmd")


def test_missing_key(nsb_main, tmp_path):
    path = write(tmp_path, GOOD.replace("        node: sut\n", "\n"))
    check_one_line_error(nsb_main("task", "validate", str(path)), "scenarios[0].vnfs[0]",
                         "missing required key 'node'")


def test_mistyped_option_key_suggests(nsb_main, tmp_path):
    path = write(tmp_path, GOOD.replace("      duration:", "      durtion:"))
    line = check_one_line_error(nsb_main("task", "validate", str(path)),
                                "scenarios[0].traffic_profile", "unknown key 'durtion'",
                                "did you mean 'duration'", "allowed:")
    expected_line = GOOD.splitlines().index(
        next(x for x in GOOD.splitlines() if x.startswith("      duration:"))) + 1
    assert f"task.yaml:{expected_line}:" in line


def test_wrong_type(nsb_main, tmp_path):
    path = write(tmp_path, GOOD.replace("cores: 1", "cores: many"))
    check_one_line_error(nsb_main("task", "validate", str(path)),
                         "scenarios[0].vnfs[0].options.cores", "expected an integer", "'many'")


def test_jinja_undefined_variable(nsb_main, tmp_path):
    path = write(tmp_path, GOOD.replace("{{ duration_s | default(2) }}", "{{ duraton_s }}"))
    check_one_line_error(nsb_main("task", "validate", str(path)), "task.yaml:",
                         "'duraton_s' is undefined", "--task-args")


def test_jinja_syntax_error(nsb_main, tmp_path):
    path = write(tmp_path, GOOD.replace("{{ duration_s | default(2) }}", "{{ duration_s "))
    check_one_line_error(nsb_main("task", "validate", str(path)), "task.yaml:", "template error")


def test_missing_task_file(nsb_main, tmp_path):
    check_one_line_error(nsb_main("task", "validate", str(tmp_path / "nope.yaml")),
                         "nope.yaml", "file not found")


def test_missing_profile_file(nsb_main, tmp_path):
    text = GOOD.replace("    traffic_profile:\n      type: binsearch",
                        "    traffic_profile: profiles/missing.yaml\n    x_removed:\n      type: b")
    text = text.split("    x_removed:")[0] + "    runner:" + text.split("    runner:")[1]
    path = write(tmp_path, text)
    check_one_line_error(nsb_main("task", "validate", str(path)), "traffic_profile",
                         "traffic profile file not found", "missing.yaml")


def test_link_to_undefined_interface(nsb_main, tmp_path):
    path = write(tmp_path, GOOD.replace("- [sut:xe1, tg:xe1]", "- [sut:xe3, tg:xe1]"))
    check_one_line_error(nsb_main("task", "validate", str(path)), "context.links[1][0]",
                         "undefined interface 'sut:xe3'", "sut has: xe0, xe1")


def test_frame_size_below_64(nsb_main, tmp_path):
    path = write(tmp_path, GOOD)
    code = nsb_main("task", "validate", str(path), "--task-args",
                    '{"packet_sizes": [60, 128]}')
    check_one_line_error(code, "traffic_profile.packet_sizes[0]", "60 is below the minimum 64")


def test_bad_task_args_json(nsb_main):
    check_one_line_error(nsb_main("task", "validate", str(SAMPLE), "--task-args", "{nope"),
                         "--task-args", "not valid JSON")


def test_task_args_file(nsb_main, tmp_path):
    args = tmp_path / "args.yaml"
    args.write_text("packet_sizes: [63]\n")
    check_one_line_error(nsb_main("task", "validate", str(SAMPLE), "--task-args-file", str(args)),
                         "below the minimum 64")


def test_unknown_node_for_vnf(nsb_main, tmp_path):
    path = write(tmp_path, GOOD.replace("node: sut", "node: dut"))
    check_one_line_error(nsb_main("task", "validate", str(path)), "vnfs[0].node",
                         "unknown node 'dut'", "tg, sut")


def test_sut_plugin_as_generator_is_refused(nsb_main, tmp_path):
    path = write(tmp_path, GOOD.replace("type: {{ generator }}", "type: testpmd").replace(
        "        flows: {{ flows | default(16) }}\n", "").replace(
        "        bidirectional: {{ bidirectional | default(true) | tojson }}\n", "").replace(
        '        {{ "latency_pps" if generator == "trex" else "latency_probe_pps" }}: 1000\n',
        "        cores: 1\n"))
    check_one_line_error(nsb_main("task", "validate", str(path)), "traffic_generator.type",
                         "not a traffic generator", "trafgen")


def test_debug_shows_traceback(nsb_main, tmp_path):
    path = write(tmp_path, GOOD.replace("type: binsearch", "type: nope"))
    code, out, err = nsb_main("--debug", "task", "validate", str(path))
    assert code == 2
    assert "Traceback" in err


@pytest.mark.parametrize("schema", ["nsb:task:9", None])
def test_unknown_schema(nsb_main, tmp_path, schema):
    text = GOOD.replace('schema: "nsb:task:0.1"', f"schema: {schema!r}" if schema else "")
    path = write(tmp_path, text)
    check_one_line_error(nsb_main("task", "validate", str(path)), "unknown task schema")


def test_a_task_arg_no_template_reads_is_an_error_naming_it(nsb_main, tmp_path):
    check_one_line_error(
        nsb_main("task", "validate", str(SAMPLE), "--task-args", '{"duraton_s": 5}'),
        "--task-args: 'duraton_s' is not used by the task's templates (did you mean "
        "'duration_s'?); they read: bidirectional, duration_s")
    args = tmp_path / "args.yaml"
    args.write_text("duration_s: 1\nspeed: 10\n")
    check_one_line_error(
        nsb_main("task", "validate", str(SAMPLE), "--task-args-file", str(args)),
        f"{args}: 'speed' is not used by the task's templates (did you mean 'speed_gbps'?)")
    # arguments the Yardstick task passes on to its topology, descriptors and profile count
    code, _, err = nsb_main("task", "validate", str(SAMPLE.parent / "prox" / "tc_prox_l3fwd.yaml"),
                            "--task-args", '{"precision": 1, "speed_gbps": 1}')
    assert code == 0, err
