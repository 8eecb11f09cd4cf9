"""NSB's StandaloneSriov and StandaloneOvsDpdk on a host that lacks what they need:
the host is a real sshd (tests/functional/sshd_node.py) on this machine, which
has no SR-IOV NIC, no IOMMU groups and no such PCI devices. A real start stops
before any VM with one line naming what is missing."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

from nsb.vnfs.hugepages import hugetlbfs_mounted
from tests.conftest import NSB, requires_root
from tests.functional.sshd_node import sshd_node

TASK = """\
schema: "nsb:task:0.1"
contexts:
  - type: netns
    nodes:
      tg: {interfaces: {xe0: {}, xe1: {}}}
  - type: KIND
    file: host.yaml
    flavor: {images: /var/lib/libvirt/images/nsb.qcow2, ram: 2048}
    servers:
      vnf_0:
        network_ports:
          mgmt: {cidr: 10.99.0.5/24}
          xe0: [uplink_0]
          xe1: [downlink_0]
    networks:
      uplink_0: {phy_port: "0000:af:00.0", vpci: "0000:00:07.0", cidr: 152.16.100.10/24}
      downlink_0: {phy_port: "0000:af:00.1", vpci: "0000:00:08.0", cidr: 152.16.40.10/24}
    links:
      - [tg:xe0, vnf_0:xe0]
      - [vnf_0:xe1, tg:xe1]
scenarios:
  - vnfs: [{name: vnf0, type: testpmd, node: vnf_0}]
    traffic_generator: {name: tg0, type: trafgen, node: tg}
    traffic_profile: {type: binsearch, packet_sizes: [64], duration: 1}
"""


@pytest.mark.parametrize("kind, role, guest_pci, missing", [
    # NSB's guest slots: SR-IOV counts the NIC's place among the ports (mgmt first),
    # OVS-DPDK the network's port_num
    ("StandaloneSriov", "Sriov", "0000:00:0b.0", ["network uplink_0: no PCI device "
                                                  "0000:af:00.0", "no IOMMU groups"]),
    ("StandaloneOvsDpdk", "OvsDpdk", "0000:00:0a.0", ["network downlink_0: no PCI device "
                                                      "0000:af:00.1",
                                                      "no hugetlbfs mounted"]),
])
def test_a_host_without_what_the_context_needs_stops_in_one_line(results_conf, tmp_path, kind,
                                                                  role, guest_pci, missing):
    requires_root()
    with sshd_node() as host:
        (tmp_path / "host.yaml").write_text(textwrap.dedent(f"""\
            nodes:
              - {{name: libvirt_host, role: {role}, ip: {host.host}, user: root,
                 key_filename: {host.key_filename}}}
            """))
        task = tmp_path / "task.yaml"
        task.write_text(TASK.replace("KIND", kind))
        dry = subprocess.run(NSB + ["--config-file", str(results_conf), "task", "start",
                                    "--dry-run", str(task)], capture_output=True, text=True)
        assert dry.returncode == 0, dry.stderr
        assert "vm_0:" in dry.stdout and f"guest_pci: {guest_pci}" in dry.stdout
        done = subprocess.run(NSB + ["--config-file", str(results_conf), "task", "start",
                                     str(task)], capture_output=True, text=True, timeout=300)
    errors = [line for line in done.stderr.splitlines() if line.startswith("nsb: error")]
    assert done.returncode == 3 and len(errors) == 1 and "Traceback" not in done.stderr, \
        done.stderr
    assert f"{kind} host libvirt_host ({host.host}): " in errors[0]
    for phrase in missing:
        if "hugetlbfs" in phrase and hugetlbfs_mounted() or \
                "IOMMU" in phrase and any(Path("/sys/kernel/iommu_groups").iterdir()):
            continue  # this machine has them: not missing here
        assert phrase in errors[0], errors[0]

