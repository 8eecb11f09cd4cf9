"""Latency from TRex's HDR histograms (``--hdrh``): readings recorded from TRex 3.08 in the
lab (tests/data/trex_pgid_readings.json: a 3 s trial at 400 kpps through testpmd, the
latency streams' pg_id statistics read at 1 s, 2 s and after the end) checked against
hdrhistogram's own decoding, and a soak's intervals counted from their differences."""

import json
from types import SimpleNamespace

import pytest
from hdrh.histogram import HdrHistogram

from nsb import hdr_latency
from nsb.trial import PERCENTILES
from nsb.vnfs.trex import stats
from nsb.vnfs.trex.sampled import Readings
from tests.conftest import ROOT

DATA = json.loads((ROOT / "tests" / "data" / "trex_pgid_readings.json").read_text())
PG_IDS = DATA["pg_ids"]


def _reading(index: int) -> dict:
    """As TRex's client returns it: pg_ids as int keys."""
    raw = DATA["readings"][index]
    return {part: {int(pg): v for pg, v in raw[part].items()} for part in raw}


def _decoded(reading: dict) -> HdrHistogram:
    total = HdrHistogram(1, 10_000_000, 3)
    for pg in PG_IDS:
        total.decode_and_add(reading["latency"][pg]["latency"]["hdrh"])
    return total


def test_percentiles_and_mean_are_the_hdr_histograms_not_trexs_buckets():
    final = _reading(2)
    lat = stats.latency(final, PG_IDS)
    truth = _decoded(final)
    assert lat.samples == truth.get_total_count() == 6000
    for p in PERCENTILES:
        assert lat.percentiles_us[f"p{p:g}"] == truth.get_value_at_percentile(p)
    assert lat.avg_us == pytest.approx(truth.get_mean_value())
    # TRex's own "average" is not the samples' mean (343/328 us here, the mean ~351 us)
    trex_avgs = [final["latency"][pg]["latency"]["average"] for pg in PG_IDS]
    assert all(abs(a - lat.avg_us) > 5 for a in trex_avgs)
    # exact minimum; the maximum is a sample among TRex's first ten, which its
    # total_max leaves out and the HDR histogram keeps
    assert lat.min_us == min(final["latency"][pg]["latency"]["total_min"] for pg in PG_IDS)
    assert lat.max_us > max(final["latency"][pg]["latency"]["total_max"] for pg in PG_IDS)
    assert lat.max_us == truth.get_max_value()
    assert lat.min_us <= lat.percentiles_us["p50"] <= lat.percentiles_us["p99.9"] <= lat.max_us
    assert "3 significant digits" in lat.resolution
    assert sum(count for _, count in lat.histogram) == lat.samples
    assert HdrHistogram.decode(lat.hdrh).get_total_count() == 6000


def test_soak_intervals_count_each_sample_once():
    gen = SimpleNamespace(tx_ports=[0, 1], rx_ports=[0, 1])
    readings = Readings(gen, PG_IDS)
    ports = {0: {"opackets": 0, "ipackets": 0}, 1: {"opackets": 0, "ipackets": 0}}
    intervals = [readings.take(ports, _reading(i), float(i + 1)).latency for i in range(3)]
    final = _decoded(_reading(2))
    assert sum(i.samples for i in intervals) == final.get_total_count()
    received = [sum(_reading(i)["flow_stats"][pg]["rx_pkts"]["total"] for pg in PG_IDS)
                for i in range(3)]
    assert [i.samples for i in intervals] == [received[0], received[1] - received[0],
                                              received[2] - received[1]]
    for interval in intervals:
        assert interval.min_us <= interval.avg_us <= interval.max_us
        assert interval.percentiles_us["p50"] <= interval.max_us
    # the all-time maximum fell in the first interval: later ones do not repeat it
    assert intervals[0].max_us == final.get_max_value()
    assert all(i.max_us < intervals[0].max_us for i in intervals[1:])
    merged = hdr_latency.merged(HdrHistogram.decode(i.hdrh) for i in intervals)
    assert merged.get_total_count() == final.get_total_count()
    assert merged.get_value_at_percentile(99) == final.get_value_at_percentile(99)


def test_without_hdr_histograms_trexs_buckets_are_used_and_said_to_be():
    final = _reading(2)
    for pg in PG_IDS:
        del final["latency"][pg]["latency"]["hdrh"]
    lat = stats.latency(final, PG_IDS)
    assert lat.samples == 6000 and "bucket" in lat.resolution and not lat.hdrh
