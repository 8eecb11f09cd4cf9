"""Frames in flight at a soak's interval boundaries go to the interval that sent them:
the counts below are a 30 s soak of testpmd at 500 kpps read every 5 s in the lab
(nothing lost; 192 and 500 frames in flight, or read apart, at two boundaries)."""

from nsb.intervals import InFlight, IntervalSample

MEASURED = [(2514757, 2514565), (2485277, 2485469), (2501723, 2501723),
            (2482660, 2482160), (2460148, 2460648), (2555435, 2555435)]


def _settle(counts):
    emitted = []
    assign = InFlight(emitted.append)
    for index, (tx, rx) in enumerate(counts):
        assign.push(IntervalSample(index, 5.0 * index, 5.0 * (index + 1), tx, rx,
                                   last=index == len(counts) - 1))
        assert len(emitted) == index + (1 if index == len(counts) - 1 else 0)  # one late
    return emitted


def test_frames_in_flight_are_not_loss_of_the_interval_that_saw_them_leave():
    intervals = _settle(MEASURED)
    assert [i.lost_packets for i in intervals] == [0] * 6
    assert [i.carried_out for i in intervals] == [192, 0, 0, 500, 0, 0]
    assert [i.carried_in for i in intervals] == [0, 192, 0, 0, 500, 0]
    assert [(i.tx_packets, i.rx_packets) for i in intervals] == MEASURED  # as counted


def test_loss_stays_with_the_interval_that_lost_and_the_sum_is_the_trials():
    lossy = list(MEASURED)
    lossy[3] = (2482660, 2482160 - 700)  # 700 more frames of interval 3 never arrive
    intervals = _settle(lossy)
    assert [i.lost_packets for i in intervals] == [0, 0, 0, 700, 0, 0]
    assert sum(i.lost_packets for i in intervals) == sum(tx - rx for tx, rx in lossy)
    assert all(i.lost_packets >= 0 for i in intervals)


def test_a_soak_ended_early_settles_at_its_last_reading():
    intervals = _settle(MEASURED[:2] + [(100, 100)])
    assert [i.lost_packets for i in intervals] == [0, 0, 0]
