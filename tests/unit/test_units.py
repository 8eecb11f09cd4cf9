import pytest

from nsb import units


def test_line_rate_of_10g_at_64_bytes_is_14_88_mpps():
    assert units.line_rate_pps(64, 10) == pytest.approx(14_880_952.38, rel=1e-9)


def test_line_rate_scales_with_ports_and_frame_size():
    assert units.line_rate_pps(1518, 25, ports=2) == pytest.approx(2 * 25e9 / 8 / 1538)


def test_mbps_counts_preamble_and_gap():
    # the HPE/Intel report: (frame + 20) * 8 * pps
    assert units.pps_to_mbps(1_000_000, 64) == pytest.approx(672.0)


def test_pct_and_pps_round_trip():
    pps = units.pct_to_pps(37.5, 512, 25, ports=2)
    assert units.pps_to_pct(pps, 512, 25, ports=2) == pytest.approx(37.5)
