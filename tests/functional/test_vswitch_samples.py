"""The vSwitch samples for real: OVS userspace datapath, testpmd "VMs", trafgen.

Phy2Phy, PVP and PVVP in the embedded lab, each with the checks of the
embedded-lab sample (consistent loss, ordered latency, a passing trial at the
reported rate, nothing left behind) plus OVS's own KPIs and the switching
figure (throughput x switching operations).
"""

import json
import subprocess

import pytest

from tests.conftest import NSB, ROOT, requires_root
from tests.functional.answers import check_consistent
from tests.functional.lab import leftovers, results_of

SAMPLES = ROOT / "samples" / "vswitch"
SPEED_GBPS = 0.1  # a line rate the 2-core lab can resolve; precision is % of it


@pytest.fixture(autouse=True)
def _root():
    requires_root()


def run_sample(results_conf, task, args: dict):
    argv = NSB + ["--config-file", str(results_conf), "task", "start", str(task),
                  "--task-args", json.dumps({"duration_s": 1, "packet_sizes": [64],
                                             "speed_gbps": SPEED_GBPS, "precision": 2, **args})]
    return subprocess.run(argv, capture_output=True, text=True, timeout=900)


@pytest.mark.parametrize("sample,ops,args", [
    ("tc_ovs_phy2phy.yaml", 1, {"flows": 1000, "bidirectional": True}),
    ("tc_ovs_pvp.yaml", 2, {"flows": 1, "bidirectional": False}),
    ("tc_ovs_pvvp.yaml", 3, {"flows": 1000, "bidirectional": True}),
])
def test_vswitch_sample(results_conf, tmp_path, sample, ops, args):
    done = run_sample(results_conf, SAMPLES / sample, args)
    assert done.returncode == 0, done.stderr
    task_id, doc = results_of(tmp_path / "results")
    check_consistent(doc, speed_gbps=SPEED_GBPS)
    (result,) = doc["results"]
    assert result["switching_operations"] == ops
    assert result["switched_throughput_pps"] == pytest.approx(ops * result["throughput_pps"])
    ovs = [k["kpis"] for k in doc["kpis"] if k["source"] == "ovs0"]
    assert len(ovs) == len(doc["trials"])
    assert ovs[-1]["packets_received"] > 0 and ovs[-1]["datapath_flows"] >= 1
    assert sum(ovs[-1][k] for k in ("simple_match_hits", "emc_hits", "smc_hits",
                                   "megaflow_hits")) > 0
    flows = {t["flows"] for t in doc["trials"]}
    assert flows == {args["flows"]}
    streams = doc["plan"]["scenarios"][0]["traffic_generator"]["tg0"]["streams"]
    assert len(streams) == (2 if args["bidirectional"] else 1)
    assert leftovers(task_id) == []  # no namespace, no ovsdb/vswitchd, no run directory


def test_ovs_dpdk_options_reach_the_database_and_l2_flows_forward(results_conf, tmp_path):
    task = tmp_path / "phy2phy_options.yaml"
    text = (SAMPLES / "tc_ovs_phy2phy.yaml").read_text()
    task.write_text(text.replace("          bridge: br0\n", "          bridge: br0\n"
                                 "          pmd_cpu_mask: '0x2'\n          max_idle: 5000\n"
                                 "          n_rxq: 1\n"))
    done = run_sample(results_conf, task, {"ovs_flows": "l2"})
    assert done.returncode == 0, done.stderr
    task_id, doc = results_of(tmp_path / "results")
    assert doc["results"][0]["throughput_pps"] > 0  # dl_dst matches forward the frames
    plan_flows = doc["plan"]["scenarios"][0]["vnfs"]["ovs0"]["flows"]
    assert all("dl_dst=" in rule for rule in plan_flows)
    log = (tmp_path / "logs" / f"{task_id}.log").read_text()
    assert 'max-idle="5000"' in log and 'pmd-cpu-mask="0x2"' in log
    assert leftovers(task_id) == []


def test_a_link_via_an_undeclared_bridge_is_a_task_error(nsb_main, tmp_path):
    task = tmp_path / "bad.yaml"
    task.write_text((SAMPLES / "tc_ovs_phy2phy.yaml").read_text().replace(
        "via: br0}", "via: br9}"))
    code, out, err = nsb_main("task", "validate", str(task))
    assert code == 2
    assert "links[0].via" in err and "bridge 'br9' is provided by 0 nodes" in err
    assert "host:br0" in err


def _hugepages_total() -> int:
    for line in open("/proc/meminfo"):
        if line.startswith("HugePages_Total:"):
            return int(line.split()[1])
    return 0


def test_ovs_dpdk_with_a_vhost_user_container_forwards_and_gives_everything_back(
        results_conf, tmp_path):
    """Debian's OVS-DPDK (ovs-vswitchd-dpdk, PMD threads) with dpdkvhostuserclient ports
    and testpmd serving them on virtio_user: the frames cross two vhost-user sockets,
    the PMD counts them with its cycles, and the hugepages both took are given back."""
    pages_before = _hugepages_total()
    done = run_sample(results_conf, SAMPLES / "tc_ovs_dpdk_pvp_container.yaml", {})
    assert done.returncode == 0, done.stderr
    task_id, doc = results_of(tmp_path / "results")
    check_consistent(doc, speed_gbps=SPEED_GBPS)
    ovs = doc["plan"]["scenarios"][0]["vnfs"]["ovs0"]
    assert ovs["vswitchd"].endswith("ovs-vswitchd-dpdk")
    assert ovs["other_config"]["dpdk-init"] == "true"
    assert set(ovs["vhost_user_ports"]) == {"br0-0b", "br0-1a"}
    assert "net_virtio_user0" in doc["plan"]["scenarios"][0]["vnfs"]["vnf0"]["command"]
    kpis = [k["kpis"] for k in doc["kpis"] if k["source"] == "ovs0"][-1]
    assert kpis["packets_received"] > 0 and kpis["processing_cycles"] > 0
    assert kpis["cycles_per_packet"] > 0
    (result,) = doc["results"]
    assert result["switching_operations"] == 2
    ovs_log = (tmp_path / "results" / task_id / "logs" / "ovs0-ovs.log").read_text()
    assert "DPDK Enabled - initialized" in ovs_log
    assert _hugepages_total() == pages_before
    assert leftovers(task_id) == []  # no sockets, run dirs, DPDK runtime dirs, processes
