"""The TRex generator's pieces that need no TRex: its config file, the reason quoted
from its log, latency from its pg_id statistics, a trial's verdict on its counters."""

import dataclasses
import os

import yaml

from nsb.nodes.node import Endpoint, Interface
from nsb.trial import Trial
from nsb.vnfs.trex import server, stats, trex_cfg
from nsb.vnfs.trex.pacing import Pacing

SETTINGS = trex_cfg.ServerSettings(prefix="nsb-t-tg0", rpc_port=4601, pub_port=4600,
                                   low_end=True, low_end_core=1)


def _iface(name, **kw):
    return Interface(name=name, mac=f"02:00:00:00:00:0{name[-1]}",
                     peer=Endpoint("sut", name), peer_mac=f"02:00:00:00:01:0{name[-1]}", **kw)


def test_a_pod_with_nics_names_their_pci_addresses_and_macs():
    ports = [_iface("xe0", pci="0000:05:00.0", driver="vfio-pci"),
             _iface("xe1", pci="0000:05:00.1", driver="vfio-pci")]
    (cfg,) = yaml.safe_load(trex_cfg.render(ports, SETTINGS))
    assert cfg["interfaces"] == ["0000:05:00.0", "0000:05:00.1"]
    assert cfg["port_limit"] == 2 and cfg["version"] == 2
    assert cfg["port_info"] == [{"src_mac": "02:00:00:00:00:00", "dest_mac": "02:00:00:00:01:00"},
                                {"src_mac": "02:00:00:00:00:01", "dest_mac": "02:00:00:00:01:01"}]
    assert (cfg["prefix"], cfg["zmq_rpc_port"], cfg["zmq_pub_port"]) == ("nsb-t-tg0", 4601, 4600)
    assert cfg["low_end"] is True and cfg["low_end_core"] == 1
    assert "--no-pci" not in trex_cfg.render(ports, SETTINGS)


def test_lab_ports_are_vdevs_or_kernel_interfaces():
    memif = [_iface("xe0", kind="memif", socket="/tmp/m0.sock", serves_socket=False),
             _iface("xe1", kind="memif", socket="/tmp/m1.sock", serves_socket=True)]
    (cfg,) = yaml.safe_load(trex_cfg.render(memif, SETTINGS))
    assert cfg["interfaces"][0].startswith("--vdev=net_memif0,id=0,role=slave,socket=/tmp/m0.sock")
    assert cfg["interfaces"][1].startswith("--vdev=net_memif1,id=0,role=master,socket=/tmp/m1.sock")
    kernel = [_iface("xe0"), _iface("xe1")]
    (cfg,) = yaml.safe_load(trex_cfg.render(kernel, SETTINGS))
    # af_packet ports with a receive ring of 4096 frames (TRex's own drops frames)
    assert cfg["interfaces"] == [
        f"--vdev=net_af_packet{n},iface=xe{n},blocksz=4096,framesz=2048,framecnt=4096"
        for n in (0, 1)]
    (cfg,) = yaml.safe_load(trex_cfg.render(
        kernel, dataclasses.replace(SETTINGS, af_packet_framecnt=512)))
    assert cfg["interfaces"][1].endswith(",iface=xe1,blocksz=4096,framesz=2048,framecnt=512")
    vhost = [_iface("xe0", kind="vhostuser"), _iface("xe1", kind="vhostuser")]
    (cfg,) = yaml.safe_load(trex_cfg.render(vhost, SETTINGS, {"xe0": "/v/a", "xe1": "/v/b"}))
    assert cfg["interfaces"] == ["--vdev=net_virtio_user0,path=/v/a,server=1,queues=1",
                                 "--vdev=net_virtio_user1,path=/v/b,server=1,queues=1"]
    assert cfg["port_mtu"] == 1500  # virtio_user fails its Rx scatter check without it


def test_cores_of_their_own_when_not_low_end():
    settings = trex_cfg.ServerSettings(prefix="p", rpc_port=1, pub_port=2, low_end=False,
                                       master_core=0, latency_core=1, worker_cores=(2, 3))
    (cfg,) = yaml.safe_load(trex_cfg.render([_iface("xe0"), _iface("xe1")], settings))
    assert "low_end" not in cfg
    assert cfg["platform"] == {"master_thread_id": 0, "latency_thread_id": 1,
                               "dual_if": [{"socket": 0, "threads": [2, 3]}]}


def test_the_command_is_nsbs_from_the_trex_directory():
    argv = server.command("/opt/nsb_bin/trex/scripts", "/tmp/c.yaml", 2, ["--no-ofed-check"])
    assert argv[:3] == ["env", "-C", "/opt/nsb_bin/trex/scripts"]
    assert argv[3:] == ["./t-rex-64", "-i", "--cfg", "/tmp/c.yaml", "--no-scapy-server",
                        "--no-termio", "--iom", "0", "--hdrh", "-c", "2", "--no-ofed-check"]


