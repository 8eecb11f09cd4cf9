"""The real TRex (v3.08 stateless server and its own STL client) as nsb's generator.

In the embedded lab: TRex in the generator's namespace, dpdk-testpmd in the
DUT's, joined by memif (or veth, af_packet). Every count nsb reports is checked
against a second STL client on the same server and against testpmd's own
counters (DPDK telemetry). No double stands in for TRex here.
"""

from __future__ import annotations

import json
import signal
import socket
import time

import pytest

from nsb import frames
from nsb.errors import RunError
from nsb.executors.local import LocalExecutor
from nsb.trial import Trial
from nsb.vnfs.dpdk import telemetry as dpdk_telemetry
from nsb.vnfs.trex import server as trex_server
from tests.conftest import SAMPLE, requires_root
from tests.functional.answers import check_consistent
from tests.functional.lab import leftovers, results_of, start
from tests.functional.test_faults import _events, _wait_for
from tests.functional.trex_lab import (
    TREX_PATH,
    env_with_trex,
    requires_trex,
    running,
    second_client,
)


@pytest.fixture(autouse=True)
def _root_and_trex():
    requires_root()
    requires_trex()


def _testpmd_counts(testpmd) -> dict[int, tuple[int, int]]:
    """port -> (ipackets, opackets) as testpmd counts them."""
    reply = dpdk_telemetry.query(testpmd.executor, testpmd.file_prefix,
                                 ["/ethdev/stats,0", "/ethdev/stats,1"])
    return {p: (reply[f"/ethdev/stats,{p}"]["ipackets"], reply[f"/ethdev/stats,{p}"]["opackets"])
            for p in (0, 1)}


def test_what_nsb_reports_is_what_trex_and_testpmd_counted(tmp_path):
    with running(tmp_path, generator="trex", forward_mode="io") as scenario:
        gen, testpmd = scenario.generator, scenario.vnfs[0]
        other = second_client(gen)
        try:
            other.clear_stats()  # the second client's own baseline
            before = _testpmd_counts(testpmd)
            trials = [Trial(64, 200_000, 1.0, flows=1000), Trial(594, 100_000, 1.0),
                      Trial(1518, 50_000, 1.0)]
            results = [gen.run_trial(t) for t in trials]
            seen = other.get_stats(ports=[0, 1])
            after = _testpmd_counts(testpmd)
        finally:
            other.disconnect(stop_traffic=False, release_ports=False)
    for trial, result in zip(trials, results, strict=True):
        assert 0 < result.rx_packets <= result.tx_packets, result
        # the rate asked was sent (latency stream included), within TRex's pacing
        assert result.tx_packets == pytest.approx(trial.rate_pps * trial.duration_s, rel=0.02)
        assert not result.generator_limited, result
        assert result.latency and result.latency.samples > 0
        lat = result.latency
        assert lat.min_us <= lat.avg_us <= lat.max_us
        assert lat.percentiles_us["p50"] <= lat.percentiles_us["p99"] <= lat.max_us
        assert result.extra["xe0.OutPackets"] == result.ports["xe0"]["tx_packets"]
    # the second client read exactly the frames nsb reported, per port
    for number, name in ((0, "xe0"), (1, "xe1")):
        assert seen[number]["opackets"] == sum(r.ports[name]["tx_packets"] for r in results)
        assert seen[number]["ipackets"] == sum(r.ports[name]["rx_packets"] for r in results)
    # testpmd received on each port what TRex sent into it, and TRex got what it forwarded
    # (sut:xe0 is cabled to tg:xe0, sut:xe1 to tg:xe1)
    for port, name in ((0, "xe0"), (1, "xe1")):
        received = after[port][0] - before[port][0]
        forwarded = after[port][1] - before[port][1]
        assert received == sum(r.ports[name]["tx_packets"] for r in results)
        assert forwarded == sum(r.ports[name]["rx_packets"] for r in results)


