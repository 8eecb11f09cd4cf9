"""PROX config parsing and placeholder filling, against the reference .cfg files."""

from pathlib import Path

import pytest

from nsb.errors import TaskError
from nsb.vnfs.prox.config import PortAddresses, ProxConfig, parameters_lua

DATA = Path(__file__).resolve().parent.parent / "data"
PROX_REF = DATA / "prox-reference"
NSB_CONFIGS = DATA / "yardstick-samples/samples/vnf_samples/nsut/prox/configs"
ALL_CONFIGS = sorted(PROX_REF.glob("*.cfg")) + sorted(NSB_CONFIGS.glob("*.cfg"))

# the reference pod: trafficgen_0 xe0/xe1 cabled to vnf_0 xe0/xe1
TG_PORTS = {
    0: PortAddresses("xe0", "68:05:ca:30:3d:50", "152.16.100.19/24", "68:05:ca:30:3c:68",
                     "152.16.100.21/24"),
    1: PortAddresses("xe1", "68:05:ca:30:3d:51", "152.16.40.19/24", "68:05:ca:30:3c:69",
                     "152.16.40.21/24"),
}


def load(path: Path) -> ProxConfig:
    return ProxConfig.parse(path.read_text(), str(path))


def test_reference_configs_are_found():
    assert len(ALL_CONFIGS) >= 5 + 11  # the recorded lab configs and the whole NSB sample set


@pytest.mark.parametrize("path", ALL_CONFIGS, ids=lambda p: p.name)
def test_parse_write_parse_keeps_every_item(path):
    first = load(path)
    again = ProxConfig.parse(first.text(), "again")
    flat = [(s.name, i.key, i.value) for s in first.sections for i in s.items]
    assert flat == [(s.name, i.key, i.value) for s in again.sections for i in s.items]
    assert flat  # something was parsed


def test_comments_and_repeated_sections():
    config = load(NSB_CONFIGS / "gen_l3fwd-2.cfg")
    eal = config.section("eal options")
    assert eal.get("-n") == "4"  # "; force number of memory channels" stripped
    assert eal.get("no-output") == "no"
    embedded = load(PROX_REF / "embedded-lab-gen.cfg")
    assert [s.name for s in embedded.sections].count("core 1") == 2


def test_tasks_and_ports_of_the_nsb_generator():
    config = load(NSB_CONFIGS / "gen_l3fwd-2.cfg")
    gen = [(t.core, t.task, t.tx_port) for t in config.tasks() if t.mode == "gen"]
    lat = [(t.core, t.task, t.rx_port) for t in config.tasks() if t.mode == "lat"]
    assert gen == [(1, 0, 0), (2, 0, 1)]
    assert lat == [(3, 0, 0), (4, 0, 1)]
    assert config.ports() == {"p0": 0, "p1": 1}


def test_tasks_of_the_embedded_lab_generator_share_a_core():
    config = load(PROX_REF / "embedded-lab-gen.cfg")
    tasks = {(t.core, t.task): t.mode for t in config.tasks()}
    assert tasks[(1, 0)] == "gen" and tasks[(1, 1)] == "lat"


def test_mac_placeholders_filled_from_the_topology():
    config = load(NSB_CONFIGS / "gen_l3fwd-2.cfg")
    config.fill(TG_PORTS, {}, "trafficgen_0")
    variables = config.section("variables")
    assert variables.get("$sut_mac0") == "68 05 ca 30 3c 68"  # the peer's MAC, spaced
    assert variables.get("$sut_mac1") == "68 05 ca 30 3c 69"
    assert variables.get("$tester_mac0") == "68 05 ca 30 3d 50"
    assert "@@" not in config.text()
    assert config.section("port 0").get("mac") == "hardware"


def test_ip_and_colon_mac_placeholders():
    config = ProxConfig.parse(
        "[port 0]\nname=p0\nmac=aa:bb:cc:dd:ee:ff\ndst mac=@@0\nsrc mac=@@1\n"
        "[variables]\n$a=@@dst_ip0\n$b=@@src_ip_hex1\n$c=@@dst_ip_hex1\n", "t.cfg")
    config.fill(TG_PORTS, {}, "tg")
    port = config.section("port 0")
    assert port.get("mac") == "hardware"
    assert port.get("dst mac") == "68:05:ca:30:3c:68"
    assert port.get("src mac") == "68:05:ca:30:3d:51"
    variables = config.section("variables")
    assert variables.get("$a") == "152.16.100.21"
    assert variables.get("$b") == "98 10 28 13"  # 152.16.40.19
    assert variables.get("$c") == "98 10 28 15"


