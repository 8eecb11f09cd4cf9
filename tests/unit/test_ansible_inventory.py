"""nsb.nodes.inventory: pod files to Ansible inventories, without the passwords."""

import io
from pathlib import Path

import pytest
import yaml

from nsb.errors import NsbError
from nsb.nodes.inventory import group_name, inventory_from_pod, write_inventory
from tests.conftest import ROOT

REFERENCE_POD = (ROOT / "tests/data/yardstick-samples/samples/vnf_samples/nsut/prox/"
                 "prox-baremetal-2.yaml")
SAMPLE_POD = ROOT / "samples/prox/pod.yaml"


def written(pod: Path) -> str:
    out = io.StringIO()
    write_inventory(pod, out)
    return out.getvalue()


def hosts(inventory: dict) -> dict[str, dict]:
    return {name: host for group in inventory["all"]["children"].values()
            for name, host in group["hosts"].items()}


def test_reference_pod_groups_hosts_and_vars():
    inventory = inventory_from_pod(REFERENCE_POD)
    groups = inventory["all"]["children"]
    assert list(groups) == ["trafficgen", "vnf"]
    assert list(groups["trafficgen"]["hosts"]) == ["trafficgen_0"]
    assert list(groups["vnf"]["hosts"]) == ["vnf_0"]
    tg = groups["trafficgen"]["hosts"]["trafficgen_0"]
    assert tg == {
        "ansible_host": "1.1.1.1", "ansible_user": "root", "ansible_port": 22,
        "nsb_interfaces": {
            "xe0": {"vpci": "0000:05:00.0", "driver": "i40e",
                    "local_mac": "68:05:ca:30:3d:50", "dpdk_port_num": 0},
            "xe1": {"vpci": "0000:05:00.1", "driver": "i40e",
                    "local_mac": "68:05:ca:30:3d:51", "dpdk_port_num": 1},
        },
    }
    vnf = groups["vnf"]["hosts"]["vnf_0"]
    assert vnf["ansible_host"] == "1.1.1.2"
    assert vnf["nsb_interfaces"]["xe1"]["local_mac"] == "68:05:ca:30:3c:69"
    assert "ansible_ssh_private_key_file" not in vnf


def test_reference_pod_password_is_not_written():
    assert "r00t" in REFERENCE_POD.read_text()  # the pod has one
    text = written(REFERENCE_POD)
    assert "r00t" not in text
    assert "password:" not in text and "ansible_ssh_pass" not in text
    for node in ("trafficgen_0", "vnf_0"):
        assert f"# node {node} logs in with a password, which is not copied here: " \
               "run ansible-playbook with --ask-pass" in text
    assert yaml.safe_load(text) == inventory_from_pod(REFERENCE_POD)


def test_sample_pod_with_keys():
    inventory = inventory_from_pod(SAMPLE_POD)
    assert list(inventory["all"]["children"]) == ["trafficgen", "vnf"]
    found = hosts(inventory)
    assert list(found) == ["tg_0", "vnf_0"]
    key = str(Path("~/.ssh/id_ed25519").expanduser().resolve())
    for host in found.values():
        assert host["ansible_ssh_private_key_file"] == key
        assert host["ansible_user"] == "root" and host["ansible_port"] == 22
    assert found["vnf_0"]["ansible_host"] == "192.0.2.20"
    assert found["vnf_0"]["nsb_interfaces"]["xe0"] == {
        "vpci": "0000:af:00.0", "driver": "vfio-pci", "local_mac": "3c:fd:fe:b0:00:00",
        "dpdk_port_num": 0}
    text = written(SAMPLE_POD)
    assert "--ask-pass" not in text
    assert yaml.safe_load(text) == inventory


def test_roles_ports_keys_and_interfaces_without_pci(tmp_path):
    (tmp_path / "keys").mkdir()
    pod = tmp_path / "pod.yaml"
    pod.write_text(yaml.safe_dump({"nodes": [
        {"name": "sut", "role": "Sut-Node", "ip": "192.0.2.1", "user": "nsb",
         "ssh_port": "2222", "key_filename": "keys/id", "password": "s3cret-Pw",
         "interfaces": {"xe0": {"vpci": "0000:3b:00.0", "local_mac": "00:11:22:33:44:55"},
                        "ve0": {"local_mac": "02:00:00:00:00:01", "local_ip": "10.0.0.1"}}},
        {"name": "gen", "ip": "192.0.2.2"},
        {"name": "local"},
    ]}))
    inventory = inventory_from_pod(pod)
    groups = inventory["all"]["children"]
    assert list(groups) == ["sut_node", "ungrouped"]
    assert list(groups["ungrouped"]["hosts"]) == ["gen", "local"]
    sut = groups["sut_node"]["hosts"]["sut"]
    assert sut["ansible_user"] == "nsb" and sut["ansible_port"] == 2222
    assert sut["ansible_ssh_private_key_file"] == str((tmp_path / "keys/id").resolve())
    assert sut["nsb_interfaces"] == {"xe0": {"vpci": "0000:3b:00.0",
                                             "local_mac": "00:11:22:33:44:55"},
                                     "ve0": {"local_mac": "02:00:00:00:00:01"}}
    assert groups["ungrouped"]["hosts"]["local"] == {"nsb_interfaces": {}}
    text = written(pod)
    assert "s3cret-Pw" not in text
    assert "--ask-pass" not in text  # it has a key
    assert "# node local has no ip in the pod" in text
    # an all-digit MAC stays a string (YAML 1.1 would read 00:11:22:... as a number)
    assert yaml.safe_load(text) == inventory


@pytest.mark.parametrize(("role", "group"), [
    ("TrafficGen", "trafficgen"), ("VNF", "vnf"), ("", "ungrouped"), ("  ", "ungrouped"),
    ("Sut Node", "sut_node"), ("5g-core", "role_5g_core"),
])
def test_group_names(role, group):
    assert group_name(role) == group


def test_bad_pods_are_user_errors(tmp_path):
    with pytest.raises(NsbError, match="not found"):
        inventory_from_pod(tmp_path / "missing.yaml")
    pod = tmp_path / "pod.yaml"
    pod.write_text("nodes:\n- role: VNF\n")
    with pytest.raises(NsbError, match="pod.yaml:2"):
        write_inventory(pod, io.StringIO())


def test_cli_writes_the_inventory_and_keeps_the_file_on_a_bad_pod(nsb_main, tmp_path):
    import yaml as _yaml

    target = tmp_path / "inventory.yaml"
    code, out, err = nsb_main("ansible", "inventory", str(REFERENCE_POD), "-o", str(target))
    assert code == 0, err
    inventory = _yaml.safe_load(target.read_text())
    assert "r00t" not in target.read_text()
    assert inventory["all"]["children"]["vnf"]["hosts"]["vnf_0"]["ansible_host"] == "1.1.1.2"
    bad = tmp_path / "bad.yaml"
    bad.write_text("nodes: [{name: 'x y'}]\n")
    before = target.read_text()
    code, out, err = nsb_main("ansible", "inventory", str(bad), "-o", str(target))
    assert code == 2 and "bad.yaml" in err and "nodes[0].name" in err
    assert target.read_text() == before