def test_flows_and_sizes_reach_the_dut_as_asked(tmp_path):
    """A million flows (field engine, not cached) and an IMIX over af_packet, checked in
    testpmd's counters: every frame TRex sent arrived, at the mix's mean size."""
    with running(tmp_path, generator="trex", forward_mode="io", link="veth") as scenario:
        gen, testpmd = scenario.generator, scenario.vnfs[0]
        mix = frames.from_weights({64: 7, 594: 4, 1518: 1})
        reply_before = dpdk_telemetry.query(testpmd.executor, testpmd.file_prefix,
                                            ["/ethdev/stats,0"])
        result = gen.run_trial(Trial(mix, 20_000, 1.0, flows=1_000_000))
        reply_after = dpdk_telemetry.query(testpmd.executor, testpmd.file_prefix,
                                           ["/ethdev/stats,0"])
    got = {k: reply_after["/ethdev/stats,0"][k] - reply_before["/ethdev/stats,0"][k]
           for k in ("ipackets", "ibytes")}
    assert got["ipackets"] == result.ports["xe0"]["tx_packets"]
    # DPDK counts bytes without FCS; the latency stream (1000 pps, a tenth of the frames
    # here) sends the mix's commonest size
    latency_share = 1000 / 10_000
    expected = (1 - latency_share) * mix.avg_size + latency_share * mix.most_common
    assert got["ibytes"] / got["ipackets"] + 4 == pytest.approx(expected, rel=0.03)
    assert result.trial.flows == 1_000_000
    assert 0 < result.rx_packets <= result.tx_packets


def test_a_mix_over_memif_is_refused_in_one_line(nsb_main):
    code, _, err = nsb_main("task", "validate", str(SAMPLE), "--task-args",
                            json.dumps({"generator": "trex", "packet_sizes": ["IMIX"]}))
    assert code == 2, err
    assert "cannot send a frame mix over memif" in err and len(err.strip().splitlines()) == 1


def test_trex_over_af_packet_says_when_it_cannot_keep_up(tmp_path):
    """On veth TRex stretches a trial it cannot send in time: that is generator-limited,
    and what it really sent is its counter over the time it took."""
    with running(tmp_path, generator="trex", link="veth", forward_mode="io") as scenario:
        gen = scenario.generator
        slow = gen.run_trial(Trial(64, 3_000_000, 1.0))
        easy = gen.run_trial(Trial(64, 10_000, 1.0))
    assert slow.generator_limited
    assert slow.elapsed_s > 1.05 or slow.tx_packets < 0.95 * 3_000_000
    assert slow.measured_tx_pps < 3_000_000 * 0.95
    assert not easy.generator_limited
    assert 0 < easy.rx_packets <= easy.tx_packets


