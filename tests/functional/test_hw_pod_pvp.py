"""PVP through OVS-DPDK on the hardware-like pod, as NSB deploys it on a server: the
SUT VM (tests/functional/hw_pod.py, ``ovs=True, vm_host=True``) is the
StandaloneOvsDpdk context's libvirt host. OVS-DPDK there takes the SUT's two PCI NICs
as ``dpdk`` ports (dpdk-devargs, bound to uio_pci_generic beforehand, as NSB asks of a
host) and a VM it boots inside the SUT through libvirt over SSH (nested TCG) as
vhost-user ports; testpmd in that VM forwards on DPDK's virtio PMD, its NICs bound to
uio_pci_generic in the VM. PROX generates on the TG VM's PCI NICs.

    tg:xe0 -> sut 0000:00:10.0 [OVS-DPDK br0] vhost-user -> vnf_0 [testpmd io]
    vnf_0 -> vhost-user [br0] sut 0000:00:11.0 -> tg:xe1

Under nested TCG the inner VM boots in minutes and forwards a few hundred frames per
second: the trial runs at 100 frames per second, and the checks are what was counted
where (PROX's counts, OVS's PMD, testpmd's own port counters through DPDK telemetry)
and that the SUT is as it was afterwards (measured: PROX sent 504, testpmd got and sent
504, OVS's PMD received 1008, PROX got 504). The test is marked slow (about ten minutes
on an idle machine, several times that on a loaded one): make test-slow runs it.
"""

from __future__ import annotations

import ipaddress
import json
import subprocess
import time

import pytest
import yaml

from tests.conftest import NSB, requires_root
from tests.functional.hw_pod import hw_pod, pod_nodes, ssh, vm_host_ready
from tests.functional.lab import leftovers
from tests.functional.prox_lab import PROX
from tests.functional.test_hw_pod_ovs import GEN_CONFIG
from tests.functional.vm_lab import libvirtd

RATE_PPS = 100
NICS = ("0000:00:10.0", "0000:00:11.0")  # the SUT's xe0 and xe1

TASK = """\
schema: "nsb:task:0.1"
description: PVP on the pod, OVS-DPDK and a VM on the SUT (StandaloneOvsDpdk)
contexts:
  - type: Node
    file: {tg_pod}
  - type: StandaloneOvsDpdk
    file: {host_file}
    vm_deploy: true
    domain_type: qemu
    nic_driver: uio_pci_generic
    boot_timeout_s: 1200
    ovs_properties:
      pmd_threads: 1
      pmd_cpu_mask: "0x2"
      pmd_maxsleep_us: 10000  # the SUT's CPUs are shared with the VM it boots
      ram: {{socket_0: 256}}
      queues: 1
    flavor:
      ram: 512
      extra_specs: {{"hw:cpu_sockets": 1, "hw:cpu_cores": 2, "hw:cpu_threads": 1}}
    servers:
      vnf_0:
        network_ports:
          mgmt: {{cidr: "{vm_mgmt}"}}
          xe0: [uplink_0]
          xe1: [downlink_0]
    networks:
      uplink_0: {{port_num: 0, phy_port: "{nic0}", vpci: "0000:00:07.0",
                 cidr: {cidr0}, gateway_ip: {gateway0}}}
      downlink_0: {{port_num: 1, phy_port: "{nic1}", vpci: "0000:00:08.0",
                   cidr: {cidr1}, gateway_ip: {gateway1}}}
    links:
      - [tg:xe0, vnf_0:xe0]
      - [vnf_0:xe1, tg:xe1]
scenarios:
  - name: pvp_on_the_pod
    vnfs:
      - name: testpmd0
        type: testpmd
        node: vnf_0
        options: {{forward_mode: io, cores: 1, lcores: "0,1"}}
    traffic_generator:
      name: tg0
      type: prox_tg
      node: tg
      options:
        prox_path: {prox}
        prox_config: {config}
        prox_args: {{"-e": "", "-t": ""}}
        drain_quiet_s: 5
    traffic_profile:
      type: fixed
      packet_sizes: [64]
      rate_pps: {rate}
      duration: 5
    runner: {{type: Iteration, iterations: 1}}
"""

DRIVER_OF = 'for p in {}; do basename "$(readlink /sys/bus/pci/devices/$p/driver)"; done'


def _bind(node: dict, driver: str) -> None:
    """The SUT's NICs onto ``driver``, as a host is prepared for NSB's OVS-DPDK."""
    for pci in NICS:
        ssh(node, f"d=/sys/bus/pci/devices/{pci}; [ -e $d/driver ] && echo {pci} > "
                  f"$d/driver/unbind; echo {driver} > $d/driver_override; "
                  f"echo {pci} > /sys/bus/pci/drivers_probe; echo > $d/driver_override")


def _vm_subnets(tg: dict) -> dict[str, str]:
    """The VM's NICs in the subnets of the TG ports they are cabled to, the TG's
    addresses their gateways."""
    values = {}
    for number, name in enumerate(("xe0", "xe1")):
        iface = tg["interfaces"][name]
        prefix = ipaddress.ip_network(f"0.0.0.0/{iface['netmask']}").prefixlen
        values[f"cidr{number}"] = f"{ipaddress.ip_address(iface['local_ip']) + 9}/{prefix}"
        values[f"gateway{number}"] = iface["local_ip"]
    return values


