"""RFC 2889 address caching capacity (5.7) and address learning rate (5.8) of a learning
switch (OVS with the NORMAL action, a Linux bridge): trials of nsb.addresses, the
switch's table flushed before each, its own table read after each as the witness.

Capacity: a binary search over the number of addresses, to the exact count, for the
most the switch held with none flooded. A switch that holds N learned addresses also
holds the test port's own, so its table's capacity (``mac_capacity``) is the entries
it held then: by its own count when nsb reads its table, else N + 1. Learning rate: at
a count within the capacity, a binary search over the learning frames' rate.
"""

from __future__ import annotations

from dataclasses import replace

from nsb.addresses import AddressLoad
from nsb.events import LimitedBy
from nsb.frames import Frame
from nsb.traffic_profiles import common
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.bisection import search
from nsb.traffic_profiles.judges import FAIL, GENERATOR_LIMITED, PASS
from nsb.traffic_profiles.measurer import Measurement, Measurer, SearchPoint
from nsb.trial import Trial, TrialResult

PORT = {"type": "string", "minLength": 1}


class MacLearningProfile(TrafficProfile):
    """RFC 2889's address caching capacity and learning rate of a learning switch."""

    BASE_OPTIONS = ("packet_sizes", "interface_speed_gbps")
    NEEDS_ADDRESSES = True  # its trials are address-learning trials (plan checks)
    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "packet_sizes": {**common.PACKET_SIZES, "default": [64]},
            "find": {"description": "what to search: capacity (the most addresses held), "
                                    "learning_rate (the fastest learnt at rate_addresses)",
                     "type": "array", "minItems": 1, "uniqueItems": True,
                     "items": {"enum": ["capacity", "learning_rate"]},
                     "default": ["capacity", "learning_rate"]},
            "learning_port": {**PORT, "description": "the generator's interface whose "
                                                     "frames teach the switch the addresses "
                                                     "(default: its first)"},
            "test_port": {**PORT, "description": "the interface that sends to the learnt "
                                                 "addresses (default: its second)"},
            "monitor_ports": {"description": "the interfaces that must receive nothing "
                                             "(default: the generator's others)",
                              "type": "array", "minItems": 1, "items": PORT},
            "min_addresses": {"type": "integer", "minimum": 1, "default": 16,
                              "description": "the capacity search's lower bound"},
            "max_addresses": {"type": "integer", "minimum": 2, "maximum": 16777216,
                              "default": 16384,
                              "description": "the capacity search's upper bound"},
            "learning_pps": {"type": "number", "exclusiveMinimum": 0, "default": 5000,
                             "description": "the learning frames' rate in the capacity "
                                            "search (well within the switch's learning "
                                            "rate)"},
            "test_pps": {"type": "number", "exclusiveMinimum": 0, "default": 5000,
                         "description": "the test frames' rate"},
            "rate_addresses": {"type": "integer", "minimum": 1,
                               "description": "addresses per learning-rate trial (default: "
                                              "half the capacity found, or of "
                                              "max_addresses)"},
            "min_learning_pps": {"type": "number", "exclusiveMinimum": 0, "default": 500},
            "max_learning_pps": {"type": "number", "exclusiveMinimum": 0, "default": 100000},
            "rate_precision_pct": {"type": "number", "exclusiveMinimum": 0, "maximum": 50,
                                   "default": 5, "description": "the learning-rate search "
                                                                "stops this close, in %"},
            "settle_s": {"type": "number", "minimum": 0, "maximum": 10, "default": 0.2,
                         "description": "seconds between learning and testing"},
        },
    }

    def __init__(self, spec, options, run):
        super().__init__(spec, options, run)
        for low, high in (("min_addresses", "max_addresses"),
                          ("min_learning_pps", "max_learning_pps")):
            if options[low] >= options[high]:
                raise spec.options_where.error(
                    f"{low} {options[low]:g} must be below {high} {options[high]:g}", low)

    def ports(self, names: list[str]) -> tuple[str, str, tuple[str, ...]]:
        """(learning, test, monitors) among the generator's interfaces ``names``."""
        o = self.options
        learning = o.get("learning_port", names[0] if names else "")
        test = o.get("test_port", next((n for n in names if n != learning), ""))
        monitors = tuple(o.get("monitor_ports") or
                         [n for n in names if n not in (learning, test)])
        return learning, test, monitors

    def longest_trial_s(self) -> float:
        """The longest trial either search may run: learning, settling and testing."""
        o = self.options
        capacity = o["max_addresses"] * (1 / o["learning_pps"] + 1 / o["test_pps"])
        count = o.get("rate_addresses") or o["max_addresses"] // 2  # at most
        rate = count * (1 / o["min_learning_pps"] + 1 / o["test_pps"])
        return o["settle_s"] + max(capacity if "capacity" in o["find"] else 0.0,
                                   rate if "learning_rate" in o["find"] else 0.0)

    def execute(self, measurer: Measurer) -> None:
        names = [iface.name for iface in measurer.generator.ports]
        learning, test, monitors = self.ports(names)

        def load(count: int, pps: float) -> AddressLoad:
            return AddressLoad(count, pps, self.options["test_pps"], learning, test,
                               monitors, settle_s=self.options["settle_s"])

        for frame in self.frame_sizes:
            self._frame(measurer, frame, load, {"learning_port": learning, "test_port": test,
                                                "monitor_ports": list(monitors)})

    def _frame(self, measurer: Measurer, frame: Frame, load, answer: dict) -> None:
        """Both searches at ``frame``; ``answer`` (the ports so far) gets their numbers."""
        o = self.options
        best = limited = None
        if "capacity" in o["find"]:
            best, limited = self._capacity(measurer, frame, load, answer)
        if "learning_rate" in o["find"] and not measurer.should_stop():
            count = o.get("rate_addresses") or max(1, (answer.get("learned_addresses")
                                                       or o["max_addresses"]) // 2)
            rated, rate_limited = self._learning_rate(measurer, frame, load, count, answer)
            best, limited = best or rated, limited or rate_limited
        measurer.result_ready(
            frame, best, self.speed_gbps, limited or LimitedBy.DUT, profile=self.spec.type,
            extra={"mac_learning": answer}, reason=answer.get("capacity_reason") or
            answer.get("learning_rate_reason", ""),
            answer_pps=answer.get("learning_rate_pps") or 0.0)

    def _trial(self, measurer: Measurer, frame: Frame, load: AddressLoad, why: str,
               trials_left: int = 0) -> Measurement:
        trial = Trial(frame_size=frame, rate_pps=load.test_pps,
                      duration_s=load.count / load.test_pps, latency=False, addresses=load)

        def run(t: Trial) -> TrialResult:
            measurer.hooks.flush_addresses()
            result = measurer.generator.run_trial(t)
            return _witnessed(result, measurer.hooks.address_table(), load)

        return measurer.measure(trial, SearchPoint.single(0.0, trials_left), address_judge,
                                why=why, run=run)

    def _capacity(self, measurer: Measurer, frame: Frame, load, answer: dict):
        """The most addresses held with none flooded, to the exact count."""
        o = self.options
        passed, failed, short = search(
            lambda n: self._trial(measurer, frame, load(n, o["learning_pps"]),
                                  f"capacity, {n:,} addresses"),
            o["min_addresses"], o["max_addresses"], lambda lo, hi: hi - lo <= 1,
            lambda lo, hi: (lo + hi) // 2, measurer.should_stop)
        if short is not None:
            answer["capacity_reason"] = short.reason
        if passed is None:
            answer.setdefault("capacity_reason", f"even {o['min_addresses']:,} addresses "
                                                 "were not all held")
            return None, LimitedBy.GENERATOR if short else LimitedBy.DUT
        count, done = passed
        c = done.result.addresses
        answer.update({"learned_addresses": count,
                       "mac_capacity": c.table_entries if c.table_entries is not None
                       else count + 1,
                       "table_entries": c.table_entries, "table_learnt": c.table_learnt,
                       "table_max": c.table_max, "first_failing_addresses": failed,
                       "capacity_trial_index": done.index})
        if failed is None:
            answer["capacity_reason"] = (f"every trial passed, up to max_addresses "
                                         f"{o['max_addresses']:,}")
            return done, LimitedBy.UPPER_BOUND
        return done, LimitedBy.GENERATOR if short else LimitedBy.DUT

    def _learning_rate(self, measurer: Measurer, frame: Frame, load, count: int,
                       answer: dict):
        """The fastest learning rate at which ``count`` addresses were all held."""
        o = self.options
        passed, failed, short = search(
            lambda pps: self._trial(measurer, frame, load(count, pps),
                                    f"learning rate, {pps:,.0f} addresses/s"),
            o["min_learning_pps"], o["max_learning_pps"],
            lambda lo, hi: hi - lo <= hi * o["rate_precision_pct"] / 100,
            lambda lo, hi: (lo + hi) / 2, measurer.should_stop)
        answer["rate_addresses"] = count
        if short is not None:
            answer["learning_rate_reason"] = short.reason
        if passed is None:
            answer.setdefault("learning_rate_reason",
                              f"{count:,} addresses were not all learnt even at "
                              f"{o['min_learning_pps']:,.0f} addresses/s")
            return None, LimitedBy.GENERATOR if short else LimitedBy.DUT
        asked, done = passed
        answer.update({"learning_rate_pps": asked,
                       "learning_rate_measured_pps":
                           done.result.addresses.learning_pps_measured,
                       "first_failing_learning_pps": failed,
                       "learning_rate_trial_index": done.index})
        limited = LimitedBy.UPPER_BOUND if failed is None else LimitedBy.DUT
        return done, LimitedBy.GENERATOR if short else limited


def _witnessed(result: TrialResult, tables: list[tuple[list[str], int | None]],
               load: AddressLoad) -> TrialResult:
    """The trial's counts with the switch's own table (the first learning switch's)."""
    if not tables or result.addresses is None:
        return result
    macs, most = tables[0]
    learnt = sum(1 for mac in macs if load.is_learnt_address(mac))
    return replace(result, addresses=replace(result.addresses, table_entries=len(macs),
                                             table_learnt=learnt, table_max=most))


def address_judge(result: TrialResult):
    """Pass: every learning and test frame delivered, none flooded to a monitor port."""
    c = result.addresses
    if result.generator_limited:
        return GENERATOR_LIMITED, f"the generator fell short: {result.generator_note}"
    if c.learning_flooded:
        return FAIL, (f"{c.learning_flooded:,} learning frames were flooded: the switch lost "
                      "the test port's own address")
    if c.flooded:
        return FAIL, (f"{c.flooded:,} of {c.test_sent:,} addresses were flooded to the "
                      "monitor ports (the switch did not hold them)")
    lost = (c.learning_sent - c.learning_delivered) + (c.test_sent - c.test_delivered)
    if lost:
        return FAIL, f"{lost:,} frames lost (none flooded): the switch dropped them"
    held = "" if c.table_learnt is None else f"; its table held {c.table_learnt:,} of them"
    return PASS, f"all {c.test_sent:,} addresses forwarded, none flooded{held}"