def test_the_sample_with_trex_finds_a_limit_testpmd_counted(results_conf, tmp_path):
    results_conf.write_text(results_conf.read_text() + "nfvi_interval = 0\n")
    proc = start(results_conf, {"duration_s": 1, "packet_sizes": [64]}, env=env_with_trex())
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert "TRex not found" not in err  # TRex was found: no fallback notice
    task_id, doc = results_of(tmp_path / "results")
    check_consistent(doc, speed_gbps=10)
    (result,) = doc["results"]
    assert result["limited_by"] in ("dut", "generator"), result
    (best,) = [t for t in doc["trials"] if t["trial_index"] == result["evidence"]["trial_index"]]
    # testpmd's own counters (sampled after each trial) forwarded what TRex received
    samples = [k for k in doc["kpis"] if k["source"] == "testpmd0"]
    by_trial = {k["trial_index"]: k["kpis"] for k in samples}
    index = best["trial_index"]
    prior = by_trial.get(index - 1, {})
    forwarded = sum(by_trial[index][f"port{p}_opackets"] - prior.get(f"port{p}_opackets", 0)
                    for p in (0, 1))
    assert forwarded == best["rx_packets"]
    # the rate: the trial's frames over the seconds TRex took to send them, by its counter
    assert result["throughput_pps"] == pytest.approx(best["tx_packets"] / best["elapsed_s"])
    if best["verdict"] == "pass":  # every frame out by the trial's end plus its tolerance
        assert best["elapsed_s"] >= best["duration_s"] * (1 - 1e-9)
        assert best["extra"]["known_within_s"] <= best["duration_s"] * 1.05 + 0.1
        if result["limited_by"] == "generator":  # TRex could not send the faster rates
            assert any(t["verdict"] == "generator_limited" and t["requested_rate_pps"] >
                       best["requested_rate_pps"] for t in doc["trials"])
    else:  # a trial TRex could not keep up with, without loss
        # either it lagged (stopped, its frames over the seconds it sent), or it kept its
        # schedule and sent fewer frames than asked (the rest never left it)
        lagged = "still sending" in best["reason"] or "had sent" in best["reason"]
        assert lagged or f"TRex sent {best['tx_packets']:,} of the" in best["reason"], best
    # the answer was confirmed at its rate (or says it was not), with latency from TRex's
    # HDR histograms
    confirmation = doc["trials"][-1]
    assert confirmation["reason"].startswith("confirmation with latency")
    assert confirmation["verdict"] in ("pass", "generator_limited")
    # unconfirmed: sent short every time, or passed though sent more than 1 % slower than
    # the answer's own trial (the answer keeps the faster rate)
    slower = confirmation["verdict"] == "pass" and \
        confirmation["tx_rate_pps"] < result["throughput_pps"] * (1 - 0.01)
    assert (confirmation["verdict"] == "generator_limited" or slower) == any(
        "the latency at the answer is unconfirmed" in w
        for w in result.get("latency_warnings") or [])
    assert "HDR histogram" in result["latency"]["resolution"] and result["latency"]["hdrh"]
    assert "--hdrh" in doc["plan"]["scenarios"][0]["traffic_generator"]["tg0"]["command"]
    assert leftovers(task_id) == []


def test_after_sigkill_the_next_run_removes_trex(results_conf, tmp_path):
    killed = start(results_conf, {"duration_s": 5, "packet_sizes": [64]}, env=env_with_trex())
    task_id, _ = _wait_for(lambda: (e := _events(tmp_path / "results")) and
                           "TrialStarted" in e[1] and e, killed, "trial")
    time.sleep(1.0)
    killed.send_signal(signal.SIGKILL)
    killed.communicate(timeout=30)
    left = leftovers(task_id)
    assert any("t-rex-64" in item for item in left), left  # the fault is real
    conf = tmp_path / "second.conf"
    conf.write_text(f"[DEFAULT]\nresults_dir = {tmp_path}/second\nlog_dir = {tmp_path}/logs\n")
    after = start(conf, {"duration_s": 1, "packet_sizes": [64], "generator": "trafgen"})
    _, err = after.communicate(timeout=600)
    assert after.returncode == 0, err
    assert f"task {task_id} ended without cleaning up" in err
    assert leftovers(task_id) == []


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _cfg(tmp_path, interfaces: list[str], rpc: int) -> str:
    path = tmp_path / "trex_cfg.yaml"
    path.write_text(json.dumps([{
        "version": 2, "port_limit": 2, "interfaces": interfaces, "prefix": f"nsbtest{rpc}",
        "zmq_rpc_port": rpc, "zmq_pub_port": rpc + 1, "low_end": True, "low_end_core": 0}]))
    return str(path)


def _start_and_fail(tmp_path, interfaces, rpc) -> str:
    executor = LocalExecutor()
    log = tmp_path / f"trex-{rpc}.log"
    argv = trex_server.command(str(TREX_PATH), _cfg(tmp_path, interfaces, rpc), None, [])
    server = trex_server.TrexServer(executor, argv, str(log), f"nsbtest{rpc}", "tg0",
                                    log.read_text)
    server.start()
    try:
        with pytest.raises(RunError) as raised:
            server.wait_ready(lambda: (_ for _ in ()).throw(ConnectionError("no answer")),
                              60)
    finally:
        server.stop()
    message = str(raised.value)
    assert "\n" not in message and str(log) in message
    return message


