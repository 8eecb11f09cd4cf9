"""nsb on the hardware-like pod (tests/functional/hw_pod.py): the same NSB pod file a
lab's servers would have, two TCG VMs whose data NICs are PCI devices on their kernel
driver (virtio-pci) with ``dpdk_driver`` in the pod. nsb binds them, PROX generates on
the TG's PCI ports, testpmd forwards between the SUT's, and every NIC goes back to
virtio-pci afterwards, also after nsb was killed (the next run gives them back).

Under TCG a guest forwards a few thousand frames per second: the trials run at a
fixed 1,000 frames per second, and what is checked is what was counted where.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import NSB, requires_root
from tests.functional.hw_pod import hw_pod, node_taps, pod_nodes, ssh
from tests.functional.lab import leftovers
from tests.functional.prox_lab import PROX
from tests.functional.vm_lab import libvirtd

ROOT = Path(__file__).resolve().parents[2]
GEN_CONFIG = ROOT / "samples" / "libvirt" / "configs" / "gen_l2fwd-lab.cfg"
RATE_PPS = 1000

TASK = """\
schema: "nsb:task:0.1"
description: testpmd between two PCI ports of the SUT, PROX on the TG's PCI ports
context:
  type: Node
  file: {pod}
  links:
    - [tg:xe0, sut:xe0]
    - [sut:xe1, tg:xe1]
scenarios:
  - name: pci_io
    vnfs:
      - name: vnf0
        type: testpmd
        node: sut
        options: {{forward_mode: io, cores: 1, lcores: "0-1", memory_mb: 128}}
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
      duration: {duration}
    runner: {{type: Iteration, iterations: {iterations}}}
"""

DRIVER_OF = r'for p in "$@"; do basename "$(readlink /sys/bus/pci/devices/$p/driver)"; done'


# make test runs every check on uio_pci_generic; make test-slow runs them on vfio-pci
# too (a q35 guest behind a virtual IOMMU: a second pod, minutes more)
FIRST = pytest.mark.parametrize("pod", ["uio_pci_generic", pytest.param(
    "vfio-pci", marks=pytest.mark.slow)], indirect=True)


@pytest.fixture(scope="module")
def pod(request, tmp_path_factory):
    """One pod per driver for the module's tests."""
    requires_root()
    with libvirtd(), hw_pod(request.param, tmp_path_factory.mktemp("hwpod")) as pod_file:
        yield request.param, pod_file


def _task(tmp_path: Path, pod_file: Path, duration: float = 2, iterations: int = 1) -> Path:
    task = tmp_path / "task.yaml"
    task.write_text(TASK.format(pod=pod_file, prox=PROX, config=GEN_CONFIG, rate=RATE_PPS,
                                duration=duration, iterations=iterations))
    return task


def _nsb(results_conf, *args: str) -> list[str]:
    return NSB + ["--config-file", str(results_conf), *args]


def _drivers(node: dict) -> list[str]:
    pcis = [node["interfaces"][i]["vpci"] for i in ("xe0", "xe1")]
    script = " ".join(["sh", "-c", shlex.quote(DRIVER_OF), "sh", *pcis])
    return ssh(node, script).stdout.split()


def _ledger(node: dict) -> list[str]:
    return ssh(node, "ls /run/nsb/ledger 2>/dev/null || true").stdout.split()


def _results(results_dir: Path) -> dict:
    [path] = list(results_dir.glob("*/results.json"))
    return json.loads(path.read_text())


def _clean(nodes: dict) -> None:
    """Every NIC back on virtio-pci, nothing in the ledgers, no DPDK process or runtime
    dir and no hugepage nsb added in either guest."""
    for node in nodes.values():
        assert _drivers(node) == ["virtio-pci", "virtio-pci"], node["name"]
        assert _ledger(node) == [], node["name"]
        left = ssh(node, "pgrep -l 'dpdk-testpmd|prox' || true; ls /var/run/dpdk 2>/dev/null "
                         "| grep nsb- || true").stdout
        assert left.strip() == "", f"{node['name']}: {left}"


