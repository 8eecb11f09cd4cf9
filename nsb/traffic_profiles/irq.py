"""No traffic, only time (NSB's ProxIrqProfile): the irq VNFs are sampled every
``interval`` seconds until the runner stops the run."""

from __future__ import annotations

import time

from nsb.events import KpiSample
from nsb.traffic_profiles.base import Session, TrafficProfile


class IrqProfile(TrafficProfile):
    """IRQ: send nothing; sample the VNFs' and generator's KPIs every `interval` s."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "interval": {"type": "number", "exclusiveMinimum": 0, "default": 1.0},
            "packet_sizes": {"type": "array"},
            "duration": {"type": "number"},
            "interface_speed_gbps": {"type": "number", "exclusiveMinimum": 0},
        },
    }

    def execute(self, tg, session: Session) -> None:
        sample = 0
        tg.collect_kpi()  # starts the generator's clock, as the VNFs' first sample does
        session.after_trial(sample)
        while not session.should_stop():
            deadline = time.monotonic() + self.options["interval"]
            while time.monotonic() < deadline and not session.should_stop():
                time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
            sample += 1
            kpis = tg.collect_kpi()
            if kpis:
                session.emit(KpiSample(session.task_id, session.scenario, source=tg.name,
                                       node=tg.node.name, kpis=kpis, trial_index=sample))
            session.after_trial(sample)  # the VNFs' KPIs
