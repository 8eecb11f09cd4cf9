"""Reset time from timelines of known outages: a DUT that forwards at the rate, stops
for a known time (keeping some frames queued, which it forwards when it continues)."""

import pytest

from nsb.intervals import InFlight, IntervalSample
from nsb.traffic_profiles.reset_timeline import analyse, spread

RATE = 10_000.0


def timeline(stop_s: float, go_s: float, queued: int = 0, duration_s: float = 5.0,
             step_s: float = 0.1, never_back: bool = False) -> list[IntervalSample]:
    """What a generator reading every ``step_s`` sees of a DUT that forwards nothing
    from ``stop_s`` to ``go_s`` but ``queued`` frames it forwards at ``go_s``."""
    samples: list[IntervalSample] = []
    assigned = InFlight(samples.append)
    steps = round(duration_s / step_s)
    for i in range(steps):
        start, end = i * step_s, (i + 1) * step_s
        tx = round(RATE * step_s)
        down = max(0.0, min(end, go_s if not never_back else end) - max(start, stop_s))
        rx = round(RATE * (step_s - down))
        if start <= go_s < end and not never_back:
            rx += queued
        assigned.push(IntervalSample(i, start, end, tx, rx, last=i == steps - 1))
    return samples


@pytest.mark.parametrize("stop_s,pause_s", [(2.0, 0.5), (2.03, 0.5), (2.07, 0.25),
                                            (1.01, 1.33), (2.0, 0.05)])
def test_a_pause_is_found_within_two_readings_by_every_method(stop_s, pause_s):
    found = analyse(timeline(stop_s, stop_s + pause_s), stop_s, stop_s + pause_s, RATE)
    assert found.lost_before == 0 and found.offered_pps == pytest.approx(RATE)
    assert found.frame_loss_s == pytest.approx(pause_s, abs=1e-3)  # nothing queued
    assert found.timestamp_s == pytest.approx(pause_s, abs=0.2)
    assert found.recovered and 0 <= found.full_rate_back_s - pause_s <= 0.2


def test_frames_queued_through_the_pause_shorten_the_frame_loss_method_only():
    queued = 1_500  # 0.15 s at the rate
    found = analyse(timeline(2.0, 2.5, queued), 2.0, 2.5, RATE)
    assert found.frame_loss_s == pytest.approx(0.5 - 0.15, abs=1e-3)
    assert found.timestamp_s == pytest.approx(0.5, abs=0.2)
    assert found.lost_packets == round(RATE * 0.5) - queued


def test_a_dut_that_never_comes_back_is_not_recovered():
    found = analyse(timeline(2.0, 99, never_back=True), 2.0, 2.5, RATE)
    assert not found.recovered and found.full_rate_back_s is None
    assert found.timestamp_s is None  # nothing forwarded after the event


def test_loss_before_the_event_is_counted_apart():
    samples = timeline(2.0, 2.5)
    samples[3] = IntervalSample(3, 0.3, 0.4, 1000, 900)
    found = analyse(samples, 2.0, 2.5, RATE)
    assert found.lost_before == 100
    assert found.frame_loss_s == pytest.approx(0.5, abs=1e-3)  # the event's own loss


def counted_late(samples: list[IntervalSample], at: int, frames: int,
                 readings: int) -> list[IntervalSample]:
    """``samples`` (raw readings) with ``frames`` received at reading ``at`` counted
    ``readings`` readings late, as TRex's receive counter was seen, settled by InFlight."""
    raw = list(samples)
    for k, shift in ((at, -frames), (at + readings, frames)):
        raw[k] = IntervalSample(k, raw[k].start_s, raw[k].end_s, raw[k].tx_packets,
                                raw[k].rx_packets + shift, last=raw[k].last)
    settled: list[IntervalSample] = []
    assigned = InFlight(settled.append)
    for sample in raw:
        assigned.push(sample)
    return settled


@pytest.mark.parametrize("readings", [1, 2, 5])
def test_frames_counted_late_are_not_lost_before_the_event(readings):
    """20 frames received at 0.7 s counted 1, 2 or 5 readings later: 40 of 28,680
    frames 'lost before the event' failed a lab trial that lost none."""
    raw = [IntervalSample(k, k * 0.1, (k + 1) * 0.1, 1000, 1000, last=k == 49)
           for k in range(50)]
    found = analyse(counted_late(raw, 7, 20, readings), 2.0, 2.5, RATE)
    assert (found.lost_before, found.lost_packets) == (0, 0)
    lossy = counted_late(timeline(2.0, 2.5), 7, 20, readings)
    lossy[3] = IntervalSample(3, 0.3, 0.4, 1000, 990)  # and 10 lost for good
    assert analyse(lossy, 2.0, 2.5, RATE).lost_before == 10


def test_frames_in_flight_after_the_outage_are_no_loss():
    """vFW restarted: after it, 20 to 140 frames were in flight at each reading (its
    pipeline's queues, TRex counting late), more than before the event; it was back
    when it lost no more, not when the frames in flight happened to be few."""
    raw = []
    for k in range(60):
        start, end = k * 0.1, (k + 1) * 0.1
        rx = 0 if 20 <= k < 25 else 1000  # nothing forwarded from 2.0 to 2.5 s
        if k >= 25 and k < 59:
            rx += (-120 if k % 2 else 120) if k > 25 else -120
        raw.append(IntervalSample(k, start, end, 1000, rx, last=k == 59))
    found = analyse(raw, 2.0, 2.5, RATE)
    assert found.lost_packets == 5000
    assert found.full_rate_back_s == pytest.approx(0.5)  # its last reading that lost


