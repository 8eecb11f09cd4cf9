"""The traffic profile interface: what a profile offers, judged through a Measurer."""

from __future__ import annotations

import abc
from typing import ClassVar

from nsb import frames, units
from nsb.errors import PluginContractError
from nsb.frames import Frame, FrameMix
from nsb.plugin import Plugin
from nsb.runinfo import RunInfo
from nsb.task.model import PluginSpec
from nsb.traffic_profiles import common
from nsb.traffic_profiles.measurer import Measurer
from nsb.trial import Trial

# the options the base class's helpers read (frame_sizes, speed_gbps, trial_at_pct):
# every profile takes them unless its own schema says otherwise
BASE_OPTIONS = {"packet_sizes": common.PACKET_SIZES, "imix": common.IMIX,
                "interface_speed_gbps": common.INTERFACE_SPEED, "flows": common.FLOWS,
                "duration": common.DURATION}


def step_below(rate: float, forwarded_pps: float, width: float) -> float:
    """The next rate to prove after one failed at ``rate`` while forwarding
    ``forwarded_pps``: what it forwarded, and at least ``width`` (relative) down."""
    return min(rate * (1 - width), forwarded_pps * (1 - width / 2))


class TrafficProfile(Plugin):
    """Offers trials to a generator and judges what comes back."""

    # the base options this profile takes (one whose trials have lengths of their own
    # leaves out "duration"; NSB's profiles, whose frames their packet definitions give,
    # take none)
    BASE_OPTIONS: ClassVar[tuple[str, ...]] = tuple(BASE_OPTIONS)

    def __init_subclass__(cls, **kwargs):
        """A profile's schema states only its own options: the base's are added to it
        (its own definition of one wins), so the task's packet_sizes, its line rate and
        --frame-size/--duration reach every profile's helpers."""
        super().__init_subclass__(**kwargs)
        schema = cls.__dict__.get("OPTIONS_SCHEMA")
        if schema is None and cls.__dict__.get("BASE_OPTIONS") is None:
            return  # it inherits its parent's schema as it is
        if schema is None:
            schema = cls.OPTIONS_SCHEMA = {"type": "object", "additionalProperties": False}
        properties = schema.setdefault("properties", {})
        for name in cls.BASE_OPTIONS:
            properties.setdefault(name, BASE_OPTIONS[name])

    def __init__(self, spec: PluginSpec, options: dict, run: RunInfo):
        super().__init__(spec, options, run)
        lower, upper = options.get("lower_bound"), options.get("upper_bound")
        if lower is not None and upper is not None and lower >= upper:
            raise spec.options_where.error(
                f"lower_bound {lower} must be below upper_bound {upper}", "lower_bound")
        self.mix = self._mix(options)

    def _mix(self, options: dict) -> FrameMix | None:
        """The mix `IMIX` in packet_sizes stands for; None when none is asked for."""
        if not any(frames.is_mix_name(v) for v in options.get("packet_sizes", [])):
            return None
        try:
            return frames.parse_mix(options.get("imix", frames.SIMPLE_IMIX))
        except ValueError as exc:
            raise self.spec.options_where.error(str(exc), "imix") from None

    @property
    def frame_sizes(self) -> list[Frame]:
        """Sizes in bytes, and the mix where packet_sizes says `IMIX`."""
        return [self.mix if frames.is_mix_name(v) else v
                for v in self.options.get("packet_sizes", [])]

    @property
    def speed_gbps(self) -> float:
        return float(self.options.get("interface_speed_gbps", 10.0))

    def trial_at_pct(self, frame: Frame, pct: float, ports: int,
                     duration_s: float | None = None) -> Trial:
        """A trial of ``duration_s`` (default: the ``duration`` option) and this
        profile's flows at ``pct`` % of line rate, summed over ``ports`` ports."""
        if duration_s is None:
            if "duration" not in self.options:
                raise PluginContractError(
                    f"traffic profile '{self.spec.type}' called trial_at_pct without "
                    "duration_s and takes no 'duration' option: pass duration_s, or keep "
                    "'duration' in its BASE_OPTIONS")
            duration_s = self.options["duration"]
        return Trial(frame_size=frame, duration_s=float(duration_s),
                     flows=self.options.get("flows"),
                     rate_pps=units.pct_to_pps(pct, frame, self.speed_gbps, ports))

    @abc.abstractmethod
    def execute(self, measurer: Measurer) -> None:
        """Run every trial of the profile once, through ``measurer``."""
