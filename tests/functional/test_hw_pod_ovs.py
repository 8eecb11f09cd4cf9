"""PHY-OVS-PHY on the hardware-like pod (tests/functional/hw_pod.py, ``ovs=True``):
OVS-DPDK in the SUT VM switches between the SUT's two PCI NICs, its ``dpdk`` ports,
which nsb binds to uio_pci_generic for the run; PROX generates on the TG VM's.

    tg:xe0 -> sut:xe0 [OVS-DPDK br0, port-to-port flows, PMD on CPU 1] sut:xe1 -> tg:xe1

The task is written here rather than taken from samples/vswitch/tc_ovs_phy2phy.yaml:
that sample is an RFC 2544 search whose generator options are TRex's and trafgen's
(flows, bidirectional); PROX takes a config file instead, and under TCG the trial
runs at a fixed 1,000 frames per second. The checks are what was counted where:
PROX's counts against OVS's own port counters, and nothing left in either guest.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import NSB, requires_root
from tests.functional.hw_pod import hw_pod, pod_nodes, ssh
from tests.functional.lab import leftovers
from tests.functional.prox_lab import PROX
from tests.functional.test_hw_pod_nsb import _drivers, _ledger
from tests.functional.vm_lab import libvirtd

ROOT = Path(__file__).resolve().parents[2]
GEN_CONFIG = ROOT / "samples" / "libvirt" / "configs" / "gen_l2fwd-lab.cfg"
RATE_PPS = 1000
# the ovs VNF adds these 128 pages to the guest's own 128: 512 MB of its 1 GB (OVS took
# about 450 MB of them, its shared mempool shrinking to what it finds)
SOCKET_MEM_MB = 256

TASK = """\
schema: "nsb:task:0.1"
description: PHY-OVS-PHY, OVS-DPDK on the SUT's PCI NICs, PROX on the TG's
context:
  type: Node
  file: {pod}
  links:
    - {{ends: [tg:xe0, tg:xe1], via: br0}}
scenarios:
  - name: ovs_phy2phy
    vnfs:
      - name: ovs0
        type: ovs
        node: sut
        options:
          bridge: br0
          flows: port
          dpdk_init: true
          dpdk_socket_mem: "{socket_mem}"
          dpdk_lcore_mask: "0x1"
          pmd_cpu_mask: "0x2"
    traffic_generator:
      name: tg0
      type: prox_tg
      node: tg
      options:
        prox_path: {prox}
        prox_config: {config}
        prox_args: {{"-e": "", "-t": ""}}
    traffic_profile:
      type: fixed
      packet_sizes: [64]
      rate_pps: {rate}
      duration: 2
    runner: {{type: Iteration, iterations: 1}}
"""


@pytest.fixture(scope="module")
def pod(tmp_path_factory):
    requires_root()
    started = time.monotonic()
    with libvirtd(), hw_pod("uio_pci_generic", tmp_path_factory.mktemp("hwpod"),
                            ovs=True) as pod_file:
        print(f"pod with OVS up in {time.monotonic() - started:.0f} s")
        yield pod_file


def _in_guest(node: dict, command: str) -> str:
    return ssh(node, command).stdout.strip()


def _clean(nodes: dict, pages: dict) -> None:
    """Every NIC back on virtio-pci, the ledgers empty, no OVS or PROX process, DPDK
    runtime dir or hugepage file of a run, and the hugepage pools as they were."""
    for name, node in nodes.items():
        assert _drivers(node) == ["virtio-pci", "virtio-pci"], name
        assert _ledger(node) == [], name
        left = _in_guest(node, "pgrep -l 'ovs|prox' || true; ls /var/run/dpdk /dev/hugepages "
                               "2>/dev/null | grep nsb- || true")
        assert left == "", f"{name}: {left}"
        assert _in_guest(node, "cat /proc/sys/vm/nr_hugepages") == pages[name]


@pytest.mark.slow  # a pod of its own, two minutes; make test-slow
def test_ovs_dpdk_on_the_sut_s_pci_nics_switches_what_prox_sends(pod, results_conf, tmp_path):
    nodes = pod_nodes(pod)
    assert nodes["sut"]["bridges"] == ["br0"]
    pages = {name: _in_guest(node, "cat /proc/sys/vm/nr_hugepages")
             for name, node in nodes.items()}
    task = tmp_path / "task.yaml"
    task.write_text(TASK.format(pod=pod, prox=PROX, config=GEN_CONFIG, rate=RATE_PPS,
                                socket_mem=SOCKET_MEM_MB))
    nsb = NSB + ["--config-file", str(results_conf), "task", "start"]
    dry = subprocess.run(nsb + ["--dry-run", str(task)], capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr
    for port, pci in (("xe0", "0000:00:10.0"), ("xe1", "0000:00:11.0")):
        assert f"set Interface {port} type=dpdk options:dpdk-devargs={pci}" in dry.stdout
    assert "-a 0000:00:10.0 -a 0000:00:11.0" in dry.stdout and "--no-pci" not in dry.stdout

    started = time.monotonic()
    done = subprocess.run(nsb + [str(task)], capture_output=True, text=True, timeout=900)
    run_s = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    [path] = list((tmp_path / "results").glob("*/results.json"))
    doc = json.loads(path.read_text())
    assert doc["task"]["status"] == "ok"
    [trial] = doc["trials"]
    tx, rx = trial["tx_packets"], trial["rx_packets"]
    ovs = [k["kpis"] for k in doc["kpis"] if k["source"] == "ovs0"][-1]
    got, sent = ovs["port0_ipackets"], ovs["port1_opackets"]  # the bridge's xe0, xe1
    cpus = [k["kpis"] for k in doc["kpis"] if k["source"] == "node:sut"][-1]
    print(f"run {run_s:.0f} s: PROX sent {tx}, OVS got {got:.0f} on xe0 and sent {sent:.0f} "
          f"on xe1 (dropped {ovs['packets_dropped']:.0f}, PMD received "
          f"{ovs['packets_received']:.0f}), PROX got {rx}; SUT CPU 1 at "
          f"{cpus['cpu1_util_pct']:.0f} %")
    assert tx >= RATE_PPS  # at least a second's worth
    assert 0 < rx <= sent <= got <= tx
    assert got >= 0.95 * tx and rx >= 0.95 * sent  # a few frames may be lost to TCG's taps
    assert ovs["port1_ipackets"] == 0 and ovs["port0_opackets"] == 0  # PROX sends on xe0 only
    assert ovs["packets_received"] == got  # what its PMD polled is what the port counted
    assert ovs["datapath_flows"] >= 1
    assert ovs["pmd_threads"] == 2  # the main thread and one PMD
    assert cpus["cpu1_util_pct"] >= 90  # the PMD polls CPU 1 (pmd_cpu_mask 0x2)
    assert trial["loss_pct"] == pytest.approx(100 * (tx - rx) / tx)
    _clean(nodes, pages)
    assert leftovers(path.parent.name) == []
