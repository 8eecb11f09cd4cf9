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
from tests.functional.lab import leftovers, libvirt_domains, results_of, start
from tests.functional.test_sample_rfc2544 import TOLERATED_LOSS_PCT
from tests.functional.vm_lab import libvirtd

SAMPLE = ROOT / "samples" / "libvirt" / "tc_testpmd_vm_rfc2544.yaml"


@pytest.fixture(scope="module", autouse=True)
def _libvirtd():
    requires_root()
    with libvirtd():
        yield


def test_a_vm_forwards_between_lab_namespaces_and_is_gone_afterwards(results_conf, tmp_path):
    proc = start(results_conf, {"duration_s": 2}, task=SAMPLE)
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    assert doc["task"]["status"] == "ok"
    vm = doc["plan"]["context"]["contexts"][1]["vms"]["vnf0"]
    assert vm["vcpus"] == 2 and vm["domain"] == f"nsb-{task_id}-vnf0"
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


def test_a_killed_run_s_vm_is_removed_by_the_next_run(results_conf, tmp_path):
    """SIGKILL leaves a defined, running domain, its bridges and files; what the next
    `task start` runs first (leftovers.clean_killed_runs) removes them."""
    proc = start(results_conf, {"duration_s": 2}, task=SAMPLE)
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
    [removed] = [r for r in nsb_leftovers.clean_killed_runs() if r.task_id == task_id]
    assert f"domain {domain}" in removed.items
    assert domain not in libvirt_domains()
    assert leftovers(task_id) == []
    assert not Path(f"/tmp/nsb-{task_id}").exists()