def test_spread_of_trials():
    assert spread([0.5, 0.7]) == pytest.approx(
        {"mean": 0.6, "stdev": 0.1414, "min": 0.5, "max": 0.7, "trials": 2}, abs=1e-3)
    assert spread([]) == {}


def test_loss_in_the_warm_up_is_neither_the_event_s_nor_held_against_the_rate():
    samples = timeline(2.0, 2.5)
    samples[1] = IntervalSample(1, 0.1, 0.2, 1000, 890)  # a switch learning its flows
    found = analyse(samples, 2.0, 2.5, RATE, warmup_s=0.5)
    assert (found.lost_warmup, found.lost_before) == (110, 0)
    assert found.frame_loss_s == pytest.approx(0.5, abs=1e-3)
    assert analyse(samples, 2.0, 2.5, RATE).lost_before == 110  # without a warm-up


def test_a_dut_back_at_half_rate_first_is_back_when_every_frame_arrives():
    samples: list[IntervalSample] = []
    assigned = InFlight(samples.append)
    for i in range(50):  # stopped 2.0-2.5 s, then half its frames until 3.5 s
        start, end = i * 0.1, (i + 1) * 0.1
        rx = 0 if 2.0 <= start < 2.5 else 500 if 2.5 <= start < 3.5 else 1000
        assigned.push(IntervalSample(i, start, end, 1000, rx, last=i == 49))
    found = analyse(samples, 2.0, 2.5, RATE)
    assert found.frame_loss_s == pytest.approx(1.0, abs=1e-3)  # 10,000 frames at 10k/s
    assert found.full_rate_back_s == pytest.approx(1.5, abs=0.11)


def test_a_restart_signals_every_process_then_starts_the_vnf_again_as_at_setup():
    import signal
    from types import SimpleNamespace

    from nsb.vnfs.base import Vnf

    class Process:
        def __init__(self):
            self.signals, self.done = [], None

        def signal(self, sig):
            self.signals.append(sig)
            self.done = -sig

        def poll(self):
            return self.done

    class Dut(Vnf):
        def __init__(self):
            self.name, self.calls, self.running = "dut0", [], [Process(), Process()]
            self.run = SimpleNamespace(vnf_start_timeout_s=7.0)

        def processes(self):
            return self.running

        def terminate(self):
            self.calls.append("terminate")

        def instantiate(self):
            self.calls.append("instantiate")

        def wait_until_ready(self, timeout):
            self.calls.append(f"ready within {timeout:g}")

    dut = Dut()
    old = list(dut.running)
    dut.perform_event({"type": "restart", "signal": "KILL"})
    assert [p.signals for p in old] == [[signal.SIGKILL]] * 2
    assert dut.calls == ["terminate", "instantiate", "ready within 7"]


def test_a_link_flap_sets_the_interface_down_then_up_and_a_foreign_one_is_refused():
    from types import SimpleNamespace

    from nsb import vnf_events
    from nsb.vnfs.base import Vnf

    ran = []

    class Dut(Vnf):
        def __init__(self):
            self.name = "dut0"
            self.spec = SimpleNamespace(type="testpmd")
            self.node = SimpleNamespace(interfaces={
                "xe0": SimpleNamespace(name="xe0", peer="tg:xe0"),
                "lo9": SimpleNamespace(name="lo9", peer=None)},
                executor=SimpleNamespace(run=lambda argv, **_: ran.append(argv)))

        def instantiate(self):
            pass

        def wait_until_ready(self, timeout):
            pass

        def terminate(self):
            pass

    dut = Dut()
    dut.perform_event({"type": "link_flap", "down_ms": 1})
    assert ran == [["ip", "link", "set", "dev", "xe0", "down"],
                   ["ip", "link", "set", "dev", "xe0", "up"]]
    where = SimpleNamespace(error=lambda text, *key: text)
    profile = SimpleNamespace(options={"event": {"type": "link_flap", "interface": "lo9"}},
                              spec=SimpleNamespace(options_where=where))
    (error,) = vnf_events.problems(None, [dut], profile)
    assert "lo9" in error and "xe0" in error


def test_an_event_that_outlasts_the_trial_says_so_not_not_recovered():
    """vFW takes 10 s to start here: a restart in a 6 s trial ended after the traffic.
    That is no DUT's failure to recover but a trial too short, in one reason; a restart
    longer than recovery_limit_s within the trial says to raise it."""
    from nsb.traffic_profiles.reset_time import _judged
    from nsb.trial import Trial, TrialResult
    from nsb.vnf_events import Happened

    options = {"warmup_s": 0.5, "tolerated_loss_pct": 0.1, "recovery_limit_s": 3}
    long_trial = Trial(frame_size=64, rate_pps=RATE, duration_s=5.0)
    result = TrialResult(trial=long_trial, tx_packets=50000, rx_packets=20000, elapsed_s=5.0)
    verdict, why, found = _judged(result, timeline(2.0, 99, never_back=True),
                                  Happened("restart", "vfw0", 2.0, 12.6), options)
    assert (verdict, found) == ("fail", []), why
    assert "past the trial's end" in why and "10.600 s" in why
    samples, limited = timeline(2.0, 4.0, duration_s=5.0), {**options, "recovery_limit_s": 1.5}
    _, why, _ = _judged(result, samples, Happened("restart", "vfw0", 2.0, 4.0), limited)
    assert "not recovered" in why
    assert "the event itself lasted 2.000 s: raise recovery_limit_s" in why
    _, why, _ = _judged(result, samples, Happened("pause", "vfw0", 2.0, 2.2), limited)
    assert "not recovered" in why and "raise" not in why  # the DUT's own slowness
