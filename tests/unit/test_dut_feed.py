"""The DUT's counters read during a trial (nsb.dut_feed): the feed program run for real
on this machine (its command mode over a counter file, its telemetry mode over a socket
speaking DPDK telemetry's protocol), and the timeline built from readings of known
truth: unanswered readings, a restart, an outage."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from nsb import dut_feed
from nsb.dut_feed import CounterFeed, DutWatch, Reading
from nsb.executors.local import LocalExecutor
from nsb.port_counts import PortCount
from nsb.traffic_profiles.reset_timeline import dut_view


def _counts(reply) -> dict[str, PortCount]:
    rx, tx = (int(v) for v in reply.split())
    return {"p0": PortCount(rx=rx, tx=0), "p1": PortCount(rx=0, tx=tx)}


def test_the_feed_reads_until_told_to_stop_and_its_output_is_whole(tmp_path):
    counter = tmp_path / "counter"
    counter.write_text("0 0\n")
    feed = CounterFeed("command", ["cat", str(counter)], _counts)
    watch = DutWatch([("dut0", LocalExecutor(), feed)], 0.05)
    with watch:
        started = time.monotonic()  # the first reading is in before this
        for value in range(1, 6):
            time.sleep(0.06)
            counter.write_text(f"{value * 100} {value * 90}\n")
        time.sleep(0.1)
    (found,) = watch.found.values()
    assert found[0].counts["p0"].rx == 0 and found[-1].counts["p0"].rx == 500
    assert all(r.error == "" for r in found)
    timeline = watch.timelines(started)["dut0"]
    assert timeline[0].start_s < 0  # the reading before the traffic
    # the timeline adds up to the counters' own totals, reading by reading (how many
    # readings a loaded machine lets it take is its own: the first and the last at least)
    assert sum(s.tx_packets for s in timeline) == 500
    assert sum(s.rx_packets for s in timeline) == 450
    gaps = [b.start_s - a.end_s for a, b in zip(timeline, timeline[1:], strict=False)]
    assert all(abs(g) < 1e-9 for g in gaps)


def test_a_reading_it_cannot_take_says_why_and_the_feed_goes_on(tmp_path):
    counter = tmp_path / "counter"
    feed = CounterFeed("command", ["cat", str(counter)], _counts)
    watch = DutWatch([("dut0", LocalExecutor(), feed)], 0.05)
    with watch:
        time.sleep(0.15)
        counter.write_text("7 7\n")
        time.sleep(0.15)
    (found,) = watch.found.values()
    assert found[0].counts is None and "status 1" in found[0].error
    assert found[-1].counts["p0"].rx == 7


def _telemetry_server(path: str, replies: list[dict], stop: threading.Event) -> None:
    """DPDK telemetry's protocol (v2): a greeting with max_output_len, then one JSON
    reply per command, keyed by the command without its parameter."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server.bind(path)
    server.listen(1)
    server.settimeout(5)
    conn, _ = server.accept()
    conn.send(json.dumps({"version": "DPDK 22.11.0", "pid": 1,
                          "max_output_len": 16384}).encode())
    conn.settimeout(0.2)
    served = 0
    while not stop.is_set():
        try:
            command = conn.recv(1024).decode()
        except TimeoutError:
            continue
        if not command:
            break
        stats = replies[min(served, len(replies) - 1)]
        served += 1
        conn.send(json.dumps({command.split(",")[0]: stats}).encode())
    conn.close()
    server.close()


def test_the_telemetry_feed_holds_one_connection(tmp_path):
    path = str(tmp_path / "dpdk_telemetry.v2")
    replies = [{"ipackets": n * 10, "opackets": n * 10, "imissed": 0} for n in range(100)]
    stop = threading.Event()
    server = threading.Thread(target=_telemetry_server, args=(path, replies, stop))
    server.start()
    time.sleep(0.1)

    def counts(reply):
        stats = reply["/ethdev/stats,0"]
        return {"p0": PortCount(rx=stats["ipackets"], tx=stats["opackets"])}

    feed = CounterFeed("telemetry", [path, "/ethdev/stats,0"], counts)
    watch = DutWatch([("testpmd0", LocalExecutor(), feed)], 0.05)
    try:
        with watch:
            time.sleep(0.3)
    finally:
        stop.set()
        server.join()
    (found,) = watch.found.values()
    # one connection: the server answered every reading in turn, from its first reply
    assert [r.counts["p0"].rx for r in found] == [n * 10 for n in range(len(found))]
    assert len(found) >= 2  # the first reading and the last


def _reading(at: float, rx: int | None, tx: int | None = None) -> Reading:
    if rx is None:
        return Reading(at, None, "timed out")
    return Reading(at, {"p0": PortCount(rx=rx, tx=0), "p1": PortCount(rx=0, tx=tx)})


