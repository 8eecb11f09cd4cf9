import pytest

from nsb.trial import PERCENTILES
from nsb.vnfs import latency_probe, trafgen_config


def test_packet_config_single_flow_sizes_the_frame():
    text = trafgen_config.packet_config(64, "02:00:00:00:00:01", "02:00:00:00:00:02",
                                        "10.0.1.1", "10.0.2.2")
    assert "fill(0x00, 18)" in text  # 64 - 4 FCS - 42 headers
    assert "sa=10.0.1.1" in text and "da=10.0.2.2" in text and "dinc" not in text


def test_packet_config_flows_vary_source_ip_and_port_together():
    text = trafgen_config.packet_config(1518, "02:00:00:00:00:01", "02:00:00:00:00:02",
                                        "10.0.1.1", "10.0.2.2", flows=1000)
    assert "sa[2:2]=dinc(257, 1256)" in text
    assert "sp=dinc(1024, 2023)" in text
    assert "fill(0x00, 1472)" in text


@pytest.mark.parametrize("frame,flows", [(60, 1), (64, 0), (64, 70000)])
def test_packet_config_rejects_bad_input(frame, flows):
    with pytest.raises(ValueError):
        trafgen_config.packet_config(frame, "02:00:00:00:00:01", "02:00:00:00:00:02",
                                     "10.0.1.1", "10.0.2.2", flows=flows)


def test_probe_frame_round_trips_stream_and_sequence():
    frame = latency_probe.build_frame("02:00:00:00:00:01", "02:00:00:00:00:02", "10.0.0.1",
                                      "10.0.0.2", 128, 3, 77)
    assert len(frame) == 124
    assert latency_probe.parse_probe(frame) == (3, 77)
    assert latency_probe._checksum(frame[14:34]) == 0  # valid IPv4 header checksum


def test_probe_summary_percentiles_are_ordered():
    latencies_ns = [1000 * v for v in range(1, 1001)]
    summary = latency_probe.summarize(latencies_ns, PERCENTILES)
    p = summary["percentiles_us"]
    assert summary["min_us"] == 1 and summary["max_us"] == 1000
    assert summary["avg_us"] == pytest.approx(500.5)
    assert (p["p50"], p["p90"], p["p99"], p["p99.9"]) == (500, 900, 990, 999)
    assert sum(count for _, count in summary["histogram"]) == 1000
