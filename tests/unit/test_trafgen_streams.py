"""trafgen's streams: a trafgen per direction of each port pair, at its share of the
trial's rate or of its pair's own, counted per port with the seconds it sent for."""

from __future__ import annotations

import pytest

from nsb.trial import Trial
from nsb.vnfs.trafgen_streams import Stream, pairs, port_counts, rates, with_probe

BOTH_WAYS = [Stream("xe0", "xe1", 0), Stream("xe1", "xe0", 0),
             Stream("xe2", "xe3", 1), Stream("xe3", "xe2", 1)]


def test_pairs_are_in_order_once_each():
    assert pairs(BOTH_WAYS) == [("xe0", "xe1"), ("xe2", "xe3")]


def test_a_trials_rate_is_shared_evenly_and_a_pairs_own_rate_between_its_directions():
    assert rates(BOTH_WAYS, Trial(64, 4000.0, 1.0)) == [1000.0] * 4
    own = Trial(64, 5000.0, 1.0, pair_rates_pps=(4000.0, 1000.0))
    assert rates(BOTH_WAYS, own) == pytest.approx([2000.0, 2000.0, 500.0, 500.0])


def test_each_port_counts_what_it_sent_and_got_and_how_long_it_sent():
    one_way = [Stream("xe0", "xe1", 0), Stream("xe2", "xe3", 1)]
    ports = port_counts(one_way, [100, 40], {"xe1": 99, "xe3": 40}, [1.0, 2.5])
    assert ports == {"xe0": {"tx_packets": 100, "rx_packets": 0, "tx_seconds": 1.0},
                     "xe1": {"tx_packets": 0, "rx_packets": 99},
                     "xe2": {"tx_packets": 40, "rx_packets": 0, "tx_seconds": 2.5},
                     "xe3": {"tx_packets": 0, "rx_packets": 40}}


def test_the_latency_probe_s_frames_count_at_the_ports_they_leave_and_arrive_by():
    """The probe sends beside trafgen by the same ports: the loss budget sees its
    frames on the wire, so the ports' counts carry them too."""
    one_way = [Stream("xe0", "xe1", 0)]
    ports = port_counts(one_way, [4_064], {"xe1": 4_000})
    probe = [{"tx_if": "xe0", "rx_if": "xe1", "sent": 4_972, "received": 4_970,
              "duplicates": 1},
             {"tx_if": "xe2", "rx_if": "xe3", "sent": 10, "received": 10}]
    assert with_probe(ports, probe) == {
        "xe0": {"tx_packets": 9_036, "rx_packets": 0},
        "xe1": {"tx_packets": 0, "rx_packets": 8_971},
        "xe2": {"tx_packets": 10, "rx_packets": 0},
        "xe3": {"tx_packets": 0, "rx_packets": 10}}