def test_a_trex_that_will_not_start_is_one_line_with_its_reason(tmp_path):
    missing = _start_and_fail(tmp_path, ["nsbnosuch0", "nsbnosuch1"], _free_port())
    assert "Could not find Linux interface nsbnosuch0" in missing

    left_over = tmp_path / "left.sock"
    left_over.write_text("")  # a file where TRex wants to create its memif socket
    memif = [f"--vdev=net_memif0,id=0,role=master,socket={left_over},socket-abstract=no",
             f"--vdev=net_memif1,id=0,role=slave,socket={left_over},socket-abstract=no"]
    assert "Address already in use" in _start_and_fail(tmp_path, memif, _free_port())

    with socket.socket() as busy:
        busy.bind(("0.0.0.0", 0))
        busy.listen()
        rpc = busy.getsockname()[1]
        free = [f"--vdev=net_memif0,id=0,role=master,socket={tmp_path}/m.sock,"
                "socket-abstract=no",
                f"--vdev=net_memif1,id=0,role=slave,socket={tmp_path}/m.sock,"
                "socket-abstract=no"]
        assert "unable to bind ZMQ server" in _start_and_fail(tmp_path, free, rpc)


def test_a_trex_path_without_trex_is_one_line_naming_what_is_missing(results_conf, tmp_path):
    empty = tmp_path / "trex"
    empty.mkdir()
    env = dict(env_with_trex(), NSB_TREX_PATH=str(empty))
    proc = start(results_conf, {"duration_s": 1, "packet_sizes": [64], "generator": "trex"},
                 env=env)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode != 0 and "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("nsb: error")]
    assert len(errors) == 1, err
    assert f"no TRex server in {empty} (missing t-rex-64, _t-rex-64, trex-cfg)" in errors[0]


def test_capture_filters_work_with_the_bpf_library_nsb_builds(tmp_path):
    """TRex's capture filters run on the libbpf-64.so that `make` builds where a TRex
    install lacks it (tools/trex/libbpf-64.c): a filter matching UDP keeps the trial's
    frames, one matching TCP keeps none."""
    with running(tmp_path, generator="trex", forward_mode="io") as scenario:
        gen = scenario.generator
        captured = {}
        for expression in ("udp", "tcp"):
            capture = gen.client.start_capture(rx_ports=[1], limit=1000, bpf_filter=expression)
            gen.run_trial(Trial(64, 2_000, 0.5))
            frames_seen: list = []
            gen.client.stop_capture(capture["id"], output=frames_seen)
            captured[expression] = len(frames_seen)
    assert captured["udp"] > 100
    assert captured["tcp"] == 0


NSB_SAMPLE = SAMPLE.parent / "trex" / "tc_trex_testpmd_rfc2544.yaml"


def test_nsbs_trex_task_format_runs_in_the_lab(results_conf, tmp_path):
    """NSB's format (TrexTrafficGenRFC, RFC2544Profile, uplink/downlink packet
    definitions, framesize/flow/rfc2544 options) with real TRex and testpmd."""
    proc = start(results_conf, {"context": "netns", "duration_s": 1, "flows": 64},
                 task=NSB_SAMPLE, env=env_with_trex())
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    (result,) = doc["results"]
    assert result["throughput_pps"] > 0 and result["frame_size"] == 64
    assert result["allowed_drop_rate_pct"] == [0.0001, 0.001]
    for trial in doc["trials"]:
        assert 0 <= trial["rx_packets"] <= trial["tx_packets"]
        assert trial["flows"] == 64
        # NSB's names beside nsb's
        assert trial["extra"]["xe0.OutPackets"] == trial["ports"]["xe0"]["tx_packets"]
        assert trial["extra"]["DropPercentage"] == pytest.approx(trial["loss_pct"])
    passing = [t for t in doc["trials"] if t["verdict"] == "pass"]
    assert passing and all(t["loss_pct"] <= 0.001 for t in passing)
    # NSB's profile asks no latency (enable_latency: False): no latency streams
    assert all(t["latency"] is None for t in doc["trials"])
    # the generator's NFVi KPIs are TRex's (_t-rex-64 under its launcher), not the wrapper's
    trex = [k["kpis"] for k in doc["kpis"] if k["source"].startswith("nfvi:tg")]
    # a 1 s trial's sample measured 3.9 to 6.6 % here; its idle launcher shell shows 0
    assert trex and max(k["cpu_user_pct"] for k in trex) > 1
    assert min(k["processes"] for k in trex) >= 2 and max(k["rss_kb"] for k in trex) > 50_000
    assert leftovers(task_id) == []