@FIRST
def test_nsb_binds_the_pod_s_nics_and_testpmd_forwards_what_prox_sends(pod, results_conf,
                                                                        tmp_path):
    driver, pod_file = pod
    nodes = pod_nodes(pod_file)
    pages = {n: ssh(node, "cat /proc/sys/vm/nr_hugepages").stdout.strip()
             for n, node in nodes.items()}
    task = _task(tmp_path, pod_file)
    dry = subprocess.run(_nsb(results_conf, "task", "start", "--dry-run", str(task)),
                         capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr
    assert "-a 0000:00:10.0 -a 0000:00:11.0" in dry.stdout  # testpmd and PROX alike
    assert "--no-pci" not in dry.stdout and "no-pci=" not in dry.stdout
    done = subprocess.run(_nsb(results_conf, "task", "start", str(task)), capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    doc = _results(tmp_path / "results")
    assert doc["task"]["status"] == "ok"
    [trial] = doc["trials"]
    tx, rx = trial["tx_packets"], trial["rx_packets"]
    # PROX sends on the TG's xe0 only; testpmd's port 0 (the SUT's first NIC in PCI
    # order, xe0) got what the TG sent, its port 1 sent it on to the TG's xe1
    counters = [k["kpis"] for k in doc["kpis"] if k["source"] == "vnf0"]
    got, sent = counters[-1]["port0_ipackets"], counters[-1]["port1_opackets"]
    print(f"{driver}: PROX sent {tx}, testpmd got {got:.0f} and sent {sent:.0f}, PROX got {rx}")
    assert tx >= RATE_PPS  # at least a second's worth
    assert 0 < rx <= sent <= got <= tx
    assert got >= 0.95 * tx and rx >= 0.95 * sent  # a few frames may be lost to TCG's taps
    assert trial["loss_pct"] == pytest.approx(100 * (tx - rx) / tx)
    _clean(nodes)
    assert {n: ssh(node, "cat /proc/sys/vm/nr_hugepages").stdout.strip()
            for n, node in nodes.items()} == pages
    [results] = list((tmp_path / "results").iterdir())
    assert leftovers(results.name) == []


@pytest.mark.slow  # nearly two minutes: the kill itself is checked in the lab in make test
@FIRST
def test_after_nsb_is_killed_the_next_run_gives_the_nics_back(pod, results_conf, tmp_path):
    driver, pod_file = pod
    nodes = pod_nodes(pod_file)
    task = _task(tmp_path, pod_file, duration=30)
    killed = subprocess.Popen(_nsb(results_conf, "task", "start", str(task)),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              start_new_session=True)
    deadline = time.monotonic() + 600
    while not any(f.endswith(".nic.0000:00:10.0") for f in _ledger(nodes["sut"])):
        assert killed.poll() is None, killed.stderr.read()
        assert time.monotonic() < deadline, "nsb never bound the SUT's NICs"
        time.sleep(2)
    time.sleep(5)  # the VNFs start on the bound NICs
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait(30)
    assert _drivers(nodes["sut"]) == [driver, driver]  # nobody gave them back
    assert len(_ledger(nodes["sut"])) >= 2
    (tmp_path / "again").mkdir()
    again = _task(tmp_path / "again", pod_file)
    done = subprocess.run(_nsb(results_conf, "task", "start", str(again)), capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    assert "gave back what killed runs left: NIC 0000:00:10.0 back on virtio-pci" \
        in done.stderr, done.stderr
    _clean(nodes)


@pytest.mark.slow  # the binding check is also a unit test; make test-slow on the pod
@FIRST
def test_a_nic_the_pod_does_not_let_nsb_bind_stops_the_run_in_one_line(pod, results_conf,
                                                                         tmp_path):
    _, pod_file = pod
    strict = tmp_path / "pod.yaml"
    text = pod_file.read_text()
    strict.write_text(re.sub(r"(?m)^\s*dpdk_driver:.*\n", "", text))  # no permission
    task = _task(tmp_path, strict)
    done = subprocess.run(_nsb(results_conf, "task", "start", str(task)), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 3 and "Traceback" not in done.stderr, done.stderr
    failed = [line for line in done.stderr.splitlines() if "FAILED" in line]
    assert len(failed) == 4, failed  # both NICs of both nodes
    assert all("is bound to virtio-pci" in line and "dpdk_driver" in line for line in failed)
    _clean(pod_nodes(pod_file))


@pytest.mark.slow  # a minute on the pod; per-hop loss against OVS's counters runs in the lab
@FIRST
def test_at_an_overload_each_link_s_loss_is_what_the_host_s_tap_dropped(pod, results_conf,
                                                                      tmp_path):
    """PROX asked for far more than the TCG guests take. An emulated virtio NIC has no
    imissed: when its guest does not refill the ring, QEMU stops reading the host's
    tap, whose queue overflows (tx_dropped there). So the frames a NIC had no room for
    die on the link into it, and each link's loss in the trial's budget must be what
    the host's tap of the receiving NIC counted dropped: an independent count."""
    _, pod_file = pod
    taps = {("sut", "xe0"): node_taps(pod_file, "sut")["xe0"],
            ("tg", "xe1"): node_taps(pod_file, "tg")["xe1"]}

    def dropped() -> dict:
        return {end: int(Path(f"/sys/class/net/{tap}/statistics/tx_dropped").read_text())
                for end, tap in taps.items()}

    task = tmp_path / "task.yaml"
    task.write_text(TASK.format(pod=pod_file, prox=PROX, config=GEN_CONFIG, rate=50_000,
                                duration=2, iterations=1))
    before = dropped()
    done = subprocess.run(_nsb(results_conf, "task", "start", str(task)), capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    at_taps = {end: count - before[end] for end, count in dropped().items()}
    [trial] = _results(tmp_path / "results")["trials"]
    path = trial["path"]
    print(f"PROX sent {trial['tx_packets']}, got {trial['rx_packets']}; the host's taps "
          f"dropped {at_taps}; path: {json.dumps(path)}")
    assert trial["lost_packets"] > 0 and sum(at_taps.values()) > 0
    [direction] = path["directions"]  # PROX sends on the TG's xe0 only
    assert direction["complete"] and direction["blind"] == []
    losses = {(loss["hop"], loss["kind"]): loss["frames"] for loss in direction["losses"]}
    assert losses.get(("link tg:xe0 -> sut:xe0", "link"), 0) == at_taps["sut", "xe0"]
    assert losses.get(("link sut:xe1 -> tg:xe1", "link"), 0) == at_taps["tg", "xe1"]
    assert sum(losses.values()) + direction["unaccounted"] == trial["lost_packets"]
    worst = max(direction["losses"], key=lambda loss: loss["frames"])
    assert path["worst"]["hop"] == worst["hop"]
    _clean(pod_nodes(pod_file))
