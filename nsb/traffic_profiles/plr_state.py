"""Where a PLRsearch stands: its trials counted as CSIT counts them, each fit's posterior
after the last trial, the combined estimate, where the next trial goes and what
limits the answer."""

from __future__ import annotations

import math
from dataclasses import dataclass

from nsb import units
from nsb.events import LimitedBy
from nsb.traffic_profiles import plr_fit, plr_integrator
from nsb.traffic_profiles.plr_integrator import Focus, Integral
from nsb.trial import TrialResult

AT_BOUND = 1e-3  # an estimate whose spread comes this close (relative) to a bound is at it


@dataclass(frozen=True)
class Estimate:
    """The critical load (pps) and its spread, one standard deviation."""

    mean: float
    stdev: float


class SearchState:
    """The trials so far, the fits' posteriors, and where the next trial goes."""

    def __init__(self, min_rate: float, max_rate: float, ratio: float):
        self.min_rate, self.max_rate, self.ratio = min_rate, max_rate, ratio
        self.results: list[TrialResult] = []
        self.observations: list[plr_fit.Observation] = []
        self.fits: dict[str, Integral] = {}
        self._focus: dict[str, Focus] = {name: Focus() for name in plr_fit.FITS}
        self.last: Estimate | None = None
        self.zeros = 0  # trials in a row that did not lose at the target ratio
        self.lossy = [max_rate]  # CSIT's lossy loads: 4 copies per loss after zeros

    def first_load(self) -> float:
        return (self.min_rate + self.max_rate) / 2

    def add(self, result: TrialResult) -> Estimate:
        trial = result.trial
        counted = plr_fit.observation(trial.rate_pps, trial.duration_s, result.tx_packets,
                                      result.rx_packets)
        self.results.append(result)
        self.observations.append(counted)
        self.zeros += 1
        if counted.lost >= counted.intended * self.ratio:
            self.lossy = sorted(self.lossy + [trial.rate_pps] * (4 * self.zeros))
            self.zeros = 0
        for name, fit in plr_fit.FITS.items():
            self.fits[name] = plr_integrator.integrate(self._integrand(fit), self._focus[name])
            self._focus[name] = self.fits[name].focus
        self.last = self._combined()
        return self.last

    def _integrand(self, fit):
        observations, low, high = list(self.observations), self.min_rate, self.max_rate

        def value_and_loglik(x_mrr: float, x_spread: float) -> tuple[float, float]:
            mrr, spread = plr_fit.parameters(x_mrr, x_spread, high)
            loglik = plr_fit.log_likelihood(fit, observations, mrr, spread)
            if loglik == -math.inf:
                return 0.0, loglik
            return math.log(plr_fit.critical_load(fit, mrr, spread, self.ratio, low, high)), \
                loglik
        return value_and_loglik

    def _combined(self) -> Estimate:
        """CSIT's combination of the fits (in log of the load): the mean of their means;
        their variances' mean plus half their means' difference, squared; the interval
        one deviation either side, its middle the estimate (within the bounds)."""
        means = [f.mean for f in self.fits.values()]
        variances = [f.variance for f in self.fits.values()]
        avg = sum(means) / len(means)
        spread = math.sqrt(sum(variances) / len(variances) + ((means[0] - means[-1]) / 2) ** 2)
        low, high = math.exp(avg - spread), math.exp(avg + spread)
        mean = min(self.max_rate, max(self.min_rate, (low + high) / 2))
        return Estimate(mean, max(mean - low, 0.0))

    def next_load(self) -> float:
        """CSIT's: the upper bound second, then twice the rate forwarded (as the loss
        target allows), then the fits' mean, pulled up towards the lowest lossy load
        after trials without loss at the target."""
        count, last = len(self.results), self.observations[-1]
        if count == 1:
            load = self.max_rate
        elif count <= 3:
            load = last.load_pps * (1 - last.lost / last.intended) / (1 - self.ratio)
        else:
            load = sum(math.exp(f.mean) for f in self.fits.values()) / len(self.fits)
            if self.zeros > 0:
                if self.lossy[0] > load:
                    weight = 2.0 ** (1 - self.zeros)
                    load = (self.lossy[0] + weight * load) / (1 + weight)
                if len(self.lossy) > 3:
                    self.lossy = self.lossy[3:]
        return min(self.max_rate, max(self.min_rate, load))

    def answer(self) -> tuple[Estimate, LimitedBy, str]:
        """The last estimate, what limits it and why, in words."""
        estimate, text = self.last, units.pps_text
        reach = estimate.mean + estimate.stdev
        if self._generator_set_it(estimate.mean):
            sent = max(r.tx_rate_pps for r in self.results)
            mean = min(estimate.mean, sent)
            return Estimate(mean, estimate.stdev), LimitedBy.GENERATOR, (
                f"the generator could not send the loads above the estimate (it sent at "
                f"most {text(sent)}; unsent frames count as lost): {text(mean)} +- "
                f"{text(estimate.stdev)} is what it and the DUT reached")
        if reach >= self.max_rate * (1 - AT_BOUND):
            return estimate, LimitedBy.UPPER_BOUND, (
                f"the critical load at loss ratio {self.ratio:g} is at or above the upper "
                f"bound ({text(self.max_rate)}): the search cannot tell how much higher")
        if estimate.mean - estimate.stdev <= self.min_rate * (1 + AT_BOUND):
            return estimate, LimitedBy.LOWER_BOUND, (
                f"the critical load at loss ratio {self.ratio:g} is at or below the lower "
                f"bound ({text(self.min_rate)}): the search cannot tell how much lower")
        return estimate, LimitedBy.DUT, (f"critical load at loss ratio {self.ratio:g}: "
                                         f"{text(estimate.mean)} +- {text(estimate.stdev)}")

    def _generator_set_it(self, load: float) -> bool:
        """The loss that bounds the estimate from above was the generator's: the lowest
        lossy trial above ``load`` (or any at or below it) had more frames unsent than
        lost by the DUT, or was generator-limited."""
        lossy = [(r, o) for r, o in zip(self.results, self.observations, strict=True)
                 if o.lost >= o.intended * self.ratio and o.lost > 0]
        above = [pair for pair in lossy if pair[1].load_pps > load]
        bounding = [min(above, key=lambda pair: pair[1].load_pps)] if above else []
        return any(r.generator_limited and r.lost_packets <= 0 or
                   o.unsent > 0 and o.unsent >= max(0, r.lost_packets)
                   for r, o in bounding + [p for p in lossy if p[1].load_pps <= load])

    def nearest_below(self, load: float) -> TrialResult:
        """The trial at the highest load not above ``load`` (the lowest one else)."""
        below = [r for r in self.results if r.trial.rate_pps <= load]
        if below:
            return max(below, key=lambda r: r.trial.rate_pps)
        return min(self.results, key=lambda r: r.trial.rate_pps)

    def evidence(self) -> dict:
        """What the estimate rests on."""
        lossy = [o for o in self.observations if o.lost >= o.intended * self.ratio]
        return {"trials": len(self.results), "lossy_trials": len(lossy),
                "loss_free_s": sum(o.duration_s for o in self.observations if o.lost == 0),
                "generator_limited_trials": sum(r.generator_limited for r in self.results),
                "loads_pps": [min(o.load_pps for o in self.observations),
                              max(o.load_pps for o in self.observations)]}

