"""Frame mixes (IMIX): how weights and RFC 6985 genomes become the frames sent."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from nsb import frames, units
from nsb.report import summary
from nsb.report.loading import TaskResults


def test_weights_are_spread_evenly_over_one_cycle():
    mix = frames.from_weights(frames.SIMPLE_IMIX)
    assert Counter(mix.sequence) == {64: 7, 594: 4, 1518: 1}
    assert mix.avg_size == pytest.approx((7 * 64 + 4 * 594 + 1518) / 12)
    # never more than two large frames in a row: a short trial keeps the proportions
    half = Counter(mix.sequence[:6])
    assert half[64] in (3, 4) and half[594] == 2
    assert frames.from_weights({"1518": 1, "64": 3}).sequence.count(64) == 3  # text keys


def test_a_genome_is_sent_in_the_order_written():
    mix = frames.from_genome("aaag")
    assert mix.sequence == (64, 64, 64, 1518)
    assert frames.parse_mix("abcdefghi").sequence == (64, 128, 256, 512, 1024, 1280, 1518,
                                                      2112, 9000)


@pytest.mark.parametrize("value, message", [
    ({"32": 1}, "frame size 32 is outside 64-9216"),
    ({"64": 0}, "the weight of 64 must be a whole number of at least 1"),
    ({"64": 100, "128": 29}, "the weights add up to 129; at most 128 frames make one cycle"),
    ({}, "a mix needs at least one frame size"),
    ("aaz", "genome letters z are not known"),
    (12, "expected weights by frame size or an RFC 6985 genome"),
])
def test_a_bad_mix_says_what_is_wrong(value, message):
    with pytest.raises(ValueError, match=message):
        frames.parse_mix(value)


def test_rates_of_a_mix_use_its_mean_size():
    mix = frames.from_weights({64: 1, 1518: 1})  # mean 791 B
    assert units.line_rate_pps(mix, 10) == pytest.approx(10e9 / 8 / (791 + 20))
    assert units.pps_to_mbps(1000, mix) == pytest.approx(811 * 8 * 1000 / 1e6)


def test_results_sort_sizes_before_mixes_and_show_both():
    assert sorted(["IMIX", 1518, 64], key=frames.sort_key) == [64, 1518, "IMIX"]
    assert [frames.shown(v) for v in (64, "IMIX")] == ["64 B", "IMIX"]
    rows = [{"scenario": "s", "frame_size": size, "throughput_pps": 1.0,
             "throughput_mbps": 1.0, "line_rate_pct": 1.0} for size in ("IMIX", 1518, 64)]
    task = TaskResults(Path("t"), {"id": "t"}, results=rows)
    assert list(summary.mean_by_frame(task, "s")) == [64, 1518, "IMIX"]
