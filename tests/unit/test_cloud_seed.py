"""The cloud-init seed of a VM booted from a disk image: its files, the ISO that
genisoimage makes of them, the CD-ROM in the domain, the run's overlay of the image.
A Debian 12 cloud-init image booted with such a seed under TCG answered SSH at the
seed's address; that boot (about a minute) is not part of the tests."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET

import pytest
import yaml

from nsb import engine
from nsb.contexts import cloud_seed, domain_xml
from nsb.errors import TaskError
from nsb.executors.local import LocalExecutor
from nsb.runinfo import RunInfo
from nsb.task import loader
from tests.conftest import ROOT

SEED = cloud_seed.Seed(instance_id="nsb-261123-000000-abcdef-vnf0", hostname="vnf0",
                       authorized_key="ssh-ed25519 AAAAC3Nza nsb-run\n",
                       mgmt_mac="02:aa:bb:cc:dd:01", mgmt_address="10.254.3.10/24",
                       nics=(("02:aa:bb:cc:dd:02", "xe0"), ("02:aa:bb:cc:dd:03", "xe1")))


def test_the_seed_gives_root_the_run_s_key_the_management_address_and_the_nic_names():
    files = cloud_seed.files(SEED)
    assert files["user-data"].startswith("#cloud-config\n")  # else cloud-init ignores it
    user_data = yaml.safe_load(files["user-data"])
    assert user_data["disable_root"] is False and user_data["ssh_pwauth"] is False
    assert user_data["users"] == [{"name": "root",
                                   "ssh_authorized_keys": ["ssh-ed25519 AAAAC3Nza nsb-run"]}]
    network = yaml.safe_load(files["network-config"])
    assert network["version"] == 2
    assert network["ethernets"]["mgmt"] == {"match": {"macaddress": "02:aa:bb:cc:dd:01"},
                                            "set-name": "mgmt", "addresses": ["10.254.3.10/24"],
                                            "dhcp4": False}
    assert network["ethernets"]["xe1"]["match"]["macaddress"] == "02:aa:bb:cc:dd:03"
    assert network["ethernets"]["xe1"]["set-name"] == "xe1"
    assert yaml.safe_load(files["meta-data"]) == {"instance-id": SEED.instance_id,
                                                  "local-hostname": "vnf0"}


def test_nsb_s_flavor_user_and_password_are_a_sudo_login():
    seed = cloud_seed.Seed(**{**SEED.__dict__, "user": "ubuntu", "password": "password"})
    user_data = yaml.safe_load(cloud_seed.files(seed)["user-data"])
    [login] = user_data["users"]
    assert login["name"] == "ubuntu" and login["plain_text_passwd"] == "password"
    assert login["lock_passwd"] is False and login["sudo"] == "ALL=(ALL) NOPASSWD:ALL"
    assert user_data["ssh_pwauth"] is True


def test_genisoimage_makes_the_cidata_volume_cloud_init_looks_for(tmp_path):
    iso = cloud_seed.write_iso(LocalExecutor(), SEED, str(tmp_path / "vnf0"))
    shown = subprocess.run(["isoinfo", "-d", "-i", iso], capture_output=True, text=True,
                           check=True).stdout
    assert "Volume id: cidata" in shown
    listed = subprocess.run(["isoinfo", "-f", "-R", "-i", iso], capture_output=True,
                            text=True, check=True).stdout.split()
    assert sorted(listed) == ["/meta-data", "/network-config", "/user-data"]
    user_data = subprocess.run(["isoinfo", "-R", "-x", "/user-data", "-i", iso],
                               capture_output=True, text=True, check=True).stdout
    assert user_data == cloud_seed.files(SEED)["user-data"]


def test_the_seed_is_a_read_only_cd_rom_beside_the_disk():
    vm = domain_xml.VmDefinition(name="v", vcpus=1, ram_mb=512, console_log="/c", nics=(),
                                 disk_image="/w/vnf0.qcow2", seed_iso="/w/vnf0/seed.iso")
    root = ET.fromstring(domain_xml.render(vm))
    [disk, cdrom] = root.findall("devices/disk")
    assert disk.get("device") == "disk" and cdrom.get("device") == "cdrom"
    assert cdrom.find("source").get("file") == "/w/vnf0/seed.iso"
    # IDE on the default i440fx machine: Debian's cloud kernel has no AHCI (SATA) driver
    assert cdrom.find("readonly") is not None and cdrom.find("target").get("bus") == "ide"
    q35 = ET.fromstring(domain_xml.render(domain_xml.VmDefinition(**{**vm.__dict__,
                                                                     "machine": "q35"})))
    assert q35.findall("devices/disk")[1].find("target").get("bus") == "sata"


def _image_context(tmp_path, image: str):
    task = tmp_path / "task.yaml"
    sample = (ROOT / "samples" / "libvirt" / "tc_testpmd_vm_rfc2544.yaml").read_text()
    task.write_text(sample.replace("        role: Sut\n", f"        role: Sut\n        image: "
                                                           f"{image}\n", 1))
    loaded = loader.load(task, {})
    plan = engine.plan(loaded, RunInfo(task_id="261123-000000-abcdef", task=loaded,
                                       results_dir=tmp_path / "r"))
    return plan, plan.context.contexts[1]


def test_a_disk_image_vm_runs_on_an_overlay_of_the_image(tmp_path):
    base = tmp_path / "cloud.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(base), "64M"], check=True)
    plan, context = _image_context(tmp_path, "cloud.qcow2")  # relative to the task file
    assert "configured by a cloud-init seed" in plan.describe()["context"]["contexts"][1][
        "vms"]["vnf0"]["image"]
    context.work_dir = tmp_path / "work"
    context.work_dir.mkdir()
    overlay = context._overlay("vnf0", "cloud.qcow2")
    info = json.loads(subprocess.run(["qemu-img", "info", "--output=json", overlay],
                                     capture_output=True, text=True, check=True).stdout)
    assert info["format"] == "qcow2" and info["backing-filename"] == str(base)


def test_a_disk_image_that_is_not_there_is_one_located_line(tmp_path):
    _, context = _image_context(tmp_path, "missing.qcow2")
    context.work_dir = tmp_path
    with pytest.raises(TaskError, match=r"task.yaml:\d+: contexts\[1\]\.vms\.vnf0\.image: "
                                        r"missing.qcow2: no image file there"):
        context._overlay("vnf0", "missing.qcow2")