@pytest.mark.slow  # over a minute; make test-slow
def test_trex_on_a_pod_node_over_ssh(results_conf, tmp_path):
    """The TG of a pod reached over SSH: TRex starts there (af_packet on its kernel
    interfaces), nsb's client connects to the node's address, as NSB does."""
    from tests.functional.test_baremetal_sample import baremetal_task, lab_pod, started_by_nsb

    with lab_pod(tmp_path) as (pod, nodes):
        task = baremetal_task(tmp_path, pod)
        proc = start(results_conf, {"generator": "trex", "packet_sizes": [64],
                                    "duration_s": 1, "speed_gbps": 0.1,
                                    "forward_mode": "io"}, task=task, env=env_with_trex())
        _, err = proc.communicate(timeout=900)
        assert proc.returncode == 0, err
        task_id, doc = results_of(tmp_path / "results")
        # TRex's kernel ports were sinks while it ran; their addresses are back
        assert "10.77.1.1/24" in nodes["tg"].ns("ip", "-4", "addr", "show", "xe0").stdout
        for node in nodes.values():
            assert started_by_nsb(node, ("t-rex-64", "testpmd")) == []
            assert node.ns("sh", "-c", f"ls -d /tmp/nsb-{task_id}* /var/run/dpdk/nsb-{task_id}* "
                           "2>/dev/null").stdout == ""
    (result,) = doc["results"]
    assert result["throughput_pps"] > 0
    assert doc["plan"]["context"]["type"] == "baremetal"
    tg = doc["plan"]["scenarios"][0]["traffic_generator"]["tg0"]
    # the node's kernel interface, an af_packet port with nsb's receive ring
    assert "- --vdev=net_af_packet0,iface=xe0," in tg["trex_cfg.yaml"]
    for trial in doc["trials"]:
        assert 0 <= trial["rx_packets"] <= trial["tx_packets"]
    assert leftovers(task_id) == []


def test_pvp_through_ovs_dpdk_with_trex_on_vhost_user(results_conf, tmp_path):
    """TRex's virtio_user ports into OVS-DPDK, testpmd behind it: the switch and the VNF
    (sharing a core) set the limit, by losing frames or by holding TRex back over
    vhost-user (which this machine's load decides), and every frame TRex counted
    crossed OVS-DPDK; the answer agrees with its trials."""
    pvp = SAMPLE.parent / "vswitch" / "tc_ovs_dpdk_pvp_trex.yaml"
    proc = start(results_conf, {"duration_s": 1}, task=pvp, env=env_with_trex())
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    check_consistent(doc, speed_gbps=10)
    (result,) = doc["results"]
    assert result["limited_by"] in ("dut", "generator"), result
    assert result["throughput_pps"] > 0
    ovs = [k["kpis"] for k in doc["kpis"] if k["source"] == "ovs0"]
    received = sum(t["rx_packets"] for t in doc["trials"])
    # every frame TRex got back crossed the bridge twice (to the VNF and back out)
    assert ovs and max(k["packets_received"] for k in ovs) >= 2 * received
    assert leftovers(task_id) == []


