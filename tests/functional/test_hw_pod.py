"""The hardware-like pod (hw_pod) for real: two TCG VMs whose data NICs, bound by hand
to a DPDK driver (driver_override), carry frames from testpmd on the generator to
testpmd forwarding on the SUT, then go back to virtio-pci when unbound.

Under TCG a guest's testpmd moves some tens of thousands of frames per second: the
checks are that frames crossed, and where they came from, not rates.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import threading
import time

import pytest

from nsb import leftovers as nsb_leftovers
from tests.conftest import requires_root
from tests.functional.hw_pod import DRIVERS, hw_pod, pod_nodes, ssh
from tests.functional.lab import leftovers, libvirt_domains
from tests.functional.prox_lab import PROX
from tests.functional.test_libvirt_vm import _hugepages_total
from tests.functional.vm_lab import libvirtd

BIND = r'''set -e; drv=$1; shift
for p in "$@"; do d=/sys/bus/pci/devices/$p
  echo "$p" > "$d/driver/unbind"
  echo "$drv" > "$d/driver_override"
  echo "$p" > "/sys/bus/pci/drivers/$drv/bind"
done'''
UNBIND = r'''set -e; for p in "$@"; do d=/sys/bus/pci/devices/$p
  echo "$p" > "$d/driver/unbind"
  echo > "$d/driver_override"
  echo "$p" > /sys/bus/pci/drivers_probe
done'''
DRIVER_OF = r'''for p in "$@"; do basename "$(readlink /sys/bus/pci/devices/$p/driver)"; done'''
MAC_OF = r'''for p in "$@"; do cat /sys/bus/pci/devices/$p/virtio*/net/*/address; done'''
IOMMU_GROUP_OF = r'''for p in "$@"; do ls /sys/bus/pci/devices/$p/iommu_group/devices; done'''
STOP_FILE = "/tmp/hwpod-stop"


@pytest.fixture(scope="module", autouse=True)
def _libvirtd():
    requires_root()
    with libvirtd():
        yield


def _script(node: dict, script: str, *args: str) -> str:
    return ssh(node, " ".join(["sh", "-c", shlex.quote(script), "sh", *args])).stdout


def _testpmd(pcis: list[str], mode: str) -> str:
    devices = " ".join(f"-a {pci}" for pci in pcis)
    return (f"dpdk-testpmd -l 0-1 --in-memory -m 128 {devices} -- -i --auto-start "
            f"--forward-mode={mode} --total-num-mbufs=8192")


def _port_stats(output: str) -> dict[int, tuple[int, int]]:
    """Per port (RX-packets, TX-packets) of testpmd's forward statistics at ``stop``."""
    found = re.findall(r"Forward statistics for port (\d+)\s+-+\s+RX-packets:\s+(\d+).*?\n"
                       r"\s+TX-packets:\s+(\d+)", output)
    return {int(port): (int(rx), int(tx)) for port, rx, tx in found}


