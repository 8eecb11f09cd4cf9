"""The libvirt context for real: a VM (TCG, nsb's guest image) booted by libvirt,
reached over SSH, running testpmd between two lab namespaces' links.

Under TCG the VM forwards a few thousand frames per second and holds frames for
milliseconds, so the checks are about what is measured and what is left, not
about rates.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from nsb import leftovers as nsb_leftovers
from tests.conftest import ROOT, requires_root
from tests.functional.answers import TOLERATED_LOSS_PCT
from tests.functional.lab import leftovers, libvirt_domains, results_of, start
from tests.functional.prox_lab import PROX
from tests.functional.vm_lab import libvirtd

SAMPLE = ROOT / "samples" / "libvirt" / "tc_testpmd_vm_rfc2544.yaml"


@pytest.fixture(scope="module", autouse=True)
def _libvirtd():
    requires_root()
    with libvirtd():
        yield


@pytest.mark.slow  # over a minute; the VM behind OVS-DPDK below forwards in make test
def test_a_vm_forwards_between_lab_namespaces_and_is_gone_afterwards(results_conf, tmp_path):
    """With its memory in the host's hugepages: nsb adds them to the pool for the VM
    and gives them back."""
    pages_before = _hugepages_total()
    # a VM under TCG forwards a few kpps: searching from 0.4 % (6 kpps) spares the test
    # the overloaded trials and their drains
    proc = start(results_conf, {"duration_s": 2, "hugepages": True, "ram_mb": 512,
                                "upper_bound": 0.4, "precision": 0.1}, task=SAMPLE)
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    assert doc["task"]["status"] == "ok"
    vm = doc["plan"]["context"]["contexts"][1]["vms"]["vnf0"]
    assert vm["vcpus"] == 2 and vm["domain"] == f"nsb-{task_id}-vnf0"
    assert vm["hugepages"] is True and vm["ram_mb"] == 512
    assert doc["plan"]["context"]["nodes"]["vnf0"]["ssh"]["user"] == "root"
    [result] = doc["results"]
    assert result["throughput_pps"] > 0, result
    for trial in doc["trials"]:
        assert 0 <= trial["rx_packets"] <= trial["tx_packets"], trial
    best = [t for t in doc["trials"] if t["tx_rate_pps"] == pytest.approx(
        result["throughput_pps"]) and t["verdict"] in ("pass", "generator_limited")]
    assert best and best[0]["loss_pct"] <= TOLERATED_LOSS_PCT
    lat = result["latency"]
    assert lat["min_us"] <= lat["p50_us"] <= lat["p99_us"] <= lat["max_us"]
    # the VM is a node like any other: its platform facts come over SSH
    assert doc["platform"]["vnf0"]["kernel"].endswith("cloud-amd64")
    assert doc["platform"]["vnf0"]["versions"]["testpmd0: DPDK"].startswith("DPDK 22.11")
    logs = tmp_path / "results" / task_id / "logs"
    assert "nsb-guest-ready" in (logs / "vnf0-console.log").read_text()
    assert "io packet forwarding" in (logs / "testpmd0-testpmd.log").read_text()
    assert leftovers(task_id) == []
    assert not [d for d in libvirt_domains() if task_id in d]
    assert _hugepages_total() == pages_before


def test_a_killed_run_s_vm_is_removed_by_the_next_run(results_conf, tmp_path):
    """SIGKILL leaves a defined, running domain, its bridges and files, and the
    hugepages added for its memory; what the next `task start` runs first
    (leftovers.clean_killed_runs) removes them and gives the pages back."""
    pages_before = _hugepages_total()
    proc = start(results_conf, {"duration_s": 2, "hugepages": True, "ram_mb": 512},
                 task=SAMPLE)
    deadline = time.monotonic() + 300
    while not [d for d in libvirt_domains() if d.startswith("nsb-")]:
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.5)
    time.sleep(3)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    [domain] = [d for d in libvirt_domains() if d.startswith("nsb-")]
    task_id = domain.removeprefix("nsb-").rsplit("-", 1)[0]
    assert any(item.startswith("link") for item in leftovers(task_id))  # the fault is real
    assert _hugepages_total() == pages_before + 256  # the fault is real
    [removed] = [r for r in nsb_leftovers.clean_killed_runs() if r.task_id == task_id]
    assert f"domain {domain}" in removed.items
    assert removed.hugepages == 256 and _hugepages_total() == pages_before
    assert domain not in libvirt_domains()
    assert leftovers(task_id) == []
    assert not Path(f"/tmp/nsb-{task_id}").exists()


OVS_SAMPLE = ROOT / "samples" / "libvirt" / "tc_testpmd_vm_ovs_dpdk_pvp.yaml"


def _hugepages_total() -> int:
    return int(Path("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages").read_text())


def test_a_vm_behind_ovs_dpdk_forwards_on_vhost_user_and_everything_is_given_back(
        results_conf, tmp_path):
    """The staged start for real: OVS-DPDK runs first with dpdkvhostuserclient ports,
    then QEMU (which serves the sockets and starts only once the switch connected)
    boots the VM, then testpmd in it; frames cross both vhost-user sockets."""
    pages_before = _hugepages_total()
    proc = start(results_conf, {"duration_s": 1, "precision": 0.1, "upper_bound": 0.4},
                 task=OVS_SAMPLE)
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    vm = doc["plan"]["context"]["contexts"][1]["vms"]["vnf0"]
    assert vm["nics"]["xe0"].startswith(f"vhost-user /tmp/nsb-{task_id}/vhost/vnf0-xe0.sock")
    [result] = doc["results"]
    assert result["throughput_pps"] > 0 and result["switching_operations"] == 2
    for trial in doc["trials"]:
        assert 0 <= trial["rx_packets"] <= trial["tx_packets"], trial
    lat = result["latency"]
    assert lat["min_us"] <= lat["p50_us"] <= lat["p99_us"] <= lat["max_us"]
    # every frame the generator got back went through OVS-DPDK's PMD twice
    ovs = [k["kpis"] for k in doc["kpis"] if k["source"] == "ovs0"][-1]
    received = sum(t["rx_packets"] for t in doc["trials"])
    assert ovs["packets_received"] >= 2 * received > 0
    assert ovs["cycles_per_packet"] > 0
    assert doc["platform"]["vnf0"]["versions"]["testpmd0: DPDK"].startswith("DPDK 22.11")
    logs = tmp_path / "results" / task_id / "logs"
    assert "io packet forwarding" in (logs / "testpmd0-testpmd.log").read_text()
    ovs_log = (logs / "ovs0-ovs.log").read_text()
    assert "vhost-user client: socket created" in ovs_log or "VHOST_CONFIG" in ovs_log
    assert _hugepages_total() == pages_before
    assert leftovers(task_id) == []  # sockets, taps, veths, run dirs, processes
    assert not [d for d in libvirt_domains() if task_id in d]


def test_a_vm_whose_switch_never_comes_stops_the_run_in_one_line(results_conf, tmp_path):
    """Without the switch VNF QEMU would wait for ever on its vhost-user sockets: the
    start is given switch_timeout_s, then the domain is destroyed and the run stops."""
    task = tmp_path / "no_switch.yaml"
    text = OVS_SAMPLE.read_text()
    ovs_vnf = text[text.index("      - name: ovs0"):text.index("      - name: testpmd0")]
    task.write_text(text.replace(ovs_vnf, "").replace(
        "  - type: libvirt\n", "  - type: libvirt\n    switch_timeout_s: 5\n"))
    proc = start(results_conf, {"duration_s": 1}, task=task)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 3, err
    errors = [line for line in err.splitlines() if line.startswith("nsb: error:")]
    assert len(errors) == 1 and "Traceback" not in err
    assert "VM vnf0 did not start within switch_timeout_s (5 s)" in errors[0]
    assert "vhost-user socket(s) of xe0, xe1" in errors[0]
    task_id, doc = results_of(tmp_path / "results")
    assert doc["task"]["status"] == "error"
    assert leftovers(task_id) == []
    assert not [d for d in libvirt_domains() if task_id in d]


L2FWD_SAMPLE = ROOT / "samples" / "libvirt" / "tc_prox_vm_ovs_dpdk_l2fwd.yaml"


@pytest.mark.slow  # a TCG VM with PROX; make test-slow
def test_nsb_s_ovs_dpdk_l2fwd_runs_in_the_lab_with_real_prox_in_the_vm(results_conf, tmp_path):
    """NSB's tc_prox_ovs-dpdk_l2fwd-2 as the lab runs it: the real PROX generator in a
    namespace, OVS-DPDK, and the real PROX l2fwd in the VM (put into nsb's guest with
    its libraries by guest_binaries)."""
    proc = start(results_conf, {"prox_path": str(PROX), "duration_s": 1, "precision": 0.1},
                 task=L2FWD_SAMPLE)
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    assert "ERROR" not in err  # a refused SSH channel while PROX starts is not an error
    task_id, doc = results_of(tmp_path / "results")
    [result] = doc["results"]
    assert result["throughput_pps"] > 0
    # the VM (virtio without MSI under TCG) may hold frames of an overloaded trial until
    # the next trial's traffic, and PROX counts any frame with its signature: a trial can
    # receive more than it sent, but never more than the earlier trials did not get back
    owed = 0
    for trial in doc["trials"]:
        extra = trial["rx_packets"] - trial["tx_packets"]
        assert trial["rx_packets"] >= 0 and extra <= owed, (trial, owed)
        assert trial["extra"].get("frames_of_earlier_trials", 0) == max(0, extra)
        owed -= extra
    ovs = [k["kpis"] for k in doc["kpis"] if k["source"] == "ovs0"][-1]
    assert ovs["packets_received"] >= 2 * sum(t["rx_packets"] for t in doc["trials"]) > 0
    # what came back crossed PROX in the VM: its own counters say so
    prox = [k["kpis"] for k in doc["kpis"] if k["source"] == "vnf0"][-1]
    assert prox["packets_fwd"] >= sum(t["rx_packets"] for t in doc["trials"])
    assert doc["platform"]["vnf0"]["versions"]["vnf0: PROX"] == "22.12"
    logs = tmp_path / "results" / task_id / "logs"
    vm_log = (logs / "vnf0-prox.log").read_text()
    assert "net_af_packet0,iface=xe0" in vm_log and "l2fwd" in vm_log
    assert leftovers(task_id) == []
    assert not [d for d in libvirt_domains() if task_id in d]
