"""The pieces of a PROX trial that real PROX showed to matter: latency histogram
coverage, the reason PROX gives when it exits, the cores and TX queues a config
needs, and rates timed by PROX's snapshots."""

import pytest

from nsb.errors import TaskError
from nsb.nodes.platform import cpu_set
from nsb.vnfs.prox import config as prox_config
from nsb.vnfs.prox.latency import merge_histograms, percentiles
from nsb.vnfs.prox.log import exit_reason
from nsb.vnfs.prox.tg import Reading, _rates

HZ = 2_000_000_000


def test_percentiles_in_the_overflow_bucket_are_not_invented():
    buckets = [0] * 128
    buckets[3], buckets[127] = 90, 10  # 10 % beyond the histogram's range
    histogram, overflow = merge_histograms([(buckets, 11)], HZ, max_us=5000.0)
    assert overflow == 10 and histogram[-1] == (5000.0, 10)
    got = percentiles(histogram, 100, overflow)
    assert got == {"p50": pytest.approx(4 * 2048 / HZ * 1e6, abs=1e-3),
                   "p90": pytest.approx(4 * 2048 / HZ * 1e6, abs=1e-3)}  # no p99, p99.9


def test_no_histogram_edge_lies_beyond_the_maximum():
    buckets = [0] * 128
    buckets[0], buckets[2] = 5, 5
    histogram, overflow = merge_histograms([(buckets, 12)], HZ, max_us=5.0)
    width = 4096 / HZ * 1e6
    assert overflow == 0 and histogram == [(round(width, 3), 5), (5.0, 5)]
    assert percentiles(histogram, 10) == {"p50": round(width, 3), "p90": 5.0, "p99": 5.0,
                                          "p99.9": 5.0}


def test_latency_bucket_size_is_prox_key_and_set_when_absent():
    config = prox_config.ProxConfig.parse(
        "[port 0]\nname=p0\n[core 1]\nmode=lat\nrx port=p0\n"
        "[core 2]\nmode=lat\nrx port=p0\nlatency bucket size=9\n"
        "[core 3]\nmode=lat\nrx port=p0\nbucket size=20\n", "x.cfg")
    config.use_latency_bucket_size()
    sizes = [t.bucket_size for t in config.tasks()]
    assert sizes == [prox_config.DEFAULT_LATENCY_BUCKET_SIZE, 9,
                     prox_config.DEFAULT_LATENCY_BUCKET_SIZE]  # 'bucket size' is no PROX key
    assert "latency bucket size=12" in config.text()


PANIC_LOG = """\
EAL: Detected CPU lcores: 2
EAL: Physical addresses are unavailable, selecting IOVA as VA mode.
\t\trte_eth_dev_set_rx_queue_stats_mapping() failed: error -95
eth_rx_queue_setup(): net_af_packet0: 2016 bytes will not fit in mbuf (1528 bytes)
\t\t\trte_eth_rx_queue_setup() failed on port 0: error Cannot allocate memory (-12)
PANIC in init_port():
PANIC at ../prox_port_cfg.c:829, callstack:
0: /lib/x86_64-linux-gnu/librte_eal.so.23 (rte_dump_stack+0x3d) [7fc2467fa32d]
Aborting...
"""


@pytest.mark.parametrize("log, reason", [
    (PANIC_LOG, "rte_eth_rx_queue_setup() failed on port 0: error Cannot allocate memory (-12)"),
    ("EAL: Detected CPU lcores: 2\nEAL: lcore 2 unavailable\nEAL: FATAL: Invalid 'command "
     "line' arguments.\n  --socket-limit  Limit memory\nerror \tError in rte_eal_init()\n",
     "EAL: lcore 2 unavailable"),
    ("RING: Cannot reserve memory\nFailed to set up flow_id hash table for gen\n"
     "PANIC in init_task_gen():\n", "Failed to set up flow_id hash table for gen"),
    ("all fine\n", ""),
])
def test_the_line_that_says_why_prox_exited(log, reason):
    assert exit_reason(log) == reason


