"""Values users write: each mistake one located line (file:line, key, what is wrong,
what is allowed), several of one file together, exit 2; legal but odd is a warning."""

import re
import textwrap
from pathlib import Path

import pytest

from nsb.errors import TaskError, TaskErrors
from nsb.task import line_map, pod_file, values

TASK = """\
schema: nsb:task:0.1
context:
  type: netns
  nodes:
    tg:
      role: tg
      interfaces: {xe0: {}, xe1: {}}
    dut:
      interfaces: {xe0: {}, xe1: {}}
  links: [[tg:xe0, dut:xe0], [tg:xe1, dut:xe1]]
scenarios:
  - traffic_generator: {name: tg, type: trafgen, node: tg}
    vnfs: [{name: fwd, type: testpmd, node: dut}]
    traffic_profile: {type: fixed, rate_pps: 1000, packet_sizes: [64]}
"""

POD = """\
nodes:
  - name: tg
    role: TrafficGen
    ip: 192.0.2.10
    interfaces:
      xe0: {vpci: "0000:05:00.0", local_mac: "3c:fd:fe:00:00:01", driver: i40e,
            local_ip: 198.18.1.10, netmask: 255.255.255.0}
      xe1: {vpci: "0000:05:00.1", local_mac: "3c:fd:fe:00:00:02", driver: i40e,
            local_ip: 198.18.2.10, netmask: 255.255.255.0}
  - name: dut
    role: Sut
    ip: 192.0.2.11
    interfaces:
      xe0: {vpci: "0000:06:00.0", local_mac: "3c:fd:fe:00:01:01", driver: i40e,
            local_ip: 198.18.1.20, netmask: 255.255.255.0}
"""


def errors(result) -> list[str]:
    code, _, err = result
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if not line.startswith("WARNING")]
    assert lines and all(line.startswith("nsb: error: ") for line in lines), err
    return lines


def validate(nsb_main, tmp_path, text, *args):
    path = tmp_path / "task.yaml"
    path.write_text(textwrap.dedent(text))
    return nsb_main("task", "validate", *args, str(path))


# single values


@pytest.mark.parametrize("text", ["300.18.1.10", "999.1.1.1", "10.0.0", "1.2.3.4.5", "fe80::zz"])
def test_bad_addresses_say_what_an_address_is(text):
    problem = values.address_problem(text)
    assert problem and "0-255" in problem


@pytest.mark.parametrize("text", ["198.18.1.10", "2001:db8::1"])
def test_good_addresses(text):
    assert values.address_problem(text) is None
    assert values.address_problem(text + "/24", with_prefix=True) is None


@pytest.mark.parametrize("text, allowed", [("10.0.0.1/99", "/0 to /32"),
                                           ("2001:db8::1/129", "/0 to /128"),
                                           ("10.0.0.1/x", "/0 to /32")])
def test_prefix_beyond_the_address_family(text, allowed):
    assert allowed in values.address_problem(text, with_prefix=True)


@pytest.mark.parametrize("mac, word", [("00:00:00:00:00:00", "all zero"),
                                       ("ff:ff:ff:ff:ff:ff", "broadcast"),
                                       ("01:00:5e:00:00:01", "multicast"),
                                       ("33:33:00:00:00:01", "multicast"),
                                       ("3c:fd:fe", "not a MAC")])
def test_macs_an_interface_cannot_have(mac, word):
    assert word in values.mac_problem(mac)


def test_unicast_mac_is_fine():
    assert values.mac_problem("02:00:00:00:01:01") is None


@pytest.mark.parametrize("cpus", ["5-1", "0-2,9-8"])
def test_empty_cpu_range(cpus):
    assert "is empty" in values.cpu_list_problem(cpus)


@pytest.mark.parametrize("cpus", ["0", "1-3", "0-1,4,6-7"])
def test_cpu_lists(cpus):
    assert values.cpu_list_problem(cpus) is None


def test_interface_name_length():
    assert values.ifname_problem("a" * 15) is None
    assert "at most 15" in values.ifname_problem("a" * 16)


# pods


def load(tmp_path, text):
    path = tmp_path / "pod.yaml"
    path.write_text(text)
    return pod_file.load_pod(path)


def test_pod_typo_is_an_unknown_key_with_did_you_mean(tmp_path):
    with pytest.raises(TaskError) as caught:
        load(tmp_path, POD.replace("local_mac: \"3c:fd:fe:00:00:01\"",
                                   "localmac: \"3c:fd:fe:00:00:01\""))
    text = str(caught.value)
    assert "pod.yaml:6: nodes[0].interfaces.xe0.localmac: unknown key 'localmac'" in text
    assert "did you mean 'local_mac'" in text


