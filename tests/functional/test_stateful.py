"""Stateful tests in the lab, for real: TRex in ASTF mode opening connections through
an nftables NAT or firewall (conntrack) of known capacity, set from outside, and the
generator alone (its ceiling). Every trial's connections are held against the DUT's
own count (conntrack's table, sampled while the trial ran); nothing is left behind."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, requires_root
from tests.functional.lab import leftovers, results_of, start
from tests.functional.trex_lab import env_with_trex, requires_trex

SAMPLES = ROOT / "samples" / "stateful"
CPS = SAMPLES / "tc_astf_cps_nftables_nat.yaml"
SESSIONS = SAMPLES / "tc_astf_sessions_nftables.yaml"
CALIBRATE = SAMPLES / "tc_astf_calibrate.yaml"
UDP_CPS = SAMPLES / "tc_astf_udp_cps_nftables_nat.yaml"
THROUGHPUT = SAMPLES / "tc_astf_throughput_nftables.yaml"
SOAK = SAMPLES / "tc_astf_cps_soak_nftables.yaml"


@pytest.fixture(autouse=True)
def _lab():
    requires_root()
    requires_trex()


def _run(results_conf, tmp_path, task, args: dict, *extra) -> tuple[str, dict, str]:
    proc = start(results_conf, args, *extra, task=task, env=env_with_trex())
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    assert leftovers(task_id) == []
    return task_id, doc, out


def _witnessed(doc, others: int = 0) -> None:
    """Every trial: what was intended >= attempted >= established, the counts add up,
    and the DUT's own count saw every connection TRex established (and no more than it
    attempted: an entry per connection the DUT let through); a trial that holds its
    sessions counts those open at once: no more than established, all of them when
    it passed. ``others``: the node's own connections its count includes (a pod's
    server, whose table holds nsb's SSH connections too)."""
    for trial in doc["trials"]:
        s = trial["sessions"]
        assert s["intended"] >= s["attempted"] >= s["established"] >= 0, s
        assert s["never_attempted"] == s["intended"] - s["attempted"]
        assert s["dut_sessions"] is not None
        if s["hold_s"] > 0:
            assert s["dut_sessions"] <= s["established"], s
            assert trial["verdict"] != "pass" or s["dut_sessions"] == s["established"], s
        else:
            assert s["established"] <= s["dut_sessions"] <= s["attempted"] + others, s


def test_cps_through_nat_finds_its_rate_limit_and_conntrack_counts_every_connection(
        results_conf, tmp_path):
    """An nftables limit of 2,000 new connections a second at the NAT, far below what
    TRex opens here (tens of thousands a second port to port): the search ends limited
    by the DUT, within its precision below the limit."""
    limit, precision = 2000, 5.0
    _, doc, out = _run(results_conf, tmp_path, CPS,
                       {"duration_s": 1, "max_new_per_s": limit, "upper_cps": 8000,
                        "lower_cps": 200, "precision_pct": precision,
                        "latency_at": [10, 50, 90]})
    (result,) = doc["results"]
    stateful = result["stateful"]
    assert result["limited_by"] == "dut", result
    # the limit's burst (20 ms of connections) lets a 1 s trial through up to 2 % more
    assert limit * (1 - 2 * precision / 100) <= stateful["cps"] <= limit * 1.03, stateful
    assert stateful["counts"]["loss_pct"] == 0
    _witnessed(doc, others=2)  # the latency stream's ICMP: an entry a direction
    # the trials at 10, 50 and 90 % of the answer: TRex's latency stream went through
    # the NAT both ways meanwhile, and none of their connections was lost
    points = result["cps_at_pct"]
    assert sorted(points) == ["10", "50", "90"]
    for pct, point in points.items():
        assert point["cps"] == pytest.approx(stateful["cps_asked"] * float(pct) / 100)
        assert point["verdict"] == "pass", point
        latency = point["latency"]
        assert latency["samples"] > 0 and latency["min_us"] <= latency["avg_us"] <= \
            latency["max_us"], latency
    above = [t for t in doc["trials"] if t["sessions"]["cps_asked"] > limit * 1.05]
    assert above and all(t["verdict"] == "fail" for t in above)
    kpis = [k["kpis"] for k in doc["kpis"] if k["source"] == "nat0"]
    assert kpis[-1]["rate_limit_dropped"] > 0  # the limit's own counter dropped them
    assert "connections/s" in out


def test_concurrent_sessions_find_the_firewall_s_session_limit(results_conf, tmp_path):
    """A 'ct count' limit of 1,200 concurrent connections at the firewall: the most
    sessions held at once is found within the precision below it, and the firewall's
    own count held every session of the answer."""
    limit, precision = 1200, 5.0
    _, doc, _ = _run(results_conf, tmp_path, SESSIONS,
                     {"max_sessions": limit, "upper_sessions": 3000, "lower_sessions": 200,
                      "precision_pct": precision, "open_cps": 2000, "hold_s": 0.5})
    (result,) = doc["results"]
    stateful = result["stateful"]
    assert result["limited_by"] == "dut", result
    assert limit * (1 - 2 * precision / 100) <= stateful["sessions"] <= limit, stateful
    assert stateful["dut_sessions"] >= stateful["sessions"]
    _witnessed(doc)
    # the trials that asked more: the firewall held its limit open at once, and refused
    # the rest (a SYN TRex sent again may get in once the first sessions closed: it is
    # established, but never held with them)
    failed = [t for t in doc["trials"] if t["verdict"] == "fail"]
    assert failed and all(t["sessions"]["dut_sessions"] == limit
                          for t in failed), [t["sessions"] for t in failed]


