"""A NoCloud seed: cloud-init's ``cidata`` ISO that configures a VM booted from a
disk image as nsb's own guest is configured, so that nsb can reach it: the run's
SSH key for the login user, the management address on the NIC with the
management MAC (named ``mgmt``) and each data NIC named as the task names it.
Any image with cloud-init (Debian's and Ubuntu's cloud images, NSB's image)
reads it from the VM's CD-ROM at first boot."""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from nsb.errors import PrerequisiteError
from nsb.executors.base import Executor

FILES = ("meta-data", "user-data", "network-config")


@dataclass(frozen=True)
class Seed:
    instance_id: str  # a new one per run: cloud-init applies a seed once per instance
    hostname: str
    authorized_key: str
    mgmt_mac: str
    mgmt_address: str  # with prefix length, e.g. 10.254.3.10/24
    nics: tuple[tuple[str, str], ...] = ()  # (MAC, name) of each data NIC
    user: str = "root"
    password: str | None = None


def files(seed: Seed) -> dict[str, str]:
    """The seed's three files, by name."""
    login = {"name": seed.user, "ssh_authorized_keys": [seed.authorized_key.strip()]}
    if seed.user != "root":
        login.update({"sudo": "ALL=(ALL) NOPASSWD:ALL", "shell": "/bin/bash"})
    if seed.password:
        login.update({"lock_passwd": False, "plain_text_passwd": seed.password})
    user_data = {"disable_root": False, "ssh_pwauth": bool(seed.password), "users": [login]}
    ethernets = {"mgmt": {"match": {"macaddress": seed.mgmt_mac}, "set-name": "mgmt",
                          "addresses": [seed.mgmt_address], "dhcp4": False}}
    for mac, name in seed.nics:
        ethernets[name] = {"match": {"macaddress": mac}, "set-name": name, "dhcp4": False}
    return {
        "meta-data": yaml.safe_dump({"instance-id": seed.instance_id,
                                     "local-hostname": seed.hostname}),
        "user-data": "#cloud-config\n" + yaml.safe_dump(user_data, sort_keys=False),
        "network-config": yaml.safe_dump({"version": 2, "ethernets": ethernets},
                                         sort_keys=False),
    }


def write_iso(executor: Executor, seed: Seed, directory: str) -> str:
    """The seed as ``directory``/seed.iso on the executor's machine (genisoimage)."""
    if not executor.which("genisoimage"):
        raise PrerequisiteError(f"{executor.name}: a VM from a disk image is configured "
                                "by a cloud-init seed, made with genisoimage (apt-get "
                                "install genisoimage)")
    for name, text in files(seed).items():
        executor.write_file(f"{directory}/{name}", text)
    iso = f"{directory}/seed.iso"
    executor.run(["genisoimage", "-quiet", "-output", iso, "-volid", "cidata", "-joliet",
                  "-rock", *[f"{directory}/{name}" for name in FILES]])
    return iso