def test_pod_node_typo(tmp_path):
    with pytest.raises(TaskError, match=r"pod.yaml:11: nodes\[1\].rol: unknown key 'rol' "
                                        r"\(did you mean 'role'\?\)"):
        load(tmp_path, POD.replace("    role: Sut", "    rol: Sut"))


def test_pod_mistakes_are_reported_together_each_on_its_line(tmp_path):
    bad = (POD.replace("198.18.1.10", "300.18.1.10").replace("198.18.2.10", "999.1.1.1")
           .replace("3c:fd:fe:00:01:01", "ff:ff:ff:ff:ff:ff")
           .replace("local_ip: 198.18.1.20, netmask: 255.255.255.0",
                    "local_ip: 198.18.1.20, netmask: 255.0.255.0"))
    with pytest.raises(TaskErrors) as caught:
        load(tmp_path, bad)
    lines = str(caught.value).splitlines()
    assert [re.match(r"\S+pod.yaml:(\d+): (\S+):", line).groups() for line in lines] == [
        ("7", "nodes[0].interfaces.xe0.local_ip"), ("9", "nodes[0].interfaces.xe1.local_ip"),
        ("14", "nodes[1].interfaces.xe0.local_mac"), ("15", "nodes[1].interfaces.xe0.netmask")]
    assert "'300.18.1.10' is not an IPv4 or IPv6 address" in lines[0]
    assert "broadcast" in lines[2]
    assert "not an IPv4 netmask" in lines[3]


def test_pod_duplicate_mac_on_one_node(tmp_path):
    with pytest.raises(TaskError, match=r"pod.yaml:8: nodes\[0\].interfaces.xe1.local_mac: "
                                        "3c:fd:fe:00:00:01 is also xe0's MAC"):
        load(tmp_path, POD.replace("3c:fd:fe:00:00:02", "3c:fd:fe:00:00:01"))


def test_same_mac_on_two_nodes_is_not_a_duplicate(tmp_path):
    nodes = load(tmp_path, POD.replace("3c:fd:fe:00:01:01", "3c:fd:fe:00:00:01"))
    assert nodes["dut"].interfaces["xe0"].mac == nodes["tg"].interfaces["xe0"].mac


def test_pod_ipv6_address_and_prefix(tmp_path):
    nodes = load(tmp_path, POD.replace("local_ip: 198.18.1.20, netmask: 255.255.255.0",
                                       "local_ip: \"2001:db8::20\", netmask: 64"))
    assert nodes["dut"].interfaces["xe0"].ip == "2001:db8::20/64"
    with pytest.raises(TaskError, match="/0 to /128"):
        load(tmp_path, POD.replace("local_ip: 198.18.1.20, netmask: 255.255.255.0",
                                   "local_ip: \"2001:db8::20\", netmask: 200"))


def test_pod_interface_name_over_15_characters(tmp_path):
    with pytest.raises(TaskError, match=r"pod.yaml:6: nodes\[0\].interfaces.xe0_far_too_long0:"
                                        " interface name .* at most 15"):
        load(tmp_path, POD.replace("      xe0:", "      xe0_far_too_long0:", 1))


def test_pod_node_cabled_to_itself(tmp_path):
    with pytest.raises(TaskError, match="on its own node"):
        load(tmp_path, POD.replace("driver: i40e,\n            local_ip: 198.18.1.10",
                                   "driver: i40e, peer: 'tg:xe1',\n"
                                   "            local_ip: 198.18.1.10"))


# task files


def test_netns_values_reported_together(nsb_main, tmp_path):
    text = TASK.replace("interfaces: {xe0: {}, xe1: {}}\n    dut",
                        "interfaces: {xe0: {ip: 300.18.1.10/99, mac: '00:00:00:00:00:00'}, "
                        "xe1: {mac: 'ff:ff:ff:ff:ff:ff'}}\n    dut")
    text = text.replace("interfaces: {xe0: {}, xe1: {}}\n  links",
                        "interfaces: {xe0: {}, xe1: {}, interface_name_16: {}}\n  links")
    lines = errors(validate(nsb_main, tmp_path, text))
    assert len(lines) == 4, lines  # the address is wrong: its prefix is not looked at
    assert all(re.match(r"nsb: error: \S+task.yaml:(7|9): context.nodes", line)
               for line in lines), lines
    joined = "\n".join(lines)
    for fragment in ("xe0.mac: 00:00:00:00:00:00 is all zero", "broadcast",
                     "'300.18.1.10' is not an IPv4", "interface_name_16: interface name"):
        assert fragment in joined


