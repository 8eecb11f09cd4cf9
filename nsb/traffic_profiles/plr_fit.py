"""PLRsearch's model (FD.io CSIT's PLRsearch, draft-vpolak-bmwg-plrsearch): the two
fitting functions, the likelihood of a trial's loss count, the prior over their
parameters and the critical load of a parameter pair.

A fitting function gives the average frames lost per second at an offered load for
two parameters: ``mrr`` (the rate the DUT forwards under overload) and ``spread``
(how wide the load range where loss starts is). Both are integrals from 0 to the load
of a step smoothed by ``spread`` around ``mrr``: the logistic one ("stretch") and the
normal one ("erf"), so the loss rate never grows faster than the load.

Where nsb's fits differ from CSIT's code, and why:

- stretch is CSIT's ``lfit_stretch``: ``spread * (log(1 + e^chi) - log(1 + e^chi0))``.
  The draft's formula has it times ``(1 + e^(-mrr/spread))``, which lets loss grow
  faster than the load; both agree when mrr >> spread.
- erf is the integral of the normal step: ``spread * (g(chi) - g(chi0))`` with
  ``g(u) = u (1 + erf u) / 2 + e^(-u^2) / (2 sqrt(pi))``: the draft's formula, with its
  constant ``1/sqrt(pi)`` (the draft also divides by ``(1 + erf(mrr/spread)) / 2``,
  1 when mrr >> spread). CSIT's ``lfit_erf`` uses ``sqrt(2/pi)`` there (``acos(0)`` is
  pi/2) and ``chi`` for ``chi0`` in one term: a bump of about 0.117 spread at the mrr,
  predicting 2-7 times the loss just below it.

The likelihood is CSIT's since 2020: a trial's loss count is geometric with the
fit's expected loss (frames lost per second times the seconds of frames really
sent), and frames the generator did not send count as lost (CSIT since 2024). The
prior is CSIT's: in the unit square, mrr - 1 Lomax-distributed with scale max_rate/2
and spread log-uniform between 1 and mrr. The critical load is found between the
search's bounds, so an estimate never leaves them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

SQRT_PI = math.sqrt(math.pi)
LOG_2SQRT_PI = math.log(2 * SQRT_PI)
TOLERANCE = 1e-9  # of the critical load, relative: far below a frame per second
MAX_STEPS = 200


ROUNDING_FRAMES = 4  # a generator's streams round rate x duration: so many frames apart


@dataclass(frozen=True)
class Observation:
    """One trial as PLRsearch counts it: its offered load, the frames asked for and
    really sent, those left unsent, and the frames lost (CSIT's plr_loss_count:
    unsent ones included)."""

    load_pps: float
    duration_s: float
    sent: int
    intended: int
    lost: int
    unsent: int = 0


def observation(load_pps: float, duration_s: float, sent: int, received: int) -> Observation:
    """CSIT's accounting: loss ratio (lost + unsent) / max(sent, intended), and the loss
    count ``min(intended, int(intended * ratio + 0.9))``. The few frames a generator's
    streams send or leave unsent by rounding their rates are not loss (with a target
    of 1e-7 one frame would be)."""
    intended = max(1, round(load_pps * duration_s))
    unsent = intended - sent if intended - sent > ROUNDING_FRAMES else 0
    ratio = (max(0, sent - received) + unsent) / max(sent, intended)
    return Observation(load_pps, duration_s, sent, intended,
                       min(intended, int(intended * ratio + 0.9)), unsent)


def _log_diff(big: float, small: float) -> float:
    """log(exp(big) - exp(small)) for big > small."""
    return big + math.log(-math.expm1(small - big)) if small < big else -math.inf


def _log_softplus(u: float) -> float:
    """log(log(1 + e^u)), kept exact for very negative u."""
    if u < -30:
        return u
    return math.log(max(u, 0.0) + math.log1p(math.exp(-abs(u))))


def log_loss_stretch(load: float, mrr: float, spread: float) -> float:
    """log of frames lost per second: spread * (softplus(chi) - softplus(chi0))."""
    chi, chi0 = (load - mrr) / spread, -mrr / spread
    return math.log(spread) + _log_diff(_log_softplus(chi), _log_softplus(chi0))


def _log_g(u: float) -> float:
    """log of g(u) = u (1 + erf u) / 2 + exp(-u^2) / (2 sqrt(pi)), g' = (1 + erf u) / 2;
    an asymptotic series where the two terms would cancel."""
    if u > -4:
        return math.log(u * math.erfc(-u) / 2 + math.exp(-u * u) / (2 * SQRT_PI))
    z2 = u * u
    series = 1 / (2 * z2) - 3 / (4 * z2 * z2) + 15 / (8 * z2 ** 3)
    return -z2 - LOG_2SQRT_PI + math.log(series)


def log_loss_erf(load: float, mrr: float, spread: float) -> float:
    """log of frames lost per second: spread * (g(chi) - g(chi0))."""
    chi, chi0 = (load - mrr) / spread, -mrr / spread
    return math.log(spread) + _log_diff(_log_g(chi), _log_g(chi0))


def log_step_stretch(load: float, mrr: float, spread: float) -> float:
    """log of the stretch fit's slope, the logistic step itself: -softplus(-chi)."""
    u = -(load - mrr) / spread
    return -(u + math.log1p(math.exp(-u))) if u > 0 else -math.log1p(math.exp(u))