def test_an_unanswered_reading_adds_its_time_to_the_next():
    found = [_reading(10.0, 0, 0), _reading(10.1, 100, 100), _reading(10.2, None),
             _reading(10.45, 350, 200), _reading(10.55, 450, 300)]
    timeline = dut_feed.intervals(found, started_at=10.0)
    assert [(round(s.start_s, 2), round(s.end_s, 2)) for s in timeline] == [
        (0.0, 0.1), (0.1, 0.45), (0.45, 0.55)]
    assert [s.tx_packets for s in timeline] == [100, 250, 100]
    assert [s.rx_packets for s in timeline] == [100, 100, 100]


def test_a_restarted_dut_counts_again_from_zero():
    found = [_reading(0.0, 1000, 1000), _reading(0.1, 1100, 1100), _reading(0.2, None),
             _reading(0.3, 40, 30), _reading(0.4, 140, 130)]
    timeline = dut_feed.intervals(found, started_at=0.0)
    assert [s.tx_packets for s in timeline] == [100, 40, 100]
    assert [s.rx_packets for s in timeline] == [100, 30, 100]


def _steady_dut(pps: float, step: float, silent: tuple[float, float], end: float,
                answers_while_silent: bool) -> list[Reading]:
    """Readings of a DUT sending ``pps`` that sends nothing within ``silent``; stopped,
    it answers no reading then (its reading comes when it runs again)."""
    def sent(t: float) -> int:
        done = min(t, silent[0]) + max(0.0, t - silent[1])
        return round(pps * done)

    found, t = [], 0.0
    while t <= end + 1e-9:
        at = t
        if not answers_while_silent and silent[0] < t < silent[1]:
            at = silent[1] + 0.001
        if not found or at > found[-1].at:
            found.append(Reading(at, {"p1": PortCount(rx=0, tx=sent(at)),
                                      "p0": PortCount(rx=sent(at), tx=0)}))
        t += step
    return found


@pytest.mark.parametrize("answers", [True, False])
@pytest.mark.parametrize("silent,event_s", [((2.03, 2.43), 2.03), ((2.0, 3.0), 2.0),
                                            ((1.97, 2.12), 1.97),
                                            # a pause sent over SSH reaches the DUT late
                                            ((2.21, 2.81), 2.0)])
def test_the_dut_s_own_silence_is_the_outage(silent, event_s, answers):
    step = 0.05
    found = _steady_dut(10000, step, silent, 4.0, answers)
    view = dut_view(dut_feed.intervals(found, started_at=0.0), event_start_s=event_s,
                    duration_s=4.0, warmup_s=0.5)
    assert view["silent_s"] == pytest.approx(silent[1] - silent[0], abs=0.01)
    assert view["sent"] == found[-1].counts["p1"].tx - found[0].counts["p1"].tx
    assert view["sent_pps_before_event"] == pytest.approx(10000, rel=0.01)
    assert sum(r[2] for r in view["readings"]) == view["sent"]


def test_the_report_draws_each_dut_s_own_rate():
    import plotly.graph_objects as go

    from nsb.report.event_timeline import add_duts
    fig = go.Figure()
    add_duts(fig, {"testpmd0": {"readings": [[-0.05, 0, 0], [0.05, 100, 100],
                                             [0.45, 0, 0], [0.55, 100, 100]]}})
    (trace,) = fig.data
    assert "testpmd0" in trace.name
    assert list(trace.y) == pytest.approx([1000, 0, 1000])
    assert list(trace.x) == pytest.approx([0.0, 0.25, 0.5])


def test_the_kernel_s_counters_are_read_by_their_port_names():
    """The kernel feed (routers, nftables, a Linux bridge) over this machine's loopback:
    one 'ip -s -j link' a reading, the device's counters under the port's name."""
    from nsb.nodes import link_counters

    watch = DutWatch([("fw0", LocalExecutor(), link_counters.feed({"xe0": "lo"}))], 0.05)
    with watch:
        time.sleep(0.2)
    (found,) = watch.found.values()
    assert len(found) >= 2 and all(r.error == "" for r in found)
    assert set(found[0].counts) == {"xe0"} and found[0].counts["xe0"].rx is not None


def test_a_reading_slower_than_the_interval_does_not_end_the_feed(tmp_path):
    """A DUT stopped while read answers late: the feed reads on after it (the next
    reading is due at once), to the end of the trial."""
    counter = tmp_path / "counter"
    counter.write_text("1 1\n")
    feed = CounterFeed("command", ["sh", "-c", f"sleep 0.12; cat {counter}"], _counts)
    watch = DutWatch([("dut0", LocalExecutor(), feed)], 0.05)
    with watch:
        time.sleep(0.6)
        counter.write_text("2 2\n")
        time.sleep(0.3)
    (found,) = watch.found.values()
    # the feed read on after its slow readings: its last reading saw the new count
    assert found[-1].counts["p0"].rx == 2 and all(r.error == "" for r in found)