def test_the_calibration_states_the_generator_s_own_ceiling(results_conf, tmp_path):
    """Port to port, no DUT: what limits the answer is the generator (or the search's
    upper bound), never a DUT; every connection it attempted came up."""
    _, doc, _ = _run(results_conf, tmp_path, CALIBRATE,
                     {"duration_s": 1, "upper_cps": 150000, "precision_pct": 10})
    (result,) = doc["results"]
    assert result["limited_by"] in ("generator", "upper_bound"), result
    assert result["stateful"]["cps"] > 2000
    for trial in doc["trials"]:
        s = trial["sessions"]
        assert s["attempted"] == s["established"] or trial["verdict"] != "pass"
        assert s["dut_sessions"] is None  # no DUT that keeps state


def test_calibrate_measures_the_generator_port_to_port_first_and_bounds_the_answer(
        results_conf, tmp_path):
    """--calibrate: a run of its own with the DUT taken out (the generator's ports
    cabled to each other, no VNF), whose answer becomes the CPS scenario's ceiling in
    the task's run; the answer is the generator's whenever it is within 5 % of it."""
    import json

    from tests import results_schema

    proc = start(results_conf, {"duration_s": 1, "upper_cps": 60000, "lower_cps": 1000,
                                "precision_pct": 10}, "--calibrate", task=CPS,
                 env=env_with_trex())
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    runs = {}
    for path in (tmp_path / "results").glob("*/results.json"):
        doc = results_schema.check(json.loads(path.read_text()), str(path))
        runs[doc["results"][0]["scenario"]] = (path.parent.name, doc)
    assert sorted(runs) == ["cps_nat", "cps_nat_calibration"], sorted(runs)
    calibration_id, calibration = runs["cps_nat_calibration"]
    (ceiling,) = calibration["results"]
    assert ceiling["limited_by"] in ("generator", "upper_bound"), ceiling
    assert calibration["plan"]["scenarios"][0]["vnfs"] == {}  # no DUT
    assert all(t["sessions"]["dut_sessions"] is None for t in calibration["trials"])
    task_id, doc = runs["cps_nat"]
    (result,) = doc["results"]
    stateful = result["stateful"]
    assert stateful["generator_ceiling_cps"] == ceiling["stateful"]["cps"]
    near = stateful["cps"] >= 0.95 * stateful["generator_ceiling_cps"]
    assert (result["limited_by"] == "generator") if near else result["limited_by"] in (
        "dut", "generator"), (stateful, result["limited_by"])
    assert f"calibration {calibration_id}: cps_nat_calibration: the generator opened" in err
    assert leftovers(task_id) == [] and leftovers(calibration_id) == []


def test_a_cps_soak_through_nat_keeps_the_dut_s_state_between_its_intervals(
        results_conf, tmp_path):
    """Three intervals of 1 s at 1,000 connections a second: the NAT's table flushed
    before the first only, every connection of every interval established and seen by
    conntrack, the soak's answer its rate."""
    _, doc, _ = _run(results_conf, tmp_path, SOAK,
                     {"cps": 1000, "duration_s": 3, "interval_s": 1})
    (result,) = doc["results"]
    assert [t["sessions"]["fresh"] for t in doc["trials"]] == [True, False, False]
    assert result["limited_by"] == "none", result
    assert result["soak"] == {"intervals": 3, "cps": 1000, "worst_loss_pct": 0.0,
                              "failed_interval": None}
    _witnessed(doc)


def test_udp_cps_through_nat(results_conf, tmp_path):
    _, doc, _ = _run(results_conf, tmp_path, UDP_CPS,
                     {"duration_s": 1, "max_new_per_s": 1500,
                      "upper_cps": 6000, "lower_cps": 200, "precision_pct": 10})
    (result,) = doc["results"]
    assert result["stateful"]["program"] == "udp_cps"
    assert result["limited_by"] == "dut" and result["stateful"]["cps"] <= 1500 * 1.03
    _witnessed(doc)


