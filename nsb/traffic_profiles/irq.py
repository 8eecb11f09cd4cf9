"""No traffic, only time (NSB's ProxIrqProfile): the irq VNFs are sampled every
``interval`` seconds until the runner stops the run."""

from __future__ import annotations

import time

from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import Measurer


class IrqProfile(TrafficProfile):
    """IRQ: send nothing; sample the VNFs' and generator's KPIs every `interval` s."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "interval": {"description": "seconds between samples of the VNFs' KPIs",
                         "type": "number", "exclusiveMinimum": 0, "default": 1.0},
            "packet_sizes": {"description": "NSB's; accepted (nothing is sent)",
                             "type": "array"},
            "duration": {"description": "NSB's; accepted (the runner sets the time)",
                         "type": "number"},
            "interface_speed_gbps": {"description": "NSB's; accepted (nothing is sent)",
                                     "type": "number", "exclusiveMinimum": 0},
        },
    }

    def execute(self, measurer: Measurer) -> None:
        sample = 0
        tg = measurer.generator
        tg.collect_kpi()  # starts the generator's clock, as the VNFs' first sample does
        measurer.sample(sample)
        while not measurer.should_stop():
            deadline = time.monotonic() + self.options["interval"]
            while time.monotonic() < deadline and not measurer.should_stop():
                time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
            sample += 1
            measurer.sample(sample, tg.collect_kpi())  # the generator's, then the VNFs' KPIs