def test_the_reason_is_trexs_own_first_error_lines():
    log = ("The ports are bound/configured.\nERROR: Could not find Linux interface veth9.\n"
           "ERROR encountered while configuring TRex system\n")
    assert server.reason(log) == "ERROR: Could not find Linux interface veth9."
    log = ("Starting  TRex v3.08 please wait  ...\nMEMIF: memif_socket_create(): Failed to "
           "setup socket /run/x/m0.sock: Address already in use\nVDEV_BUS: vdev_probe(): failed "
           "to initialize net_memif0 device\nEAL: Bus (vdev) probe failed.\n")
    assert server.reason(log) == (
        "MEMIF: memif_socket_create(): Failed to setup socket /run/x/m0.sock: Address already "
        "in use; VDEV_BUS: vdev_probe(): failed to initialize net_memif0 device")
    assert server.reason("*** RPC thread has encountred error: 'unable to bind ZMQ server at: "
                         "tcp://*:4501'\nExiting...\n").startswith("*** RPC thread")
    assert server.reason("") == "no output"


def test_histogram_buckets_end_where_trex_starts_the_next():
    assert [stats.bucket_ceiling(f) for f in (0, 10, 90, 100, 900, 1000, 20000)] == \
        [10, 20, 100, 200, 1000, 2000, 30000]


def _pg(pg_id, rx, low, avg, high, histogram):
    return {"latency": {pg_id: {"latency": {"total_min": low, "average": avg,
                                            "total_max": high, "histogram": histogram}}},
            "flow_stats": {pg_id: {"rx_pkts": {"total": rx}}}}


def test_latency_merges_directions_weighted_by_samples():
    one, two = _pg(1, 100, 11, 20.0, 95, {10: 60, 20: 30, 90: 10}), \
        _pg(2, 300, 15, 40.0, 1500, {10: 100, 30: 100, 100: 99, 1000: 1})
    merged = {"latency": {**one["latency"], **two["latency"]},
              "flow_stats": {**one["flow_stats"], **two["flow_stats"]}}
    lat = stats.latency(merged, [1, 2])
    assert lat.samples == 400
    assert (lat.min_us, lat.max_us) == (11, 1500)
    assert lat.avg_us == (20.0 * 100 + 40.0 * 300) / 400
    # the bucket holding the maximum ends at it
    assert dict(lat.histogram) == {20.0: 160, 30.0: 30, 40.0: 100, 95.0: 10, 200.0: 99,
                                   1500.0: 1}
    assert lat.percentiles_us["p50"] == 40.0 and lat.percentiles_us["p99.9"] == 1500.0
    assert lat.min_us <= lat.percentiles_us["p50"] <= lat.max_us


def test_no_latency_without_samples():
    empty = _pg(1, 0, "N/A", "N/A", "N/A", {})
    assert stats.latency(empty, [1]) is None


class _Gen:
    tx_port_count = 2
    options = {"generator_tolerance_pct": 5}
    ports = [Interface("xe0"), Interface("xe1")]
    tx_ports = rx_ports = [0, 1]


def _counters(tx, rx):
    return {p: {"opackets": tx, "ipackets": rx, "obytes": 64 * tx, "ibytes": 64 * rx}
            for p in (0, 1)}


def test_the_offered_rate_is_the_frames_over_the_trial_when_trex_kept_its_schedule():
    trial = Trial(64, 200_000, 1.0)
    on_time = stats.trial_result(trial, _Gen(), _counters(100_000, 99_000), Pacing(1.0), None)
    assert not on_time.generator_limited and on_time.loss_pct == 1.0
    assert on_time.tx_rate_pps == 200_000 and on_time.elapsed_s == 1.0
    assert on_time.extra["xe0.OutPackets"] == 100_000 and on_time.extra["DropPercentage"] == 1.0
    lagged = stats.trial_result(trial, _Gen(), _counters(70_000, 70_000),
                                Pacing(1.4, lagged=True, note="TRex was still sending"), None)
    assert lagged.generator_limited and lagged.generator_note == "TRex was still sending"
    assert lagged.tx_rate_pps == 140_000 / 1.4 and lagged.elapsed_s == 1.4
    short = stats.trial_result(trial, _Gen(), _counters(90_000, 90_000), Pacing(1.0), None)
    assert short.generator_limited and short.tx_rate_pps == 180_000
    assert short.generator_note == "TRex sent 180,000 of the 200,000 frames asked"


def test_a_lossless_shortfall_over_memif_says_the_dut_may_have_held_trex_back():
    class OverMemif(_Gen):
        ports = [Interface("xe0", kind="memif"), Interface("xe1", kind="memif")]

    trial = Trial(64, 200_000, 1.0)
    pace = Pacing(1.4, lagged=True, note="TRex was still sending")
    held = stats.trial_result(trial, OverMemif(), _counters(70_000, 70_000), pace, None)
    assert held.generator_limited and held.generator_note.startswith(
        "TRex was still sending; over memif, which holds the sender back rather than drop,")
    assert "cannot be told apart" in held.generator_note
    lossy = stats.trial_result(trial, OverMemif(), _counters(70_000, 60_000), pace, None)
    assert lossy.generator_note == "TRex was still sending"  # the DUT dropped: not held back
    veth = stats.trial_result(trial, _Gen(), _counters(70_000, 70_000), pace, None)
    assert veth.generator_note == "TRex was still sending"