def test_netns_prefix_too_long(nsb_main, tmp_path):
    text = TASK.replace("interfaces: {xe0: {}, xe1: {}}\n    dut",
                        "interfaces: {xe0: {ip: 10.0.0.1/99}, xe1: {}}\n    dut")
    [line] = errors(validate(nsb_main, tmp_path, text))
    assert "task.yaml:7: context.nodes.tg.interfaces.xe0.ip: /99 is not an IPv4 prefix " \
           "(allowed: /0 to /32)" in line


def test_one_of_several_keys_missing_names_them(nsb_main, tmp_path):
    text = TASK.replace("{type: fixed, rate_pps: 1000, packet_sizes: [64]}",
                        "{type: soak, packet_sizes: [64], duration: 10}")
    [line] = errors(validate(nsb_main, tmp_path, text))
    assert line.endswith("task.yaml:14: scenarios[0].traffic_profile: needs exactly one of "
                         "rate_pps, rate_pct, ndr_task"), line


def test_a_value_of_a_type_no_branch_takes_is_one_line(nsb_main, tmp_path):
    """An interface is a mapping or null: a number there is reported, not lost (it
    reached the topology code as an int)."""
    text = TASK.replace("interfaces: {xe0: {}, xe1: {}}\n    dut",
                        "interfaces: {xe0: 1, xe1: {}}\n    dut")
    [line] = errors(validate(nsb_main, tmp_path, text))
    assert "task.yaml:7: context.nodes.tg.interfaces.xe0: expected an object or a null, " \
           "got 1" in line


def test_netns_duplicate_mac_on_a_node(nsb_main, tmp_path):
    text = TASK.replace("interfaces: {xe0: {}, xe1: {}}\n  links",
                        "interfaces: {xe0: {mac: '02:00:00:00:00:09'}, "
                        "xe1: {mac: '02:00:00:00:00:09'}}\n  links")
    [line] = errors(validate(nsb_main, tmp_path, text))
    assert "task.yaml:9: context.nodes.dut.interfaces.xe1.mac: 02:00:00:00:00:09 is also " \
           "xe0's MAC" in line


def test_direct_link_from_a_node_to_itself(nsb_main, tmp_path):
    text = TASK.replace("dut:\n      interfaces: {xe0: {}, xe1: {}}",
                        "dut:\n      interfaces: {xe0: {}, xe1: {}, xe2: {}, xe3: {}}")
    text = text.replace("[tg:xe1, dut:xe1]]", "[tg:xe1, dut:xe1], [dut:xe2, dut:xe3]]")
    [line] = errors(validate(nsb_main, tmp_path, text))
    assert "task.yaml:10: context.links[2]: both ends are on node dut" in line


def test_a_generators_ports_may_be_cabled_to_each_other(nsb_main, tmp_path):
    """A loopback measures the generator without a DUT (its own latency floor)."""
    text = TASK.replace("interfaces: {xe0: {}, xe1: {}}\n    dut",
                        "interfaces: {xe0: {}, xe1: {}, xe2: {}, xe3: {}}\n    dut")
    text = text.replace("[tg:xe1, dut:xe1]]", "[tg:xe1, dut:xe1], [tg:xe2, tg:xe3]]")
    code, out, err = validate(nsb_main, tmp_path, text)
    assert code == 0, err


def test_empty_lcore_range(nsb_main, tmp_path):
    text = TASK.replace("node: dut}]", "node: dut, options: {lcores: '5-1'}}]")
    [line] = errors(validate(nsb_main, tmp_path, text))
    assert "task.yaml:13: scenarios[0].vnfs[0].options.lcores: the range 5-1" in line


def test_rate_above_line_rate_from_the_command_line(nsb_main, tmp_path):
    [line] = errors(validate(nsb_main, tmp_path, TASK, "--rate", "20Mpps"))
    assert "20.00 Mpps (rate_pps, or --rate) is above line rate at 64 B" in line
    assert "at most 14.88 Mpps" in line
    code, _, err = validate(nsb_main, tmp_path, TASK, "--rate", "14Mpps")
    assert code == 0, err


def test_dut_on_the_generators_node_and_frames_over_the_mtu(nsb_main, tmp_path):
    text = TASK.replace("node: dut}]", "node: tg}]").replace("[64]", "[64, 9000]")
    lines = errors(validate(nsb_main, tmp_path, text))
    assert len(lines) == 2, lines
    assert "task.yaml:13: scenarios[0].vnfs[0].node: the DUT 'fwd' is on node tg" in lines[0]
    assert "task.yaml:14: scenarios[0].traffic_profile.packet_sizes: frame size 9000 B does " \
           "not fit the MTU 1500" in lines[1]


