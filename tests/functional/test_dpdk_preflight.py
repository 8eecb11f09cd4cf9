"""A pod whose DPDK NICs cannot be used stops before anything starts, one line per
mistake. The node is a real sshd on this machine (tests/functional/sshd_node.py);
its PCI devices are this machine's: a virtio device on its kernel driver stands for
a NIC the pod does not let nsb rebind (nsb only reads it), and an address no device
has for a vpci typo."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.conftest import NSB, requires_root
from tests.functional.sshd_node import sshd_node

TASK = """\
schema: "nsb:task:0.1"
context:
  type: baremetal
  file: pod.yaml
  links:
    - [tg:xe0, sut:xe0]
    - [sut:xe1, tg:xe1]
scenarios:
  - vnfs:
      - name: vnf0
        type: testpmd
        node: sut
        options: {lcores: "0-9", memory_mb: 4000000}
    traffic_generator: {name: tg0, type: trafgen, node: tg}
    traffic_profile: {type: binsearch, packet_sizes: [64], duration: 1}
"""


def _kernel_bound_device() -> tuple[str, str]:
    """A PCI device of this machine on a kernel driver that is not its network path."""
    for device in sorted(Path("/sys/bus/pci/devices").iterdir()):
        driver = device / "driver"
        if driver.exists() and not (device / "net").exists() and \
                (device / "class").read_text().strip() != "0x060000":  # not a host bridge
            return device.name, os.path.basename(os.readlink(driver))
    pytest.skip("this machine has no PCI device on a kernel driver")


def test_unusable_dpdk_nics_lcores_and_memory_are_one_line_each(results_conf, tmp_path):
    requires_root()
    pci, driver = _kernel_bound_device()
    with sshd_node() as node:
        access = f"ip: {node.host}, user: root, key_filename: {node.key_filename}"
        (tmp_path / "pod.yaml").write_text(textwrap.dedent(f"""\
            nodes:
              - {{name: tg, role: TrafficGen, {access},
                 interfaces: {{xe0: {{local_mac: "02:00:00:00:01:00"}},
                              xe1: {{local_mac: "02:00:00:00:01:01"}}}}}}
              - {{name: sut, role: vnf, {access},
                 interfaces: {{xe0: {{vpci: "{pci}", driver: {driver},
                                     local_mac: "02:00:00:00:02:00"}},
                              xe1: {{vpci: "0000:7f:1f.7", driver: i40e,
                                     local_mac: "02:00:00:00:02:01"}}}}}}
            """))
        task = tmp_path / "task.yaml"
        task.write_text(TASK)
        conf = ["--config-file", str(results_conf)]
        dry = subprocess.run(NSB + conf + ["task", "start", "--dry-run", str(task)],
                             capture_output=True, text=True)
        assert dry.returncode == 0, dry.stderr
        ports = sorted([pci, "0000:7f:1f.7"])
        assert f"-a {ports[0]} -a {ports[1]}" in dry.stdout and "--no-pci" not in dry.stdout
        done = subprocess.run(NSB + conf + ["task", "start", str(task)], capture_output=True,
                              text=True, timeout=300)
        left = node.ns("pgrep", "-f", "dpdk-testpmd").stdout
    assert done.returncode == 3 and "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if "FAILED" in line]
    assert any(f"sut: NIC xe0: FAILED: xe0 ({pci}) is bound to {driver}" in line
               and "dpdk_driver: vfio-pci" in line for line in lines), lines
    assert any("sut: NIC xe1: FAILED: xe1 (0000:7f:1f.7): no PCI device" in line
               for line in lines), lines
    assert any("vnf0: FAILED: lcores 0-9: the node has no CPU" in line for line in lines), lines
    assert any("vnf0: FAILED: needs 2000016 hugepages" in line for line in lines), lines
    assert len(lines) == 4, lines
    assert os.path.basename(os.readlink(f"/sys/bus/pci/devices/{pci}/driver")) == driver
    assert left == ""  # nothing started