PROFILES = {
    "binsearch_latency_at": """      type: binsearch
      packet_sizes: [64]
      duration: 1
      tolerated_loss: 0.01
      test_precision: 5.0
      upper_bound: 20.0
      latency_at: [50]
      interface_speed_gbps: 10
""",
    "fastndr": """      type: fastndr
      packet_sizes: [64]
      lower_bound: 1.0
      upper_bound: 20.0
      short_trial_duration: 0.5
      final_trial_duration: 1.0
      relative_width: 0.2
      max_final_trials: 2
      interface_speed_gbps: 10
""",
    "mlrsearch": """      type: mlrsearch
      packet_sizes: [64]
      lower_bound: 1.0
      upper_bound: 20.0
      goals: [{name: NDR, loss_ratio: 0.0, relative_width: 0.25, initial_trial_duration: 0.5,
               final_trial_duration: 1.0, duration_sum: 1.0, preceding_targets: 1}]
      interface_speed_gbps: 10
""",
    "ramp": """      type: ramp
      packet_sizes: [64]
      duration: 0.5
      lower_bound: 5.0
      upper_bound: 15.0
      step_value: 5.0
      interface_speed_gbps: 10
""",
}


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_profile_works_with_trex(name, results_conf, tmp_path):
    text = SAMPLE.read_text()
    start_at, end_at = text.index("    traffic_profile:\n"), text.index("    runner:\n")
    task = tmp_path / f"tc_{name}.yaml"
    task.write_text(text[:start_at] + "    traffic_profile:\n" + PROFILES[name] + text[end_at:])
    proc = start(results_conf, {"generator": "trex"}, task=task, env=env_with_trex())
    _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    assert doc["trials"], "no trial"
    for trial in doc["trials"]:
        assert 0 <= trial["rx_packets"] <= trial["tx_packets"], trial
        assert trial["latency"] and trial["latency"]["samples"] > 0
    if name != "ramp":
        assert doc["results"] and all(r["throughput_pps"] > 0 for r in doc["results"])
    if name == "binsearch_latency_at":
        assert doc["results"][0]["latency_at_ndr_pct"]
    assert leftovers(task_id) == []


def test_frames_carry_what_the_profile_defines(tmp_path):
    """QinQ, IPv6 and TCP definitions (NSB's uplink_0 fields) reach the wire: TRex's
    own capture filter matches the frames testpmd forwarded back."""
    from nsb.packets import Direction, IpRange, PacketSpec, PortRange

    specs = {
        "vlan 100 and vlan 200 and udp dst port 2001": PacketSpec(
            "uplink_0", 0, Direction.UPLINK, vlans=(100, 200), dst_port=PortRange(2001, 2001)),
        "ip6 and udp and dst host 2001:db8::1": PacketSpec(
            "uplink_0", 0, Direction.UPLINK, ip_version=6,
            src_ip=IpRange("2001:db8:1::1", "2001:db8:1::10"),
            dst_ip=IpRange("2001:db8::1", "2001:db8::1"), flows=16),
        "tcp and src portrange 1000-1015 and ip[1] & 0xfc == 184": PacketSpec(
            "uplink_0", 0, Direction.UPLINK, proto="tcp", dscp=46,
            src_port=PortRange(1000, 1015), flows=16),
    }
    seen = {}
    with running(tmp_path, generator="trex", forward_mode="io") as scenario:
        gen = scenario.generator
        for expression, spec in specs.items():
            capture = gen.client.start_capture(rx_ports=[1], limit=5000, bpf_filter=expression)
            result = gen.run_trial(Trial(128, 2_000, 0.5, packets=(spec,)))
            frames_seen: list = []
            gen.client.stop_capture(capture["id"], output=frames_seen)
            seen[expression] = (len(frames_seen), result)
    for expression, (count, result) in seen.items():
        assert result.ports["xe1"]["tx_packets"] == 0  # only the defined direction sent
        assert 0 < result.rx_packets <= result.tx_packets
        assert count == result.ports["xe1"]["rx_packets"], expression