def log_step_erf(load: float, mrr: float, spread: float) -> float:
    """log of the erf fit's slope, the normal step (1 + erf chi) / 2."""
    chi = (load - mrr) / spread
    if chi > -5:
        return math.log(math.erfc(-chi) / 2)
    z2 = chi * chi  # erfc(x) ~ e^(-x^2) / (x sqrt(pi)) (1 - 1 / (2 x^2) + 3 / (4 x^4))
    return -z2 - math.log(-chi * 2 * SQRT_PI) + math.log(1 - 1 / (2 * z2) + 3 / (4 * z2 * z2))


@dataclass(frozen=True)
class Fit:
    """A fitting function: log of the frames lost per second at a load, and log of its
    slope (the step it integrates), for finding the critical load by Newton's method."""

    log_loss: Callable[[float, float, float], float]
    log_slope: Callable[[float, float, float], float]

    def __call__(self, load: float, mrr: float, spread: float) -> float:
        return self.log_loss(load, mrr, spread)


FITS: dict[str, Fit] = {"stretch": Fit(log_loss_stretch, log_step_stretch),
                        "erf": Fit(log_loss_erf, log_step_erf)}


def _log_plus(a: float, b: float) -> float:
    """log(e^a + e^b)."""
    high, low = (a, b) if a >= b else (b, a)
    return high + math.log1p(math.exp(low - high)) if low > -math.inf else high


def log_likelihood(fit: Fit, observations: Sequence[Observation], mrr: float,
                   spread: float) -> float:
    """Geometric log-likelihood of the loss counts (CSIT's): with lam the expected
    loss of a trial, ``-k log(1 + 1/lam) - log(1 + lam)``."""
    total = 0.0
    for obs in observations:
        log_lam = fit(obs.load_pps, mrr, spread) + math.log(max(obs.sent, 1) / obs.load_pps)
        if log_lam == -math.inf:
            if obs.lost:
                return -math.inf
            continue
        total -= obs.lost * _log_plus(0.0, -log_lam) + _log_plus(0.0, log_lam)
    return total


def critical_load(fit: Fit, mrr: float, spread: float, ratio: float, min_rate: float,
                  max_rate: float) -> float:
    """The load between the bounds whose average loss ratio (loss per second / load)
    is ``ratio``, a bound when the ratio stays on one side of it. The ratio grows with
    the load: Newton's method on the log of the ratio, kept inside the bracket (a
    bisection where a step would leave it or gain too little), to a billionth."""
    target = math.log(ratio)
    log_loss = fit.log_loss

    low, high = min_rate, max_rate
    if log_loss(low, mrr, spread) - math.log(low) >= target:
        return min_rate
    if log_loss(high, mrr, spread) - math.log(high) <= target:
        return max_rate
    load = min(high, max(low, mrr))
    step_before = high - low
    for _ in range(MAX_STEPS):
        lost = log_loss(load, mrr, spread)
        value = lost - math.log(load) - target
        if value == 0:
            return load
        if value < 0:
            low = load
        else:
            high = load
        if high - low <= TOLERANCE * high:
            break
        slope = math.exp(fit.log_slope(load, mrr, spread) - lost) - 1 / load \
            if value > -math.inf else 0.0
        step = value / slope if slope > 0 else math.inf
        newton = load - step
        if not low < newton < high or abs(step) > step_before / 2:
            newton = (low + high) / 2
        step_before, load = abs(newton - load), newton
    return (low + high) / 2


def parameters(x_mrr: float, x_spread: float, max_rate: float) -> tuple[float, float]:
    """CSIT's prior: a point of the open square (-1, 1)^2 as (mrr, spread); uniform
    there, mrr - 1 is Lomax (scale max_rate / 2) and spread log-uniform in (1, mrr)."""
    mrr = max_rate * (1.0 / (x_mrr + 1.0) - 0.5) + 1.0
    spread = math.exp((x_spread + 1.0) / 2.0 * math.log(mrr))
    return mrr, spread