def test_larger_mtu_takes_jumbo_frames(nsb_main, tmp_path):
    text = TASK.replace("{xe0: {}, xe1: {}}", "{xe0: {mtu: 9000}, xe1: {mtu: 9000}}")
    code, _, err = validate(nsb_main, tmp_path, text.replace("[64]", "[9018]"))
    assert code == 0, err


def test_peers_on_different_subnets_warn(nsb_main, tmp_path):
    text = TASK.replace("interfaces: {xe0: {}, xe1: {}}\n    dut",
                        "interfaces: {xe0: {ip: 10.8.8.8/24}, xe1: {}}\n    dut")
    text = text.replace("interfaces: {xe0: {}, xe1: {}}\n  links",
                        "interfaces: {xe0: {ip: 10.9.9.9/24}, xe1: {}}\n  links")
    code, _, err = validate(nsb_main, tmp_path, text)
    assert code == 0, err
    assert "tg:xe0 (10.8.8.8/24) and its peer dut:xe0 (10.9.9.9/24) are on different " \
           "subnets" in err


# templates


LOOP = """\
{% set n = n or 2 %}
schema: nsb:task:0.1
context:
  type: netns
  nodes:
{% for i in range(n) %}
    n{{ i }}:
      interfaces:
        xe0: {ip: 10.0.{{ i * 100 }}.1/24}
        xe1: {}
{% endfor %}
    tg: {role: tg, interfaces: {xe0: {}, xe1: {}}}
  links: [[tg:xe0, n0:xe0], [tg:xe1, n0:xe1]]
scenarios:
  - traffic_generator: {name: tg, type: trafgen, node: tg}
    traffic_profile: {type: fixed, rate_pps: 1000, pakcet_sizes: [64]}
"""


def test_rendered_lines_point_into_the_file(nsb_main, tmp_path):
    lines = errors(validate(nsb_main, tmp_path, LOOP, "--task-args", '{"n": 40}'))
    assert lines[-1].endswith("task.yaml: 17 more mistakes like these are not shown")
    numbers = {int(re.search(r"task.yaml:(\d+):", line).group(1)) for line in lines[:-1]}
    assert numbers == {9}, lines  # the loop body's line, not the rendered output's
    assert "context.nodes.n10.interfaces.xe0.ip: '10.0.1000.1' is not" in lines[0]


def test_rendered_lines_after_a_loop_keep_their_line(nsb_main, tmp_path):
    lines = errors(validate(nsb_main, tmp_path, LOOP, "--task-args", '{"n": 2}'))
    assert len(lines) == 1
    assert "task.yaml:16: scenarios[0].traffic_profile.pakcet_sizes: unknown key" in lines[0]
    assert "did you mean 'packet_sizes'" in lines[0]


def test_line_map_never_points_past_the_end():
    source = "a: 1\n{% for i in range(50) %}\nk{{ i }}: {{ i }}\n{% endfor %}\n"
    rendered = "a: 1\n" + "".join(f"\nk{i}: {i}" for i in range(50)) + "\n"
    mapping = line_map.source_lines(source, rendered)
    assert mapping[0] == 1
    assert set(mapping[1:]) <= {2, 3, 4}
    assert max(mapping) <= 4


def test_many_mistakes_are_capped(tmp_path):
    error = TaskErrors([TaskError("bad", "f.yaml", n) for n in range(1, 31)])
    lines = str(error).splitlines()
    assert len(lines) == TaskErrors.SHOWN + 1
    assert lines[-1] == "f.yaml: 10 more mistakes like these are not shown"


def test_the_task_files_page_example_prints_what_it_shows(nsb_main, tmp_path, monkeypatch):
    """docs/concepts/task-files.md's bad task, validated: exactly the lines it shows."""
    page = Path(__file__).resolve().parents[2] / "docs" / "concepts" / "task-files.md"
    readme = page.read_text()
    section = readme[readme.index("## Mistakes caught before a run"):]
    task, shown = re.findall(r"```(?:yaml)?\n(.*?)```", section, re.S)[:2]
    (tmp_path / "task.yaml").write_text(task)
    monkeypatch.chdir(tmp_path)
    code, _, err = nsb_main("task", "validate", "task.yaml")
    assert code == 2
    assert err.splitlines() == shown.splitlines()