def test_loss_on_the_generators_own_receive_path_is_not_the_duts():
    from nsb.events import Verdict
    from nsb.traffic_profiles.judges import judge

    trial = Trial(64, 100_000, 1.0)
    missed_all = stats.trial_result(trial, _Gen(), _counters(50_000, 49_900), Pacing(1.0),
                                    None, missed_by_port={1: 200})
    assert missed_all.loss_pct > 0.01 and missed_all.dut_loss_pct == 0
    verdict, why = judge(missed_all, 0.01)
    assert verdict == Verdict.GENERATOR_LIMITED and "receive path dropped 200" in why
    missed_some = stats.trial_result(trial, _Gen(), _counters(50_000, 49_000), Pacing(1.0),
                                     None, missed_by_port={1: 200})
    assert judge(missed_some, 0.01)[0] == Verdict.FAIL  # 1,600 of the 2,000 were the DUT's
    assert judge(stats.trial_result(trial, _Gen(), _counters(50_000, 50_000), Pacing(1.0),
                                    None), 0.01)[0] == Verdict.PASS


def test_the_dry_run_of_nsbs_trex_task_on_a_pod_shows_config_and_streams(nsb_main):
    from tests.conftest import ROOT

    code, out, err = nsb_main("task", "start", "--dry-run",
                              str(ROOT / "samples" / "trex" / "tc_trex_testpmd_rfc2544.yaml"))
    assert code == 0, err
    plan = yaml.safe_load(out)
    tg = plan["scenarios"][0]["traffic_generator"]["tg__0"]
    assert tg["type"] == "TrexTrafficGenRFC"
    (cfg,) = yaml.safe_load(tg["trex_cfg.yaml"])
    assert cfg["interfaces"] == ["0000:18:00.0", "0000:18:00.1"]  # the pod's NICs by PCI
    assert cfg["port_info"][0] == {"src_mac": "3c:fd:fe:a0:00:00", "dest_mac": "3c:fd:fe:b0:00:00"}
    trex_path = os.environ["NSB_TREX_PATH"]  # tests/conftest.py: no TRex on this "pod"
    assert tg["command"].startswith(f"env -C {trex_path} ./t-rex-64 -i --cfg ")
    assert tg["ports"] == {0: "xe0 (pci)", 1: "xe1 (pci)"}
    profile = plan["scenarios"][0]["traffic_profile"]
    assert profile["type"] == "RFC2544Profile" and profile["frame_rate"] == 100
    assert set(profile["packets"]) == {"uplink_0", "downlink_0"}
    assert "16 flow(s)" in profile["packets"]["uplink_0"]


def test_a_trex_install_without_its_client_is_one_line(tmp_path):
    import pytest

    from nsb.errors import PrerequisiteError
    from nsb.vnfs.trex import install

    with pytest.raises(PrerequisiteError) as raised:
        install.load_stl_api(install.client_dir(str(tmp_path), None))
    message = str(raised.value)
    assert "\n" not in message
    assert f"TRex's Python client is not in {tmp_path}/automation/trex_control_plane/" \
           "interactive (no trex/stl/api.py)" in message
    assert "trex_client_lib" in message


def test_memif_links_share_a_socket_that_the_non_generator_end_serves(nsb_main, tmp_path):
    task = tmp_path / "t.yaml"
    task.write_text("""schema: "nsb:task:0.1"
context:
  type: netns
  nodes:
    tg: {role: TrafficGen, interfaces: {xe0: {type: memif}, xe1: {type: memif}}}
    sut: {role: Sut, interfaces: {xe0: {type: memif}, xe1: {type: veth}}}
  links: [[tg:xe0, sut:xe0], [sut:xe1, tg:xe1]]
scenarios:
  - vnfs: [{name: t0, type: testpmd, node: sut}]
    traffic_generator: {name: tg0, type: trex, node: tg}
    traffic_profile: {type: fixed, rate_pct: 1}
""")
    code, _, err = nsb_main("task", "validate", str(task))
    assert code == 2
    assert "links[1]: a memif interface links directly to another memif interface" in err
    task.write_text(task.read_text().replace("xe1: {type: veth}", "xe1: {type: memif}"))
    code, out, err = nsb_main("task", "start", "--dry-run", str(task))
    assert code == 0, err
    nodes = yaml.safe_load(out)["context"]["nodes"]
    for port in ("xe0", "xe1"):
        assert nodes["tg"]["interfaces"][port]["socket"] == \
            nodes["sut"]["interfaces"][port]["socket"]
    testpmd = yaml.safe_load(out)["scenarios"][0]["vnfs"]["t0"]["command"]
    assert "net_memif0,role=server" in testpmd and "net_memif1,role=server" in testpmd
    (cfg,) = yaml.safe_load(yaml.safe_load(out)["scenarios"][0]["traffic_generator"]["tg0"]
                            ["trex_cfg.yaml"])
    assert all("role=slave" in entry for entry in cfg["interfaces"])
