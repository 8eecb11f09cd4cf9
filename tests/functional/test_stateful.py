"""Stateful tests in the lab, for real: TRex in ASTF mode opening connections through
an nftables NAT or firewall (conntrack) of known capacity, set from outside, and the
generator alone (its ceiling). Every trial's connections are held against the DUT's
own count (conntrack's table, sampled while the trial ran); nothing is left behind."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, requires_root
from tests.functional.lab import leftovers, results_of, start
from tests.functional.trex_lab import env_with_trex, requires_trex

SAMPLES = ROOT / "samples" / "stateful"
CPS = SAMPLES / "tc_astf_cps_nftables_nat.yaml"
SESSIONS = SAMPLES / "tc_astf_sessions_nftables.yaml"
CALIBRATE = SAMPLES / "tc_astf_calibrate.yaml"


@pytest.fixture(autouse=True)
def _lab():
    requires_root()
    requires_trex()


def _run(results_conf, tmp_path, task, args: dict, *extra) -> tuple[str, dict, str]:
    proc = start(results_conf, args, *extra, task=task, env=env_with_trex())
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    task_id, doc = results_of(tmp_path / "results")
    assert leftovers(task_id) == []
    return task_id, doc, out


def _witnessed(doc) -> None:
    """Every trial: what was intended >= attempted >= established, the counts add up,
    and the DUT's own count saw every connection TRex established (and no more than it
    attempted: an entry per connection the DUT let through)."""
    for trial in doc["trials"]:
        s = trial["sessions"]
        assert s["intended"] >= s["attempted"] >= s["established"] >= 0, s
        assert s["never_attempted"] == s["intended"] - s["attempted"]
        assert s["dut_sessions"] is not None
        assert s["established"] <= s["dut_sessions"] <= s["attempted"], s


def test_cps_through_nat_finds_its_rate_limit_and_conntrack_counts_every_connection(
        results_conf, tmp_path):
    """An nftables limit of 2,000 new connections a second at the NAT, far below what
    TRex opens here (tens of thousands a second port to port): the search ends limited
    by the DUT, within its precision below the limit."""
    limit, precision = 2000, 5.0
    _, doc, out = _run(results_conf, tmp_path, CPS,
                       {"duration_s": 1, "max_new_per_s": limit, "upper_cps": 8000,
                        "lower_cps": 200, "precision_pct": precision})
    (result,) = doc["results"]
    stateful = result["stateful"]
    assert result["limited_by"] == "dut", result
    # the limit's burst (20 ms of connections) lets a 1 s trial through up to 2 % more
    assert limit * (1 - 2 * precision / 100) <= stateful["cps"] <= limit * 1.03, stateful
    assert stateful["counts"]["loss_pct"] == 0
    _witnessed(doc)
    above = [t for t in doc["trials"] if t["sessions"]["cps_asked"] > limit * 1.05]
    assert above and all(t["verdict"] == "fail" for t in above)
    kpis = [k["kpis"] for k in doc["kpis"] if k["source"] == "nat0"]
    assert kpis[-1]["rate_limit_dropped"] > 0  # the limit's own counter dropped them
    assert "connections/s" in out


def test_concurrent_sessions_find_the_firewall_s_session_limit(results_conf, tmp_path):
    """A 'ct count' limit of 1,200 concurrent connections at the firewall: the most
    sessions held at once is found within the precision below it, and the firewall's
    own count held every session of the answer."""
    limit, precision = 1200, 5.0
    _, doc, _ = _run(results_conf, tmp_path, SESSIONS,
                     {"max_sessions": limit, "upper_sessions": 3000, "lower_sessions": 200,
                      "precision_pct": precision, "open_cps": 2000, "hold_s": 0.5})
    (result,) = doc["results"]
    stateful = result["stateful"]
    assert result["limited_by"] == "dut", result
    assert limit * (1 - 2 * precision / 100) <= stateful["sessions"] <= limit, stateful
    assert stateful["dut_sessions"] >= stateful["sessions"]
    _witnessed(doc)
    # the trials that asked more: the firewall held its limit (an entry or so more: a
    # connection conntrack had not yet let go of), and refused the rest
    failed = [t for t in doc["trials"] if t["verdict"] == "fail"]
    assert failed and all(limit <= t["sessions"]["dut_sessions"] <= limit * 1.01
                          for t in failed), [t["sessions"] for t in failed]


def test_the_calibration_states_the_generator_s_own_ceiling(results_conf, tmp_path):
    """Port to port, no DUT: what limits the answer is the generator (or the search's
    upper bound), never a DUT; every connection it attempted came up."""
    _, doc, _ = _run(results_conf, tmp_path, CALIBRATE,
                     {"duration_s": 1, "upper_cps": 150000, "precision_pct": 10})
    (result,) = doc["results"]
    assert result["limited_by"] in ("generator", "upper_bound"), result
    assert result["stateful"]["cps"] > 2000
    for trial in doc["trials"]:
        s = trial["sessions"]
        assert s["attempted"] == s["established"] or trial["verdict"] != "pass"
        assert s["dut_sessions"] is None  # no DUT that keeps state


def test_udp_cps_through_nat(results_conf, tmp_path):
    _, doc, _ = _run(results_conf, tmp_path, CPS,
                     {"duration_s": 1, "program": "udp_cps", "max_new_per_s": 1500,
                      "upper_cps": 6000, "lower_cps": 200, "precision_pct": 10})
    (result,) = doc["results"]
    assert result["stateful"]["program"] == "udp_cps"
    assert result["limited_by"] == "dut" and result["stateful"]["cps"] <= 1500 * 1.03
    _witnessed(doc)


@pytest.mark.parametrize("change, key, words", [
    ("program: {{ program | default(\"tcp_cps\") }}", "program",
     "does not load: ZeroDivisionError: division by zero"),
    ("program: {{ program | default(\"tcp_cps\") }}", "tunables",
     "does not take the tunables --nope 1: unrecognized arguments: --nope 1"),
    ("type: nftables", "vnfs[0]", "may keep state nsb cannot reset"),
])
def test_a_stateful_task_nsb_cannot_run_is_one_line_and_nothing_starts(tmp_path, change,
                                                                       key, words):
    import subprocess

    from tests.conftest import NSB

    broken = tmp_path / "broken_profile.py"
    broken.write_text("print(1 / 0)\n")
    text = CPS.read_text()
    replacement = {"program": f"program: {broken}",
                   "tunables": "program: " + str(ROOT.parent / "shared" / "tools" / "trex" /
                                                 "astf" / "http_manual_cli_tunable.py") +
                               "\n      tunables: ['--nope', '1']",
                   "vnfs[0]": "type: agnostic"}[key]
    text = text.replace(change, replacement)
    if key == "vnfs[0]":  # an agnostic DUT takes none of the nftables options
        text = text.replace("          mode: nat\n", "          {}\n").replace(
            "          generator_addresses: {xe0: [16.0.0.0/24], xe1: [48.0.0.0/24]}\n", "")
    task = tmp_path / "task.yaml"
    task.write_text(text)
    done = subprocess.run([*NSB, "task", "start", str(task), "--dry-run"], capture_output=True,
                          text=True, env=env_with_trex(), timeout=120)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"nsb: error: {task}:") and words in line, line
    assert "Traceback" not in done.stderr