class _Forwarding:
    """testpmd in io mode on the SUT until STOP_FILE appears; its output read as it
    comes (a terminal, so testpmd writes it line by line)."""

    def __init__(self, sut: dict, pcis: list[str]):
        ssh(sut, f"rm -f {STOP_FILE}")
        command = (f"(while [ ! -e {STOP_FILE} ]; do sleep 0.5; done; echo stop; sleep 1; "
                   f"echo quit) | timeout 300 {_testpmd(pcis, 'io')}")
        self.process = subprocess.Popen(
            ["ssh", "-tt", "-i", sut["key_filename"], "-o", "StrictHostKeyChecking=no",
             "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
             f"root@{sut['ip']}", command],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, errors="replace")
        self.output = ""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.output += line

    def wait_forwarding(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while "packet forwarding - ports=2" not in self.output:
            assert self.process.poll() is None, self.output
            assert time.monotonic() < deadline, f"SUT testpmd not forwarding:\n{self.output}"
            time.sleep(0.5)

    def stop(self, sut: dict) -> str:
        ssh(sut, f"touch {STOP_FILE}")
        self.process.wait(timeout=60)
        self._reader.join(10)
        ssh(sut, f"rm -f {STOP_FILE}")
        return self.output


# testpmd alone on the pod's NICs; nsb on them runs in test_hw_pod_nsb.py in make test
@pytest.mark.parametrize("driver", [pytest.param(d, marks=[pytest.mark.slow])
                                    for d in DRIVERS])
def test_frames_cross_the_pod_s_nics_on_their_dpdk_driver_then_the_nics_go_back(driver,
                                                                                tmp_path):
    pages_before = _hugepages_total()
    pod = hw_pod(driver, tmp_path)
    started = time.monotonic()
    with pod as pod_file:
        booted_s = time.monotonic() - started
        nodes = pod_nodes(pod_file)
        tg, sut = nodes["tg"], nodes["sut"]
        assert (tg["role"], sut["role"]) == ("TrafficGen", "VNF")
        pcis = {}
        for node in (tg, sut):
            xe0, xe1 = node["interfaces"]["xe0"], node["interfaces"]["xe1"]
            assert (xe0["vpci"], xe1["vpci"]) == ("0000:00:10.0", "0000:00:11.0")
            assert (xe0["driver"], xe0["dpdk_driver"]) == ("virtio-pci", driver)
            assert (xe0["dpdk_port_num"], xe1["dpdk_port_num"]) == (0, 1)
            pcis[node["name"]] = [xe0["vpci"], xe1["vpci"]]
            assert _script(node, DRIVER_OF, *pcis[node["name"]]).split() == ["virtio-pci"] * 2
        assert tg["interfaces"]["xe0"]["peer"] == "sut:xe0"
        ssh(tg, "command -v dpdk-testpmd")
        usage = ssh(tg, f"{PROX} -h", check=False)  # it runs: its libraries came along
        assert "Usage:" in usage.stdout + usage.stderr, usage
        if driver == "vfio-pci":  # each NIC in an IOMMU group of its own
            groups = _script(sut, IOMMU_GROUP_OF, *pcis["sut"])
            assert groups.split() == pcis["sut"], groups

        for node in (tg, sut):
            _script(node, BIND, driver, *pcis[node["name"]])
            assert _script(node, DRIVER_OF, *pcis[node["name"]]).split() == [driver] * 2
        forwarding = _Forwarding(sut, pcis["sut"])
        forwarding.wait_forwarding(120)
        sending = (f"(sleep 8; echo stop; sleep 1; echo quit) | timeout 120 "
                   f"{_testpmd(pcis['tg'], 'txonly')}")
        sent = _port_stats(ssh(tg, sending, timeout=180).stdout)
        time.sleep(1)
        forwarded = _port_stats(forwarding.stop(sut))
        print(f"{driver}: pod up in {booted_s:.0f} s; TG sent {sent}; SUT (rx, tx) "
              f"{forwarded}")
        assert sent[0][1] > 0 and sent[1][1] > 0, sent
        for port in (0, 1):  # what the SUT got came from the TG; what it sent, it got
            other = 1 - port
            assert 0 < forwarded[port][0] <= sent[port][1], (sent, forwarded)
            assert 0 < forwarded[other][1] <= forwarded[port][0], forwarded

        for node in (tg, sut):
            _script(node, UNBIND, *pcis[node["name"]])
            assert _script(node, DRIVER_OF, *pcis[node["name"]]).split() == ["virtio-pci"] * 2
            macs = _script(node, MAC_OF, *pcis[node["name"]]).split()
            assert macs == [node["interfaces"][i]["local_mac"] for i in ("xe0", "xe1")]
    assert not [d for d in libvirt_domains() if pod.task_id in d]
    assert leftovers(pod.task_id) == []
    assert not (nsb_leftovers.STATE_DIR / f"{pod.task_id}.json").exists()
    assert not pod_file.exists() and _hugepages_total() == pages_before
    assert "nsb-guest-ready" in (tmp_path / "logs" / "sut-console.log").read_text()
