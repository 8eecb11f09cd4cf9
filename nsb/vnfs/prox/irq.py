"""PROX's interrupt measurement (NSB's ProxIrqVNF and ProxIrqGen): how long, and how
often, each ``mode=irq`` core is kept from running.

A ``mode=irq`` task spins on the TSC and sorts every gap into 13 buckets (from
< 1 us to >= 500 ms). As NSB does, every KPI sample reads each irq task's
counters, resets them, and reports per core ``max_irq`` (us) and each non-zero
bucket (and ``overflow``, the gaps of 10 ms or more) as events per second since
the previous sample; the first sample only starts the clock. No traffic is
sent: pair them with the ``irq`` (ProxIrqProfile) traffic profile.
"""

from __future__ import annotations

import time

from nsb.errors import RunError
from nsb.trial import Trial, TrialResult
from nsb.vnfs.base import TrafficGen
from nsb.vnfs.prox.vnf import ProxVnf


class ProxIrqVnf(ProxVnf):
    """PROX IRQ: per-core interrupt counts and the longest interruption (NSB's ProxIrqVNF)."""

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        self.irq_tasks = [(t.core, t.task) for t in self.config.tasks() if t.mode == "irq"]
        if not self.irq_tasks:
            raise spec.options_where.error(f"{self.config.source} has no mode=irq task to "
                                           "measure", "prox_config")
        self._since: float | None = None

    def collect_kpi(self) -> dict[str, float]:
        if self.client is None:
            return {}
        stats = {core: self.client.irq_stats(core, task) for core, task in self.irq_tasks}
        now = time.monotonic()
        self.client.reset_stats()
        since, self._since = self._since, now
        if since is None or now <= since:
            return {}
        return irq_kpis(stats, now - since)


def irq_kpis(stats: dict[int, dict[str, int]], seconds: float) -> dict[str, float]:
    """NSB's KPIs: ``core_N.max_irq`` (us) and non-zero ``core_N.bucket_i`` and
    ``core_N.overflow`` as events per second over ``seconds``."""
    kpis: dict[str, float] = {}
    for core, counters in stats.items():
        kpis[f"core_{core}.max_irq"] = float(counters["max_irq"])
        for name, count in counters.items():
            if name != "max_irq" and count:
                kpis[f"core_{core}.{name}"] = count / seconds
    return kpis


class ProxIrqGen(ProxIrqVnf, TrafficGen):
    """PROX IRQ on the generator's node (NSB's ProxIrqGen): measures, sends nothing."""

    @property
    def tx_port_count(self) -> int:
        return 1

    def run_trial(self, trial: Trial) -> TrialResult:
        raise RunError(f"{self.name} measures interrupts and sends no traffic: use the irq "
                       "traffic profile (NSB's ProxIrqProfile) with it")
