"""What every answer in a results file must satisfy, whatever this machine's load made
of the run: its rate was measured by a loss-free trial it names, its verdict agrees with
the trials around it, and its confirmation either reached its rate or says it did not.
These hold in every run; the verdict itself (dut or generator) may not.
"""

import pytest

TOLERATED_LOSS_PCT = 0.01  # as in the lab samples


def check_consistent(doc, speed_gbps=1.0):
    assert doc["task"]["status"] == "ok", doc["task"]["error"]
    assert doc["results"], "no results"
    for trial in doc["trials"]:
        assert 0 <= trial["rx_packets"] <= trial["tx_packets"], trial
        latency = trial["latency"]
        if latency:
            assert (latency["min_us"] <= latency["p50_us"] <= latency["p90_us"]
                    <= latency["p99_us"] <= latency["p99_9_us"] <= latency["max_us"])
    for result in doc["results"]:
        frame = result["frame_size"]
        trials = [t for t in doc["trials"] if t["frame_size"] == frame]
        assert result["throughput_pps"] > 0, result
        assert result["loss_pct"] <= TOLERATED_LOSS_PCT
        # a generator-limited search reports the highest loss-free rate it measured, and
        # so does one whose loss pinned the DUT's limit just above a lag
        backing = ("pass", "generator_limited") if result["limited_by"] in ("generator", "dut") \
            else ("pass",)
        best = [t for t in trials if t["trial_index"] == result["evidence"]["trial_index"]]
        assert best and best[0]["verdict"] in backing, \
            "the reported rate was not measured by a loss-free trial"
        assert best[0]["tx_rate_pps"] == pytest.approx(result["throughput_pps"])
        assert best[0]["loss_pct"] <= TOLERATED_LOSS_PCT
        check_confirmation(result, trials)
        if result["limited_by"] == "generator":
            assert result["limited_reason"]
            short = [t["tx_rate_pps"] for t in trials if t["verdict"] == "generator_limited"]
            assert result["throughput_pps"] >= max(short) * (1 - 1e-9)
        if result["limited_by"] != "upper_bound":
            # above the answer's rate: the confirmation at that rate has it again as % of
            # line rate from pps (0.78125 comes back 0.7812500000000001)
            answer_pct = best[0]["requested_rate_pct"] * (1 + 1e-9)
            above = [t for t in trials if t["requested_rate_pct"] > answer_pct]
            # a trial that passed above the answer was overruled by a confirmation (with
            # latency, or a repeat) that lost frames at its rate or below it
            lossy = [t["requested_rate_pct"] for t in above if t["verdict"] == "fail"
                     and t["reason"].startswith("confirmation")]
            overruled = [t for t in above if t["verdict"] == "pass"]
            assert all(lossy and t["requested_rate_pct"] >= min(lossy) * (1 - 1e-9)
                       for t in overruled), [(t["trial_index"], t["requested_rate_pct"],
                                              t["reason"]) for t in overruled]
            if result["limited_by"] == "dut":  # a lossy trial asked above the answer, or,
                # when the generator lagged where the DUT lost (binsearch's pinned limit:
                # a noisy DUT may lose a little below a clean trial), one it sent
                assert any(t["verdict"] == "fail" for t in above) or any(
                    t["verdict"] == "fail" for t in trials) and any(
                    t["verdict"] == "generator_limited" for t in trials)
            else:  # the generator fell short above the answer, or at it
                assert any(t["verdict"] == "generator_limited" for t in above + best[:1])
        lat = result["latency"]
        assert lat and lat["samples"] > 0
        assert lat["min_us"] <= lat["p50_us"] <= lat["p99_us"] <= lat["max_us"]
        tx_ports = sum(p["tx_packets"] > 0 for p in best[0]["ports"].values())  # 2: both ways
        line_pps = tx_ports * speed_gbps * 1e9 / 8 / (frame + 20)
        assert result["line_rate_pct"] == pytest.approx(100 * result["throughput_pps"] / line_pps)
        assert result["throughput_mbps"] == pytest.approx(
            (frame + 20) * 8 * result["throughput_pps"] / 1e6)


def check_confirmation(result: dict, trials: list[dict]) -> None:
    """The answer's latency came from a confirmation at its rate: one that passed is the
    answer; one the generator sent short every time leaves the answer's latency unconfirmed, with
    the rate its latency was measured at."""
    confirmations = [t for t in trials if t["reason"].startswith("confirmation with latency")]
    if not confirmations or "latency_measured_at_pps" not in result:
        return
    last = confirmations[-1]
    assert result["latency_measured_at_pps"] == pytest.approx(last["tx_rate_pps"])
    if last["verdict"] == "pass" and result["evidence"]["trial_index"] == last["trial_index"]:
        assert not result.get("latency_warnings")
    else:  # sent short every time, or passed though sent slower than the answer's trial
        (warning,) = result["latency_warnings"]
        assert "the latency at the answer is unconfirmed" in warning
        if last["verdict"] == "pass":  # the search's own trial measured the faster rate
            assert result["throughput_pps"] > last["tx_rate_pps"]
        assert f"{last['tx_rate_pps']:,.0f} pps" in warning
