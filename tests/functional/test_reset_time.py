"""Reset time in the lab, against an outage of known length: testpmd stopped (SIGSTOP)
for pause_ms under a steady rate from TRex, then continued. The outage found by every
method is the pause within two readings of the timeline, the timeline's counts add up to
the trial's and to testpmd's own counters, and a bad event is one located line."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import NSB, ROOT, requires_root
from tests.functional.lab import leftovers, results_of, start
from tests.functional.trex_lab import env_with_trex, requires_trex

SAMPLE = ROOT / "samples" / "reset" / "tc_reset_pause.yaml"
SAMPLEVNF = Path(os.environ.get("NSB_SAMPLEVNF_PATH") or ROOT.parent / "shared" / "tools" /
                 "samplevnf")


@pytest.fixture(autouse=True)
def _lab():
    requires_root()
    requires_trex()


# OVS-DPDK on DPDK af_packet ports (veth): they drop what a stopped OVS cannot take, as
# a NIC does (over vhost-user TRex would wait instead: the test after this one)
@pytest.mark.parametrize("dut,vnf,pause_s,args", [
    ("testpmd", "testpmd0", 0.4, {}),
    pytest.param("ovs", "ovs0", 0.3, {}, marks=pytest.mark.slow),  # OVS-DPDK's in make test
    ("ovs_dpdk", "ovs0", 0.3, {"link": "veth"}),
    # vFW's restart is in make test; its pause (the CLI kept answering) is slow
    pytest.param("vfw", "vfw0", 0.4, {"samplevnf_path": str(SAMPLEVNF)},
                 marks=pytest.mark.slow)])
def test_a_known_pause_is_the_reset_time_by_every_method(results_conf, tmp_path, dut, vnf,
                                                         pause_s, args):
    if dut == "vfw" and not os.access(SAMPLEVNF / "vFW", os.X_OK):
        pytest.skip(f"no SampleVNF vFW in {SAMPLEVNF} (set NSB_SAMPLEVNF_PATH)")
    step_s = 0.05
    proc = start(results_conf, {"dut": dut, "pause_ms": pause_s * 1000, "interval_s": step_s,
                                "trials": 2, "duration_s": 4, "rate_pps": 20000, **args},
                 task=SAMPLE, env=env_with_trex())
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    (result,) = doc["results"]
    reset = result["reset"]
    # a loaded machine may lose a few frames before the event: that trial says so and
    # measures no outage (the rate was not loss-free); the others measure the pause
    verdicts = [t["verdict"] for t in doc["trials"]]
    for trial in doc["trials"]:
        assert trial["verdict"] == "pass" or "lost before the event" in trial["reason"]
    assert len(reset["trials"]) == verdicts.count("pass") >= 1, verdicts
    assert reset["recovered"]
    for trial in reset["trials"]:
        # what nsb did: the pause's length as performed (a sleep may overshoot a little)
        assert trial["event_s"] == pytest.approx(pause_s, abs=0.05)
        # TRex's counters move in steps (of 40 frames here): a reading may count frames
        # received before it counts them sent, so a few look lost for a reading or two
        assert trial["lost_before_event"] <= trial["sent_before_event"] * 0.001
        # frames queued in the DUT's rings through the pause are forwarded after it:
        # the frame-loss method is at most the pause, and short of it by the rings only
        assert trial["event_s"] - 2 * step_s <= trial["frame_loss_s"] <= \
            trial["event_s"] + 2 * step_s
        assert trial["timestamp_s"] == pytest.approx(trial["event_s"], abs=2 * step_s)
        # every frame arrives again once the DUT runs; a loaded machine's OVS-DPDK may
        # lose a few frames a second later (seen: 1.1 s), which that moves out
        assert trial["full_rate_back_s"] >= trial["event_s"] - 2 * step_s
        if dut == "testpmd":
            assert trial["full_rate_back_s"] == pytest.approx(trial["event_s"], abs=2 * step_s)
    assert reset["frame_loss_s"]["trials"] == len(reset["trials"])
    assert reset["reset_time_s"] == pytest.approx(reset["frame_loss_s"]["mean"])
    _timeline_adds_up(doc)
    _dut_saw(doc, vnf, pause_s)
    if dut == "testpmd":
        _testpmd_counted(doc)
    assert "Reset time, frame loss (s)" in out and f"{vnf} paused {pause_s * 1000:g} ms" in out
    assert leftovers(task_id) == []


def test_a_pause_that_holds_the_generator_back_is_no_reset_time(results_conf, tmp_path):
    """Over vhost-user a stopped OVS-DPDK fills TRex's rings and TRex waits: nothing is
    lost, and the trial is the generator's (it fell behind), never a DUT's reset time."""
    proc = start(results_conf, {"dut": "ovs_dpdk", "pause_ms": 400, "duration_s": 4,
                                "rate_pps": 40000}, task=SAMPLE, env=env_with_trex())
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    (trial,) = doc["trials"]
    # on a loaded machine OVS-DPDK may also lose a few frames before the event: then the
    # rate was not loss-free, which fails the trial first; either way no reset time
    assert trial["verdict"] == "generator_limited" or (
        trial["verdict"] == "fail" and "before the event" in trial["reason"]), trial["reason"]
    (result,) = doc["results"]
    assert result["reset"]["reset_time_s"] is None and result["reset"]["trials"] == []
    assert result["limited_by"] == ("generator" if trial["verdict"] == "generator_limited"
                                    else "dut")
    assert leftovers(task_id) == []


def test_a_link_down_for_a_known_time_is_the_gap_by_timestamps(results_conf, tmp_path):
    """testpmd's first port set down for 300 ms and up again: nothing arrives for that
    long (the timestamp method, within two readings); over veth the sender's kernel holds
    what it could not send meanwhile, so the frame-loss method reads at most that."""
    step_s = 0.05
    proc = start(results_conf, {"link_down_ms": 300, "interval_s": step_s, "trials": 2,
                                "duration_s": 4, "rate_pps": 20000},
                 task=SAMPLE, env=env_with_trex())
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    (result,) = doc["results"]
    for trial in doc["trials"]:
        assert trial["verdict"] == "pass" or "lost before the event" in trial["reason"]
    for outage in result["reset"]["trials"]:
        # the event: ip link down, 300 ms, ip link up (each command takes its time, more
        # on a loaded machine): the link was down at least 300 ms, at most the event
        assert outage["event_s"] >= 0.3
        assert 0.3 - 2 * step_s <= outage["timestamp_s"] <= outage["event_s"] + 2 * step_s
        assert outage["frame_loss_s"] <= outage["timestamp_s"] + 2 * step_s
    assert "testpmd0 port down 300 ms" in out
    _timeline_adds_up(doc)
    assert leftovers(task_id) == []


L3FWD = Path(os.environ.get("NSB_DPDK_APPS") or ROOT.parent / "shared" / "tools" /
             "dpdk-apps") / "l3fwd"


PROX = Path(os.environ.get("NSB_PROX_PATH") or ROOT.parent / "shared" / "tools" / "prox" /
            "prox")


@pytest.mark.parametrize("dut,signal,args", [
    ("testpmd", "KILL", {}), ("ovs_dpdk", "TERM", {"link": "veth"}),
    ("prox", "KILL", {"prox_path": str(PROX)}),
    ("vfw", "KILL", {"samplevnf_path": str(SAMPLEVNF), "duration_s": 18}),
    pytest.param("l3fwd", "TERM", {"l3fwd_path": str(L3FWD)}, marks=pytest.mark.slow)])
def test_a_restart_is_an_outage_no_longer_than_the_restart(results_conf, tmp_path, dut,
                                                           signal, args):
    """A planned (SIGTERM) or unplanned (SIGKILL) restart under load: the DUT forwards
    nothing from the signal until it is ready again (OVS-DPDK with its flows restored),
    so the outage is there, no longer than the restart took, by either method;
    every frame comes back; the restarted DUT is given back at the end."""
    if dut == "l3fwd" and not os.access(L3FWD, os.X_OK):
        pytest.skip(f"no DPDK l3fwd at {L3FWD} (set NSB_DPDK_APPS)")
    if dut == "prox" and not os.access(PROX, os.X_OK):
        pytest.skip(f"no PROX at {PROX} (set NSB_PROX_PATH)")
    if dut == "vfw" and not os.access(SAMPLEVNF / "vFW", os.X_OK):
        pytest.skip(f"no SampleVNF vFW in {SAMPLEVNF} (set NSB_SAMPLEVNF_PATH)")
    step_s = 0.05
    proc = start(results_conf, {"dut": dut, "restart": signal, "interval_s": step_s,
                                "duration_s": 6, "rate_pps": 20000, **args},
                 task=SAMPLE, env=env_with_trex())
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    (result,) = doc["results"]
    (trial,) = doc["trials"]
    # a loaded machine may lose frames before the event (no outage is measured), or a
    # few seconds after the restart (seen: testpmd, every frame back after 3.17 s):
    # not recovered, its frame loss then counts those too
    late = "not recovered" in trial["reason"]
    if trial["verdict"] != "pass":
        assert late or "lost before the event" in trial["reason"], trial["reason"]
    if trial["verdict"] == "pass" or late:
        (outage,) = result["reset"]["trials"]
        # nothing is forwarded from the signal until the DUT is ready again; frames its
        # rings held meanwhile come out after (l3fwd holds many), so the frame-loss
        # method reads at most the timestamp method, which reads at most the restart
        assert 0 < outage["frame_loss_s"], outage
        assert late or outage["frame_loss_s"] <= outage["timestamp_s"] + 2 * step_s, outage
        assert outage["timestamp_s"] <= outage["event_s"] + 2 * step_s, outage
        assert outage["recovered"] != late
        seen = outage["duts"][result["reset"]["event"]["vnf"]]
        # DPDK's counters start again from zero: the timeline counts on from there
        # (what the ended process sent after its last reading is in no reading); PROX's
        # and vFW's are their af_packet ports' kernel counters, which go on
        assert sum(r[2] for r in seen["readings"]) == seen["sent"] > 0
        assert 0 < seen["silent_s"] <= outage["event_s"] + 2 * step_s, seen
    assert f"restarted (SIG{signal})" in out
    _timeline_adds_up(doc)
    assert leftovers(task_id) == []


def _timeline_adds_up(doc: dict) -> None:
    """Each trial's intervals sum to its counts and losses."""
    for trial in doc["trials"]:
        timeline = [s for s in doc["soak_intervals"] if s["trial_index"] == trial["trial_index"]]
        assert sum(s["tx_packets"] for s in timeline) == trial["tx_packets"]
        assert sum(s["rx_packets"] for s in timeline) == trial["rx_packets"]
        lost = trial["tx_packets"] - trial["rx_packets"]
        assert lost == sum(s["lost_packets"] for s in timeline)