def test_stateful_throughput_finds_the_nat_s_packet_limit_and_its_counter_agrees(
        results_conf, tmp_path):
    """An nftables limit of 12,000 packets a second from the clients, with 300 sessions
    open through the NAT: the search over the data rate ends limited by the DUT within
    its precision of the limit; in every trial the datagrams TRex's server side missed
    are the ones the limit's own counter dropped, and conntrack held every session."""
    limit, precision, sessions = 12000, 5.0, 300
    _, doc, _ = _run(results_conf, tmp_path, THROUGHPUT,
                     {"sessions": sessions, "max_pps": limit, "upper_pps": 40000,
                      "lower_pps": 2000, "precision_pct": precision, "duration_s": 1})
    (result,) = doc["results"]
    assert result["limited_by"] == "dut", result
    # the limit's burst (20 ms of packets) lets a 1 s trial through up to 2 % more
    assert limit * (1 - 2 * precision / 100) <= result["throughput_pps"] <= limit * 1.03
    assert result["stateful"]["kind"] == "stateful_throughput"
    dropped = [k["kpis"]["pps_limit_dropped"] for k in doc["kpis"] if k["source"] == "nat0"]
    assert len(dropped) == len(doc["trials"])
    before = 0.0
    for trial, counted in zip(doc["trials"], dropped, strict=True):
        s = trial["sessions"]
        assert s["established"] == s["attempted"] == sessions, s
        assert s["dut_sessions"] >= sessions  # conntrack held every one
        data = s["data"]
        # a datagram lost past the limit (a loaded machine's ports) is located by the
        # trial's own path counts, never taken for one the limit dropped
        assert data["sent"] - data["received"] == counted - before + _lost_past_the_dut(
            trial), (trial["trial_index"], s, trial["path"])
        assert (trial["verdict"] == "pass") == (data["sent"] == data["received"])
        before = counted


def _lost_past_the_dut(trial) -> int:
    """Frames the client-to-server path lost at a place other than the DUT's own hop."""
    (forward,) = [d for d in trial["path"]["directions"] if d["path"] == "tg:xe0 -> tg:xe1"]
    return sum(loss["frames"] for loss in forward["losses"]
               if not loss["hop"].startswith("dut ("))


@pytest.mark.parametrize("change, key, words", [
    ("program: {{ program | default(\"tcp_cps\") }}", "program",
     "does not load: ZeroDivisionError: division by zero"),
    ("program: {{ program | default(\"tcp_cps\") }}", "tunables",
     "does not take the tunables --nope 1: unrecognized arguments: --nope 1"),
    ("type: nftables", "vnfs[0]", "may keep state nsb cannot reset"),
])
def test_a_stateful_task_nsb_cannot_run_is_one_line_and_nothing_starts(tmp_path, change,
                                                                       key, words):
    import subprocess

    from tests.conftest import NSB

    broken = tmp_path / "broken_profile.py"
    broken.write_text("print(1 / 0)\n")
    text = CPS.read_text()
    replacement = {"program": f"program: {broken}",
                   "tunables": "program: " + str(ROOT.parent / "shared" / "tools" / "trex" /
                                                 "astf" / "http_manual_cli_tunable.py") +
                               "\n      tunables: ['--nope', '1']",
                   "vnfs[0]": "type: agnostic"}[key]
    text = text.replace(change, replacement)
    if key == "vnfs[0]":  # an agnostic DUT takes none of the nftables options
        text = text.replace("          mode: nat\n", "          {}\n").replace(
            "          generator_addresses: {xe0: [16.0.0.0/24], xe1: [48.0.0.0/24]}\n", "")
    task = tmp_path / "task.yaml"
    task.write_text(text)
    done = subprocess.run([*NSB, "task", "start", str(task), "--dry-run"], capture_output=True,
                          text=True, env=env_with_trex(), timeout=120)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"nsb: error: {task}:") and words in line, line
    assert "Traceback" not in done.stderr


def test_http_transactions_through_a_firewall_on_an_ssh_pod(results_conf, tmp_path):
    """The pod sample on two sshd nodes (namespaces over SSH, veths between them): TRex
    in ASTF mode on tg_0, the nftables firewall on vnf_0 with a limit of 1,000 new
    connections a second; the search over HTTP transactions ends limited by the DUT
    near the limit, the firewall's table saw every connection TRex established, and
    the node has nothing of the run left: no table, no TRex, no DPDK runtime files."""
    from tests.functional.test_baremetal_sample import lab_pod, started_by_nsb

    limit = 1000
    with lab_pod(tmp_path, names=("tg_0", "vnf_0")) as (pod, nodes):
        task_id, doc, _ = _run(results_conf, tmp_path, SAMPLES / "tc_astf_http_firewall_pod.yaml",
                               {"pod": str(pod), "trex_path": str(ROOT.parent / "shared" /
                                                                   "tools" / "trex"),
                                "duration_s": 1, "max_new_per_s": limit, "upper_cps": 4000,
                                "lower_cps": 200, "precision_pct": 10})
        assert "nsb_" not in nodes["sut"].ns("nft", "list", "tables").stdout
        for node in nodes.values():
            assert started_by_nsb(node, ("t-rex-64", "_t-rex-64")) == []
            assert node.ns("sh", "-c", f"ls -d /var/run/dpdk/nsb-{task_id}* 2>/dev/null"
                           ).stdout == ""
    (result,) = doc["results"]
    stateful = result["stateful"]
    assert doc["plan"]["context"]["type"] == "baremetal"
    assert stateful["program"] == "http" and stateful["response_bytes"] == 1024
    assert result["limited_by"] == "dut", result
    assert limit * 0.8 <= stateful["cps"] <= limit * 1.03, stateful
    _witnessed(doc, others=10)  # the node's table holds nsb's SSH connections too
