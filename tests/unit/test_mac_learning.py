"""RFC 2889's searches against a simulated learning switch of known table size and
learning rate: the capacity to the address, the learning rate within its precision,
the switch's own table as the witness; a switch that holds everything ends at the
upper bound; a DUT that does not learn is not applicable (nsb.address_checks)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from nsb import address_checks
from nsb.addresses import AddressCounts, AddressLoad
from nsb.events import LimitedBy, ResultReady, TrialDone, Verdict
from nsb.traffic_profiles.mac_learning import MacLearningProfile
from nsb.traffic_profiles.measurer import Measurer, TrialHooks
from nsb.trial import Trial, TrialResult
from nsb.vnfs.generic.linux_bridge import learned
from nsb.vnfs.ovs import fdb
from tests.doubles.profiles import make_profile


class LearningSwitch(TrialHooks):
    """A switch with a table of ``size`` entries (the test port's own address takes one;
    full, it evicts the learning port's oldest) learning at most ``learns_pps``
    addresses a second (faster, it misses the excess share); the generator's ports."""

    SENDS_ADDRESSES = True
    name = "tg0"
    tx_port_count = 1

    def __init__(self, size: int | None, learns_pps: float = 1e9, generator_pps=1e9):
        self.size, self.learns_pps, self.generator_pps = size, learns_pps, generator_pps
        self.ports = [SimpleNamespace(name=f"xe{k}") for k in range(4)]
        self.flushes, self.macs = 0, []

    def run_trial(self, trial: Trial) -> TrialResult:
        load = trial.addresses
        sent = load.count if load.learning_pps <= self.generator_pps else load.count // 2
        held = sent if load.learning_pps <= self.learns_pps else \
            int(sent * self.learns_pps / load.learning_pps)
        if self.size is not None:
            held = min(held, self.size - 1)
        self.macs = ["02:00:00:00:00:01"] + [load.mac(load.count - 1 - k) for k in range(held)]
        counts = AddressCounts(sent, sent, 0, load.count, load.count, load.count - held)
        note = "" if sent == load.count else f"TRex sent {sent} of {load.count}"
        return TrialResult(trial=trial, tx_packets=load.count, rx_packets=load.count,
                           elapsed_s=1.0, addresses=counts, generator_limited=bool(note),
                           generator_note=note)

    def flush_addresses(self):
        self.flushes += 1
        self.macs = []

    def address_table(self):
        return [(list(self.macs), self.size)]


def run(switch: LearningSwitch, **options):
    profile = make_profile(MacLearningProfile, **options)
    events = []
    profile.execute(Measurer(switch, "t1", "s", events.append, switch, profile="mac_learning"))
    return ([e for e in events if isinstance(e, TrialDone)],
            [e for e in events if isinstance(e, ResultReady)])


@pytest.mark.parametrize("size", [10, 300, 1000, 2048])
def test_the_capacity_is_the_switch_s_table_size_to_the_address(size):
    trials, (result,) = run(LearningSwitch(size), find=["capacity"], min_addresses=2,
                            max_addresses=4096)
    answer = result.extra["mac_learning"]
    assert answer["learned_addresses"] == size - 1  # the test port's own address is one
    assert answer["mac_capacity"] == size == answer["table_entries"] == answer["table_max"]
    assert answer["first_failing_addresses"] == size
    assert result.limited_by == LimitedBy.DUT
    failed = [t for t in trials if t.verdict == Verdict.FAIL]
    assert failed and all("flooded" in t.reason for t in failed)
    assert all(t.result.addresses.table_entries == min(t.result.trial.addresses.count + 1, size)
               for t in trials)


def test_a_switch_that_holds_every_address_ends_at_the_upper_bound():
    trials, (result,) = run(LearningSwitch(None), find=["capacity"], max_addresses=512)
    assert len(trials) == 1 and result.limited_by == LimitedBy.UPPER_BOUND
    assert result.extra["mac_learning"]["learned_addresses"] == 512
    assert "max_addresses" in result.limited_reason


def test_the_learning_rate_is_found_within_its_precision_at_half_the_capacity():
    switch = LearningSwitch(1000, learns_pps=12000)
    trials, (result,) = run(switch, min_addresses=2, max_addresses=4096, learning_pps=1000,
                            min_learning_pps=500, max_learning_pps=100000,
                            rate_precision_pct=2)
    answer = result.extra["mac_learning"]
    assert answer["mac_capacity"] == 1000
    assert answer["rate_addresses"] == 999 // 2
    assert 12000 * 0.98 <= answer["learning_rate_pps"] <= 12000
    assert switch.flushes == len(trials)  # the table flushed before every trial
    assert result.throughput_pps == answer["learning_rate_pps"]


def test_a_generator_that_cannot_send_the_learning_rate_is_the_limit():
    _, (result,) = run(LearningSwitch(1000, learns_pps=1e9, generator_pps=20000),
                       find=["learning_rate"], rate_addresses=100, max_learning_pps=100000)
    assert result.limited_by == LimitedBy.GENERATOR


def test_a_switch_that_learns_nothing_has_no_capacity():
    _, (result,) = run(LearningSwitch(1), find=["capacity"], min_addresses=2)
    assert result.limited_by == LimitedBy.DUT and "not all held" in result.limited_reason


def _scenario(vnfs, **options):
    profile = make_profile(MacLearningProfile, **options)
    generator = SimpleNamespace(SENDS_ADDRESSES=True, name="tg0",
                                ports=[SimpleNamespace(name=f"xe{k}") for k in range(4)],
                                spec=SimpleNamespace(type="trex"))
    return address_checks.problems(SimpleNamespace(name="s"), generator, vnfs, profile)


def _vnf(name, why, ageing=300.0):
    return SimpleNamespace(name=name, learns_addresses=lambda: why,
                           address_ageing_s=lambda: ageing)


def test_trials_longer_than_the_switch_s_ageing_time_are_refused():
    # 16,384 addresses learned at 5,000/s and tested at 5,000/s: 6.8 s a trial; the
    # learning-rate search's 8,192 at 500/s: 0.2 + 8,192 / 500 + 8,192 / 5,000 = 18.2 s
    (error,) = _scenario([_vnf("ovs0", "", ageing=15.0)])
    assert "ovs0" in str(error) and "15 s" in str(error) and "18.2 s" in str(error)
    assert _scenario([_vnf("ovs0", "", ageing=15.0)], find=["capacity"]) == []


def test_a_dut_that_does_not_learn_is_not_applicable_in_one_line():
    (error,) = _scenario([_vnf("testpmd0", "testpmd forwards by its own rules")])
    assert "not applicable" in str(error) and "testpmd0" in str(error)
    assert _scenario([_vnf("ovs0", "")]) == []
    (error,) = _scenario([_vnf("ovs0", "")], monitor_ports=["xe1"])
    assert "three distinct ports" in str(error)
    (error,) = _scenario([_vnf("ovs0", "")], test_port="xe9")
    assert "xe9" in str(error) and "test_port" in str(error)


def test_the_switches_tables_are_read_from_their_own_output():
    shown = (" port  VLAN  MAC                Age\n"
             "    1     0  02:4E:00:00:00:01    0\n"
             "    2     0  52:54:00:12:34:56    3\n")
    assert fdb.macs(shown) == ["02:4e:00:00:00:01", "52:54:00:12:34:56"]
    stats = ('Statistics for bridge "br0":\n'
             "  Current/maximum MAC entries in the table: 2/300\n")
    assert fdb.maximum(stats) == 300 and fdb.maximum("") is None
    entries = [{"mac": "02:4e:00:00:00:01", "ifname": "br0-0a", "master": "br0", "state": ""},
               {"mac": "3a:11:22:33:44:55", "ifname": "br0-0a", "master": "br0",
                "vlan": 1, "state": "permanent"},
               {"mac": "33:33:00:00:00:01", "ifname": "br0-0a", "flags": ["self"],
                "state": "permanent"}]
    assert learned(entries) == ["02:4e:00:00:00:01"]


def test_the_addresses_are_counted_up_from_the_first():
    load = AddressLoad(300, 1, 1, "xe0", "xe1", ("xe2",), first_mac="02:4e:00:00:00:fe")
    assert load.mac(0) == "02:4e:00:00:00:fe" and load.mac(3) == "02:4e:00:00:01:01"
    assert load.is_learnt_address("02:4e:00:00:02:29")  # 0xfe + 299
    assert not load.is_learnt_address("02:4e:00:00:02:2a")
    assert not load.is_learnt_address("02:4e:00:00:00:fd")


def test_the_sla_and_the_summary_read_the_mac_learning_answer():
    from nsb import sla
    from nsb.report import mac_table

    result = {"scenario": "s", "frame_size": 64, "throughput_pps": 9000.0, "limited_by": "dut",
              "mac_learning": {"learned_addresses": 299, "mac_capacity": 300,
                               "table_entries": 300, "table_max": 300,
                               "first_failing_addresses": 300, "learning_rate_pps": 9000.0,
                               "rate_addresses": 149}}
    frames = {"scenario": "s", "frame_size": 64, "throughput_pps": 5e4, "limited_by": "dut"}
    (outcome,) = sla.check([sla.parse("mac_capacity>=4096")], [result, frames])
    assert outcome.measured == 300 and not outcome.passed
    (rate,) = sla.check([sla.parse("mac_learning_rate_pps>=1000")], [result, frames])
    assert rate.passed and rate.measured == 9000
    (ndr,) = sla.check([sla.parse("ndr_pps>=1")], [result, frames])
    assert ndr.measured == 5e4  # the frame answer's, not the learning rate
    (row,) = mac_table.rows([result])
    assert row[1] == "299" and row[2] == "300 (300 / 300)" and "149 addresses" in row[4]