def test_placeholder_for_a_port_the_node_lacks_is_a_located_error():
    text = "[variables]\n$x=@@dst_mac0\n$y=@@dst_mac2\n"
    with pytest.raises(TaskError) as caught:
        ProxConfig.parse(text, "gen.cfg").fill(TG_PORTS, {}, "trafficgen_0")
    message = str(caught.value)
    assert message.startswith("gen.cfg:3: [variables] $y: ")
    assert "@@dst_mac2" in message and "DPDK ports 0, 1" in message


def test_placeholder_of_an_unlinked_port_has_no_value():
    ports = {0: PortAddresses("xe0", "02:00:00:00:00:01")}
    with pytest.raises(TaskError, match="@@dst_mac0.*xe0 has no link"):
        ProxConfig.parse("[variables]\n$x=@@dst_mac0\n", "g.cfg").fill(ports, {}, "tg")


def test_unknown_placeholder_is_an_error():
    with pytest.raises(TaskError, match="unknown placeholder '@@gateway0'"):
        ProxConfig.parse("[variables]\n$x=@@gateway0\n", "g.cfg").fill(TG_PORTS, {}, "tg")


def test_dofile_points_at_the_copy_on_the_node():
    config = load(NSB_CONFIGS / "handle_l3fwd-2.cfg")
    config.fill(TG_PORTS, {"ipv4-2port.lua": "/tmp/nsb-x/vnf__0/ipv4-2port.lua"}, "vnf_0")
    assert config.section("lua").items[0].key == \
        'lpm4 = dofile("/tmp/nsb-x/vnf__0/ipv4-2port.lua")'


def test_dofile_of_a_file_not_in_prox_files_is_an_error():
    config = load(NSB_CONFIGS / "handle_l3fwd-2.cfg")
    with pytest.raises(TaskError) as caught:
        config.fill(TG_PORTS, {}, "vnf_0")
    assert "[lua]" in str(caught.value) and "prox_files" in str(caught.value)
    assert f"handle_l3fwd-2.cfg:{_line_of(config, 'dofile')}:" in str(caught.value)


def _line_of(config: ProxConfig, needle: str) -> int:
    return next(i.line for s in config.sections for i in s.items if needle in i.key)


def test_af_packet_for_the_embedded_lab_matches_what_real_prox_needed():
    """The reference embedded-lab configs ran on real PROX: nsb must produce the same keys."""
    config = load(NSB_CONFIGS / "gen_l3fwd-2.cfg")
    config.use_af_packet({0: "xe0", 1: "xe1"}, "nsb-abc-tg__0")
    eal = config.section("eal options")
    assert eal.get("no-huge") == "yes" and eal.get("no-pci") == "yes"
    assert eal.get("-m") == "4096"  # a generator: the reference needed 4096
    assert eal.get("eal") == (
        "--vdev net_af_packet0,iface=xe0,framesz=1024,framecnt=4096,qdisc_bypass=1 "
        "--vdev net_af_packet1,iface=xe1,framesz=1024,framecnt=4096,qdisc_bypass=1 "
        "--file-prefix nsb-abc-tg__0")
    assert config.section("port 0").get("lsc") == "no"
    assert config.section("port 1").get("lsc") == "no"
    reference = load(PROX_REF / "embedded-lab-gen.cfg").section("eal options")
    for key in ("no-huge", "no-pci", "-m"):
        assert eal.get(key) == reference.get(key)


def test_af_packet_keeps_an_existing_file_prefix():
    config = load(PROX_REF / "embedded-lab-sut.cfg")
    config.use_af_packet({0: "ps0", 1: "ps1"}, "ignored")
    assert config.section("eal options").get("eal").count("--file-prefix") == 1


def test_on_hugepages_eal_unlinks_their_files_but_not_without_them():
    config = load(NSB_CONFIGS / "gen_l3fwd-2.cfg")
    config.use_pci_devices(["0000:00:10.0"])
    config.unlink_hugepages()
    config.unlink_hugepages()  # once
    assert config.section("eal options").get("eal") == "-a 0000:00:10.0 --huge-unlink"
    lab = load(NSB_CONFIGS / "gen_l3fwd-2.cfg")
    lab.use_af_packet({0: "xe0", 1: "xe1"}, "nsb-abc-tg__0")
    lab.unlink_hugepages()  # EAL refuses it with no-huge
    assert "--huge-unlink" not in lab.section("eal options").get("eal")


def test_parameters_lua_defines_the_topology_as_globals():
    text = parameters_lua(TG_PORTS)
    assert 'dst_mac0 = "68:05:ca:30:3c:68"' in text
    assert 'src_ip1 = "152.16.40.19"' in text
    assert 'tester_mac1 = "68:05:ca:30:3c:69"' in text
