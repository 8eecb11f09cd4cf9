"""The traffic profile interface: what a profile offers, judged through a Measurer."""

from __future__ import annotations

import abc

from nsb import frames, units
from nsb.frames import Frame, FrameMix
from nsb.plugin import Plugin
from nsb.runinfo import RunInfo
from nsb.task.model import PluginSpec
from nsb.traffic_profiles.measurer import Measurer
from nsb.trial import Trial


def step_below(rate: float, forwarded_pps: float, width: float) -> float:
    """The next rate to prove after one failed at ``rate`` while forwarding
    ``forwarded_pps``: what it forwarded, and at least ``width`` (relative) down."""
    return min(rate * (1 - width), forwarded_pps * (1 - width / 2))


class TrafficProfile(Plugin):
    """Offers trials to a generator and judges what comes back."""

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

    def trial_at_pct(self, frame: Frame, pct: float, ports: int) -> Trial:
        """A trial of this profile's duration and flows at ``pct`` % of line rate."""
        return Trial(frame_size=frame, duration_s=float(self.options["duration"]),
                     flows=self.options.get("flows"),
                     rate_pps=units.pct_to_pps(pct, frame, self.speed_gbps, ports))

    @abc.abstractmethod
    def execute(self, measurer: Measurer) -> None:
        """Run every trial of the profile once, through ``measurer``."""