def test_lcores_a_config_names():
    config = prox_config.ProxConfig.parse(
        "[core 0]\nmode=master\n[core 1-3]\nmode=nop\n[core 5,7]\nmode=nop\n[core 9h]\n"
        "mode=nop\n", "x.cfg")
    # a hyper-thread sibling (9h) has no lcore number of its own to check
    assert config.lcores() == {0, 1, 2, 3, 5, 7} and config.master_lcore() == 0
    assert cpu_set("0-1") == {0, 1} and cpu_set("0-3,8,10-11") == {0, 1, 2, 3, 8, 10, 11}
    assert cpu_set("") == set()


def test_af_packet_ports_take_one_sending_task_each():
    two = ("[port 0]\nname=if0\n[port 1]\nname=if1\n[core 1]\nmode=routing\nrx port=if0\n"
           "tx port=if0,if1\n[core 2]\nmode=routing\nrx port=if1\ntx port=if0,if1\n")
    config = prox_config.ProxConfig.parse(two, "handle.cfg")
    with pytest.raises(TaskError, match=r"port if0 is already sent on by \[core 1\]"):
        config.use_af_packet({0: "xe0", 1: "xe1"}, "nsb-x")
    one = prox_config.ProxConfig.parse(
        "[port 0]\nname=if0\n[port 1]\nname=if1\n[core 1]\nmode=routing\nrx port=if0,if1\n"
        "tx port=if0,if1\n", "lab.cfg")
    one.use_af_packet({0: "xe0", 1: "xe1"}, "nsb-x")
    assert one.file_prefix() == "nsb-x"


def reading(tsc_s: float, tx: int, rx: int, lat_tsc_s: float | None = None) -> Reading:
    lat_tsc = int((tsc_s if lat_tsc_s is None else lat_tsc_s) * HZ)
    return Reading(hz=HZ, gen_counts=((tx, int(tsc_s * HZ)),), lat_counts=((rx, lat_tsc),))


def test_rates_come_from_snapshots_taken_while_sending():
    # the first snapshot seen may predate the reset (old counters): it is never used
    sending = [reading(0.0, 999_999, 999_999), reading(0.1, 1_000, 990),
               reading(0.6, 51_000, 50_990)]
    final = reading(1.2, 60_000, 60_000)
    assert _rates(sending, final, 1.05) == (pytest.approx(100_000), pytest.approx(100_000),
                                            "prox_tsc")
    # one snapshot while sending (PROX refreshing every second): count over the window
    assert _rates(sending[:2], final, 1.2) == (pytest.approx(50_000), pytest.approx(50_000),
                                               "wall_clock")


def test_a_refresh_between_two_queries_of_one_reading_does_not_skew_the_rate():
    # the gen task was read from a snapshot 0.1 s newer than the lat task's
    sending = [reading(0.0, 0, 0), reading(0.1, 10_000, 10_000),
               reading(0.4, 40_000, 30_000, lat_tsc_s=0.3)]
    tx, rx, how = _rates(sending, reading(1.0, 100_000, 100_000), 1.0)
    assert (tx, rx, how) == (pytest.approx(100_000), pytest.approx(100_000), "prox_tsc")


def test_a_reading_is_after_the_stop_only_when_every_task_snapshot_moved():
    after_stop = Reading(hz=HZ, gen_counts=((100, 20),), lat_counts=((90, 10),))
    only_lat_moved = Reading(hz=HZ, gen_counts=((100, 20),), lat_counts=((95, 30),))
    both_moved = Reading(hz=HZ, gen_counts=((120, 30),), lat_counts=((120, 30),))
    assert not only_lat_moved.newer_than(after_stop)  # its gen snapshot may predate the stop
    assert both_moved.newer_than(after_stop)


def test_a_snapshot_before_the_traffic_started_does_not_time_the_rate():
    # PROX refreshed its snapshot between 'reset stats' and the speed change
    sending = [reading(0.0, 999, 999), reading(0.05, 0, 0), reading(0.15, 10_000, 10_000),
               reading(0.45, 40_000, 40_000)]
    tx, rx, how = _rates(sending, reading(1.0, 100_000, 100_000), 1.0)
    assert (tx, rx, how) == (pytest.approx(100_000), pytest.approx(100_000), "prox_tsc")