def _dut_saw(doc: dict, vnf: str, outage_s: float | None) -> None:
    """The DUT's own counters read during each trial (DPDK telemetry, OVS's port
    statistics): its timeline adds up to what its counters moved by over the trial, it
    took no more than TRex sent and sent no less than TRex received, and by its own
    counters it sent nothing for the outage's length, within two of its readings."""
    (result,) = doc["results"]
    trials = {t["trial_index"]: t for t in doc["trials"]}
    kpis = {k["trial_index"]: k["kpis"] for k in doc["kpis"] if k["source"] == vnf}
    for outage in result["reset"]["trials"]:
        seen = outage["duts"][vnf]
        readings = seen["readings"]
        assert sum(r[1] for r in readings) == seen["arrived"]
        assert sum(r[2] for r in readings) == seen["sent"]
        index = outage["trial_index"]
        assert seen["arrived"] <= trials[index]["tx_packets"], seen
        assert seen["sent"] >= trials[index]["rx_packets"], seen
        if index - 1 in kpis:  # the counters read after this trial and the one before
            moved = sum(v - kpis[index - 1].get(k, 0) for k, v in kpis[index].items()
                        if k.endswith(("_opackets", ".tx_packets", "packets_fwd")))
            assert seen["sent"] == moved
        if outage_s is not None:
            ends = [r[0] for r in readings]
            step = sorted(b - a for a, b in zip(ends, ends[1:], strict=False))[len(ends) // 2]
            assert seen["silent_s"] == pytest.approx(outage_s, abs=2 * max(step, 0.05)), seen
    assert result["reset"]["dut_silent_s"]["trials"] == len(result["reset"]["trials"])


def _testpmd_counted(doc: dict) -> None:
    """testpmd's own counters: it took no more than TRex sent and forwarded what TRex
    received."""
    telemetry = {k["trial_index"]: k["kpis"] for k in doc["kpis"] if k["source"] == "testpmd0"}
    for trial in doc["trials"]:
        index = trial["trial_index"]
        before = telemetry.get(index - 1, {})
        forwarded = telemetry[index]["port1_opackets"] - before.get("port1_opackets", 0)
        received = telemetry[index]["port0_ipackets"] - before.get("port0_ipackets", 0)
        # TRex's af_packet receive may drop what testpmd sent at the burst after the pause
        assert received <= trial["tx_packets"] and forwarded >= trial["rx_packets"]
        assert received - forwarded <= 0  # io forwarding: testpmd lost nothing it took


def test_an_event_the_dut_cannot_perform_is_one_located_line(results_conf):
    proc = start(results_conf, {}, "--dry-run", task=SAMPLE, env=env_with_trex())
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    bad = SAMPLE.read_text().replace("vnf: {{ vnf }}", "vnf: testpmd9")
    assert bad != SAMPLE.read_text()
    task = results_conf.parent / "tc_bad_event.yaml"
    task.write_text(bad)
    proc = start(results_conf, {}, task=task, env=env_with_trex())
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err
    (line,) = [row for row in err.splitlines() if row.strip()]
    assert "tc_bad_event.yaml" in line and "event" in line and "testpmd9" in line
    assert "Traceback" not in err


RECONFIG = ROOT / "samples" / "reset" / "tc_nftables_reconfig.yaml"


def judged(doc: dict, answer: dict) -> list[dict]:
    """The answer's outages, each trial's reason shown when one has none."""
    assert answer["trials"], [t["reason"] for t in doc["trials"]]
    return answer["trials"]


def test_a_rule_change_that_drops_for_a_known_time_is_its_blocked_time(results_conf, tmp_path):
    """A table whose forward chain drops everything, loaded and deleted again block_ms
    later: the blocked time is that long within two readings, by both methods."""
    proc = start(results_conf, {"block_ms": 300, "duration_s": 4}, task=RECONFIG,
                 env=env_with_trex())
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    (result,) = doc["results"]
    (trial,) = judged(doc, result["reset"])
    step = trial["interval_s"]
    assert trial["frame_loss_s"] == pytest.approx(0.3, abs=2 * step)
    assert trial["timestamp_s"] == pytest.approx(0.3, abs=2 * step)
    assert result["reset"]["blocked_time_s"] == trial["frame_loss_s"]
    assert trial["loss_ratio"] == pytest.approx(trial["lost_packets"] / trial["sent_packets"])
    _timeline_adds_up(doc)
    _dut_saw(doc, "fw0", 0.3)  # the kernel's counters: what arrived, what it forwarded
    assert leftovers(task_id) == []


OVS_RECONFIG = ROOT / "samples" / "reset" / "tc_ovs_reconfig.yaml"


@pytest.mark.parametrize("task,vnf", [(RECONFIG, "fw0"), (OVS_RECONFIG, "ovs0")],
                         ids=["nftables", "openflow"])
def test_rules_churned_under_load_are_counted_by_the_dut(results_conf, tmp_path, task, vnf):
    """200 rule changes (100 a second for 2 s) over 500 installed rules (nftables' ACL
    set, OVS's OpenFlow flows): the DUT holds the 500 again after the churn (every rule
    added was removed), the answer is the blocked time, whatever it is on this machine
    (the frames lost over the rate), and the DUT's own port counters agree with TRex's."""
    proc = start(results_conf, {"rules_installed": 500, "changes_per_s": 100, "churn_s": 2,
                                "duration_s": 5}, task=task, env=env_with_trex())
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    (result,) = doc["results"]
    kpis = [k["kpis"] for k in doc["kpis"] if k["source"] == vnf][-1]
    assert (kpis["acl_entries"], kpis["acl_changes"]) == (500, 200)
    (trial,) = judged(doc, result["reset"])
    assert trial["event_s"] >= 2.0  # the churn ran its course
    assert result["reset"]["blocked_time_s"] == pytest.approx(
        trial["lost_packets"] / trial["offered_pps"])
    assert "rule changes/s" in out
    _timeline_adds_up(doc)
    _dut_saw(doc, vnf, None)
    assert leftovers(task_id) == []


OVERLOAD = ROOT / "samples" / "reset" / "tc_overload_recovery.yaml"


@pytest.mark.parametrize("queue_ms", [100])
def test_an_overload_of_a_known_queue_recovers_when_the_queue_drains(results_conf, tmp_path,
                                                                     queue_ms):
    """A bridge shaped to 20,000 frames a second with a queue of queue_ms, at 75 % of it
    and twice that for 1 s: the overload loses what the queue cannot hold, no frame is
    lost once it ends, and latency is back once the queue drained at a quarter of the
    capacity: 4 x (queue_ms + the bucket's 12.5 ms), within two readings."""
    capacity = 20000
    proc = start(results_conf, {"capacity_pps": capacity, "queue_ms": queue_ms,
                                "overload_s": 1, "duration_s": 6},
                 task=OVERLOAD, env=env_with_trex())
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    (result,) = doc["results"]
    (trial,) = doc["trials"]
    timeline = [s for s in doc["soak_intervals"] if s["trial_index"] == trial["trial_index"]]
    step = sorted(s["end_s"] - s["start_s"] for s in timeline)[len(timeline) // 2]
    if trial["verdict"] != "pass":  # a loaded machine's loss before the overload only
        assert "before the overload" in trial["reason"], trial["reason"]
    else:
        (r,) = judged(doc, result["overload"])
        queue_s = (queue_ms + 12.5) / 1000
        assert r["loss_recovery_s"] <= 2 * step, r
        assert r["latency_recovery_s"] == pytest.approx(4 * queue_s, abs=2 * step), r
        # with its queue full the bucket passes its capacity, the rest is lost
        full = [s for s in timeline if s["start_s"] >= r["overload_start_s"] + queue_s + step
                and s["end_s"] <= r["overload_end_s"]]
        passed = sum(s["rx_packets"] for s in full) / sum(s["end_s"] - s["start_s"]
                                                          for s in full)
        assert passed == pytest.approx(capacity, rel=0.1), full
        steady = result["overload"]["steady_pps"]
        extra = trial["tx_packets"] - steady * trial["duration_s"]
        assert 0 < trial["tx_packets"] - trial["rx_packets"] <= extra
        assert r["latency_peak_us"] >= queue_s * 1e6 * 0.9  # the queue was full
    assert "No more loss after (s)" in out
    _timeline_adds_up(doc)
    report = tmp_path / "report.html"  # each trial's timeline with the overload marked
    done = subprocess.run([*NSB, "--config-file", str(results_conf), "report", "html",
                           task_id, "-o", str(report)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Timeline of each trial" in report.read_text()
    assert leftovers(task_id) == []


def test_a_known_pause_on_an_ssh_pod(results_conf, tmp_path):
    """The sample on a pod over SSH (two sshd nodes, veths between them): TRex on tg_0,
    testpmd on vnf_0, the pause sent over SSH, testpmd's counters read during the trial
    by a feed over SSH; the outage is the pause by TRex's counters and by testpmd's own,
    and nothing of the run is left on the nodes."""
    from tests.functional.test_baremetal_sample import lab_pod, started_by_nsb

    step_s, pause_s = 0.05, 0.4
    with lab_pod(tmp_path, names=("tg_0", "vnf_0")) as (pod, nodes):
        proc = start(results_conf, {"pod": str(pod), "trex_path": str(
            ROOT.parent / "shared" / "tools" / "trex"), "pause_ms": pause_s * 1000,
            "interval_s": step_s, "trials": 2, "duration_s": 4, "rate_pps": 20000},
            task=SAMPLE, env=env_with_trex())
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err
        task_id, doc = results_of(tmp_path / "results")
        for node in nodes.values():
            assert started_by_nsb(node, ("testpmd", "t-rex-64", "_t-rex-64", "python3")) == []
            assert node.ns("sh", "-c", f"ls -d /var/run/dpdk/nsb-{task_id}* 2>/dev/null"
                           ).stdout == ""
    assert doc["plan"]["context"]["type"] == "baremetal"
    (result,) = doc["results"]
    for trial in doc["trials"]:
        assert trial["verdict"] == "pass" or "lost before the event" in trial["reason"]
    assert result["reset"]["trials"], doc["trials"]
    for outage in result["reset"]["trials"]:
        # the event: SIGSTOP over SSH, pause_ms, SIGCONT over SSH: testpmd was stopped
        # at least pause_ms, at most the event (each signal takes its round trip)
        assert outage["event_s"] >= pause_s
        low, high = pause_s - 2 * step_s, outage["event_s"] + 2 * step_s
        assert low <= outage["timestamp_s"] <= high, outage
        assert low <= outage["duts"]["testpmd0"]["silent_s"] <= high, outage
    _timeline_adds_up(doc)
    _dut_saw(doc, "testpmd0", None)
    assert leftovers(task_id) == []


def test_an_overload_on_an_ssh_pod(results_conf, tmp_path):
    """The overload sample on a pod over SSH: TRex on the generator server, the shaped
    bridge made on the switch server (its ports the ones cabled to TRex's); the
    overload loses frames, none is lost once its queue drained, and the bridge and its
    shapers are gone from the server afterwards."""
    from tests.functional.test_baremetal_sample import lab_pod, started_by_nsb

    with lab_pod(tmp_path, names=("tg", "host"), switch="br0") as (pod, nodes):
        proc = start(results_conf, {"pod": str(pod), "trex_path": str(
            ROOT.parent / "shared" / "tools" / "trex"), "capacity_pps": 20000,
            "queue_ms": 50, "duration_s": 5}, task=OVERLOAD, env=env_with_trex())
        out, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err
        task_id, doc = results_of(tmp_path / "results")
        for node in nodes.values():
            assert started_by_nsb(node, ("t-rex-64", "_t-rex-64")) == []
        host = nodes["sut"]
        assert host.ns("ip", "link", "show", "br0").returncode != 0
        assert "tbf" not in host.ns("tc", "qdisc", "show").stdout
    assert doc["plan"]["context"]["type"] in ("Node", "baremetal")
    (result,) = doc["results"]
    (trial,) = doc["trials"]
    if trial["verdict"] != "pass":  # a loaded machine's loss before the overload only
        assert "before the overload" in trial["reason"], trial["reason"]
    else:
        (r,) = judged(doc, result["overload"])
        timeline = [s for s in doc["soak_intervals"]
                    if s["trial_index"] == trial["trial_index"]]
        step = sorted(s["end_s"] - s["start_s"] for s in timeline)[len(timeline) // 2]
        assert r["lost_in_overload"] > 0 and r["loss_recovery_s"] <= 2 * step, r
        # the queue (50 ms and the bucket's 12.5 ms) drains at a quarter of the capacity
        assert r["latency_recovery_s"] == pytest.approx(4 * 0.0625, abs=2 * step), r
    kpis = [k["kpis"] for k in doc["kpis"] if k["source"] == "bridge0"][-1]
    # the bridge's own counters: what left it on xe1 is what TRex received
    assert kpis["xe1.tx_packets"] >= trial["rx_packets"] > 0, kpis
    _timeline_adds_up(doc)
    assert leftovers(task_id) == []

