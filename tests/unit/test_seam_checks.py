"""The plugin author's contract as written: the profile base class supplies the options
its helpers read, and the measurer's seams check what a plugin hands them, naming the
plugin, what it passed and what the seam takes, in one line."""

from __future__ import annotations

import pytest

from nsb.errors import PluginContractError
from nsb.events import LimitedBy, ResultReady
from nsb.task import overrides
from nsb.task.model import PluginSpec, Where
from nsb.task.yaml_lines import LocatedDocument
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import Measurer, SearchPoint, loss_judge
from nsb.traffic_profiles.nsb_rfc2544 import Rfc2544Profile
from nsb.trial import Trial
from tests.doubles.profiles import make_profile
from tests.doubles.simulated_dut import SimulatedDutGenerator


class OwnOptionsOnly(TrafficProfile):
    """A profile declaring only its own option, as the plugin page says it may."""

    OPTIONS_SCHEMA = {"type": "object", "additionalProperties": False,
                      "properties": {"step_pct": {"type": "number", "default": 10}}}

    def execute(self, measurer):
        for frame in self.frame_sizes:
            done = measurer.measure(self.trial_at_pct(frame, self.options["step_pct"],
                                                      measurer.ports),
                                    SearchPoint.single(self.options["step_pct"]))
            measurer.result_ready(frame, done, self.speed_gbps)


class NoDuration(OwnOptionsOnly):
    BASE_OPTIONS = ("packet_sizes", "interface_speed_gbps")
    OPTIONS_SCHEMA = {"type": "object", "additionalProperties": False, "properties": {}}


def _measurer(events=None, generator=None):
    generator = generator or SimulatedDutGenerator(1e6)
    return Measurer(generator, "t1", "s", (events if events is not None else []).append,
                    profile="ladder")


def test_a_profile_declaring_only_its_own_options_gets_the_base_ones():
    properties = OwnOptionsOnly.OPTIONS_SCHEMA["properties"]
    assert {"packet_sizes", "imix", "interface_speed_gbps", "flows", "duration",
            "step_pct"} <= set(properties)
    profile = make_profile(OwnOptionsOnly, packet_sizes=[64, 1518], interface_speed_gbps=1)
    assert profile.frame_sizes == [64, 1518] and profile.speed_gbps == 1.0
    assert profile.trial_at_pct(64, 10, 2).duration_s == 30.0  # the base's default
    events = []
    profile.execute(_measurer(events))
    answers = [e for e in events if isinstance(e, ResultReady)]
    assert [a.frame_size for a in answers] == [64, 1518] and all(a.trials == 1 for a in answers)
    assert all(a.throughput_pps > 0 for a in answers)


def test_nsb_s_own_profiles_keep_the_options_they_declare():
    """NSB's profile files give their frames by packet definitions: no imix or flows
    are added to them (packet_sizes they accept, as NSB does, and ignore)."""
    properties = Rfc2544Profile.OPTIONS_SCHEMA["properties"]
    assert "imix" not in properties and "flows" not in properties
    assert "NSB's; its TRex profiles ignore it" in properties["packet_sizes"]["description"]
    assert "duration" not in NoDuration.OPTIONS_SCHEMA["properties"]


def test_duration_and_frame_size_from_the_command_line_reach_such_a_profile(monkeypatch):
    monkeypatch.setattr(overrides, "_option_schemas",
                        lambda spec: OwnOptionsOnly.OPTIONS_SCHEMA["properties"])
    spec = PluginSpec("ladder", {}, Where(LocatedDocument({}, "t.yaml"), ()))
    changed = overrides._profile(spec, [128], 2.5)
    assert changed.options == {"packet_sizes": [128], "duration": 2.5}


def test_trial_at_pct_without_a_duration_option_says_what_to_do():
    profile = make_profile(NoDuration, packet_sizes=[64])
    with pytest.raises(PluginContractError, match="pass duration_s"):
        profile.trial_at_pct(64, 10, 2)
    assert profile.trial_at_pct(64, 10, 2, duration_s=2).duration_s == 2.0


@pytest.mark.parametrize("call, words", [
    (lambda m: m.measure([64, 1000], SearchPoint.single(1)),
     "traffic profile 'ladder' passed measure(trial=list [64, 1000]): it takes an nsb.trial.Trial"),
    (lambda m: m.measure(Trial(64, 1000, 1), 50.0),
     "passed measure(at=float 50.0): it takes a SearchPoint"),
    (lambda m: m.measure(Trial(64, 1000, 1), SearchPoint.single(1), 0.0),
     "passed measure(judge=float 0.0): it takes a function"),
    (lambda m: m.result_ready(64, {"tx": 1}, 10.0),
     "passed result_ready(best=dict {'tx': 1}): it takes the answer's TrialResult"),
    (lambda m: m.result_ready("64", None, 10.0),
     "passed result_ready(frame_size=str '64')"),
    (lambda m: m.result_ready(64, None, 10.0, "fast"),
     "passed result_ready(limited_by=str 'fast'): it takes a LimitedBy: dut, generator"),
])
def test_a_profile_misusing_the_seam_is_one_line_naming_it(call, words):
    with pytest.raises(PluginContractError) as raised:
        call(_measurer())
    message = str(raised.value)
    assert words in message and "\n" not in message
    assert raised.value.exit_code == 3


def test_the_answer_may_be_the_measurement_and_its_limit_a_string():
    events = []
    measurer = _measurer(events)
    done = measurer.measure(Trial(64, 1000, 1), SearchPoint.single(1), loss_judge(0.0))
    measurer.result_ready(64, done, 10.0, "upper_bound")
    (answer,) = [e for e in events if isinstance(e, ResultReady)]
    assert answer.throughput_pps == done.result.tx_rate_pps
    assert answer.limited_by == LimitedBy.UPPER_BOUND and answer.trials == 1
    assert answer.extra["evidence"]["trial_index"] == done.index


def test_a_generator_returning_something_else_is_named():
    class Broken(SimulatedDutGenerator):
        def run_trial(self, trial):
            return {"tx_packets": 10}

    generator = Broken(1e6)
    generator.name = "mygen"
    with pytest.raises(PluginContractError, match="generator 'mygen' returned dict"):
        _measurer(generator=generator).measure(Trial(64, 1000, 1), SearchPoint.single(1))