def _drivers(node: dict) -> list[str]:
    return ssh(node, DRIVER_OF.format(" ".join(NICS))).stdout.split()


@pytest.fixture(scope="module")
def pod(tmp_path_factory):
    requires_root()
    started = time.monotonic()
    with libvirtd(), hw_pod("uio_pci_generic", tmp_path_factory.mktemp("hwpod"), ovs=True,
                            vm_host=True, ram_mb=3072) as pod_file:
        sut = pod_nodes(pod_file)["sut"]
        vm_host_ready(sut)
        _bind(sut, "uio_pci_generic")
        print(f"pod with a VM host up in {time.monotonic() - started:.0f} s")
        try:
            yield pod_file
        finally:
            _bind(sut, "virtio-pci")


@pytest.mark.slow
def test_pvp_on_the_pod_ovs_dpdk_on_pci_nics_testpmd_on_virtio_in_a_vm(pod, results_conf,
                                                                         tmp_path):
    nodes = pod_nodes(pod)
    sut = nodes["sut"]
    tg_pod = tmp_path / "tg-pod.yaml"
    tg = {**nodes["tg"], "interfaces": {name: {k: v for k, v in iface.items() if k != "peer"}
                                        for name, iface in nodes["tg"]["interfaces"].items()}}
    tg_pod.write_text(yaml.safe_dump({"nodes": [tg]}, sort_keys=False))
    host_file = tmp_path / "host.yaml"
    host_file.write_text(yaml.safe_dump({"nodes": [{
        "name": "sut", "role": "OvsDpdk", "ip": sut["ip"], "user": "root",
        "key_filename": sut["key_filename"]}]}, sort_keys=False))
    vm_mgmt = sut["ip"].rsplit(".", 1)[0] + ".200/24"  # on br-int, the pod's subnet
    task = tmp_path / "task.yaml"
    task.write_text(TASK.format(tg_pod=tg_pod, host_file=host_file, vm_mgmt=vm_mgmt,
                                nic0=NICS[0], nic1=NICS[1], prox=PROX, config=GEN_CONFIG,
                                rate=RATE_PPS, **_vm_subnets(tg)))
    pages = ssh(sut, "cat /proc/sys/vm/nr_hugepages").stdout.strip()
    # testpmd's EAL in a VM inside a VM under TCG takes minutes to come up
    results_conf.write_text(results_conf.read_text() + "vnf_start_timeout = 1200\n")
    nsb = NSB + ["--config-file", str(results_conf), "task", "start"]
    dry = subprocess.run(nsb + ["--dry-run", str(task)], capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr
    assert "different subnets" not in dry.stderr
    for pci in NICS:  # OVS-DPDK's ports are the SUT's PCI NICs, and only they
        assert f"dpdk-devargs: '{pci}'" in dry.stdout
    assert f"-a {NICS[0]} -a {NICS[1]}" in dry.stdout and "--no-pci" not in dry.stdout

    started = time.monotonic()
    done = subprocess.run(nsb + [str(task)], capture_output=True, text=True, timeout=2400)
    run_s = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-4000:]
    [path] = list((tmp_path / "results").glob("*/results.json"))
    doc = json.loads(path.read_text())
    assert doc["task"]["status"] == "ok"
    [trial] = doc["trials"]
    tx, rx = trial["tx_packets"], trial["rx_packets"]
    testpmd = [k["kpis"] for k in doc["kpis"] if k["source"] == "testpmd0"][-1]
    got, sent = testpmd["port0_ipackets"], testpmd["port1_opackets"]
    ovs = [k["kpis"] for k in doc["kpis"] if k["source"] == "ovs_dpdk"][-1]
    print(f"run {run_s:.0f} s: PROX sent {tx}, testpmd in the VM got {got:.0f} and sent "
          f"{sent:.0f}, OVS's PMD received {ovs['packets_received']:.0f}, PROX got {rx}")
    assert tx >= RATE_PPS
    assert 0 < rx <= sent <= got <= tx
    # every frame crosses OVS twice: from the PCI NIC to the VM, and back to the other
    assert ovs["packets_received"] >= got + sent
    console = (path.parent / "logs" / "vm_0-console.log").read_text()
    assert "nsb-guest-ready" in console
    # afterwards: no domain, no OVS, the hugepages and the NICs as they were
    assert ssh(sut, "pgrep -l 'qemu|ovs-vswitchd|ovsdb' || true").stdout.strip() == ""
    assert ssh(sut, "ls /var/run/libvirt/qemu/*.xml 2>/dev/null || true").stdout.strip() == ""
    assert ssh(sut, "cat /proc/sys/vm/nr_hugepages").stdout.strip() == pages
    assert _drivers(sut) == ["uio_pci_generic", "uio_pci_generic"]
    assert leftovers(path.parent.name) == []
