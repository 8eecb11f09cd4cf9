"""PLRsearch's model (FD.io CSIT): the two fitting functions and the Bayesian estimate
of the critical load from trials at various loads.

A fitting function gives the average frames lost per second at an offered load for
two parameters: ``mrr`` (the rate the DUT forwards under overload) and ``spread`` (how
wide the load range where loss starts is). Both are integrals from 0 to the load of
a step smoothed by ``spread`` around ``mrr``: the logistic one ("stretch") and the
normal one ("erf"). A trial's loss count is taken as Poisson with that average times
its duration. With a prior uniform in ``mrr`` and in ``log(spread)``, the posterior
is integrated numerically on a grid that narrows onto where its mass is; the
critical load of a parameter pair is the load whose average loss ratio is the target.
Returned are the posterior mean and standard deviation of the critical load.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

SQRT_PI = math.sqrt(math.pi)
LOG_2SQRT_PI = math.log(2 * SQRT_PI)
GRID = 24  # points along each principal axis of the posterior
SIGMAS = 6.0  # how far out the grid goes, in the posterior's standard deviations


@dataclass(frozen=True)
class Observation:
    load_pps: float
    duration_s: float
    lost: int


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


FITS: dict[str, Callable[[float, float, float], float]] = {
    "stretch": log_loss_stretch, "erf": log_loss_erf}


def log_likelihood(fit, observations: Sequence[Observation], mrr: float,
                   spread: float) -> float:
    """Poisson log-likelihood of the observed loss counts (without the log k! terms,
    the same for every parameter pair)."""
    total = 0.0
    for obs in observations:
        log_mean = fit(obs.load_pps, mrr, spread) + math.log(obs.duration_s)
        if log_mean == -math.inf:
            if obs.lost:
                return -math.inf
            continue
        total += obs.lost * log_mean - math.exp(min(log_mean, 700.0))
    return total


def critical_load(fit, mrr: float, spread: float, ratio: float, upper: float) -> float:
    """The load where the average loss ratio (loss per second / load) is ``ratio``:
    the ratio grows with the load, so bisection (in log of the load)."""
    target = math.log(ratio)
    low, high = math.log(upper * 1e-9), math.log(max(upper, mrr / (1 - ratio) + 40 * spread))
    for _ in range(45):
        mid = (low + high) / 2
        if fit(math.exp(mid), mrr, spread) - mid < target:
            low = mid
        else:
            high = mid
    return math.exp((low + high) / 2)


@dataclass(frozen=True)
class Estimate:
    mean: float
    stdev: float


def estimate(fit, observations: Sequence[Observation], ratio: float,
             max_rate: float) -> Estimate:
    """Posterior mean and standard deviation of the critical load under ``fit``."""
    box = (0.0, 2.0 * max_rate, math.log(max_rate * 1e-5), math.log(max_rate))

    def loglik(m: float, v: float) -> float:
        if not (box[0] < m <= box[1] and box[2] <= v <= box[3]):
            return -math.inf
        return log_likelihood(fit, observations, m, math.exp(v))

    mode = _mode(loglik, box)
    points = _posterior(loglik, mode, _covariance(loglik, mode, box))
    loads = [(w, critical_load(fit, m, math.exp(v), ratio, max_rate)) for w, m, v in points]
    mean = sum(w * x for w, x in loads)
    var = sum(w * (x - mean) ** 2 for w, x in loads)
    return Estimate(mean, math.sqrt(max(var, 0.0)))


def combined(estimates: Sequence[Estimate]) -> Estimate:
    """The fits' estimates as one: an equal mixture's mean and standard deviation."""
    mean = sum(e.mean for e in estimates) / len(estimates)
    var = sum(e.stdev ** 2 + (e.mean - mean) ** 2 for e in estimates) / len(estimates)
    return Estimate(mean, math.sqrt(var))


def _mode(loglik, box) -> tuple[float, float]:
    """The posterior's mode: the best point of a coarse grid over the prior, then
    Nelder-Mead from there (it follows the ridge the two parameters make)."""
    m_lo, m_hi, v_lo, v_hi = box
    cells = [(m_lo + (m_hi - m_lo) * (i + 0.5) / 32, v_lo + (v_hi - v_lo) * (j + 0.5) / 16)
             for i in range(32) for j in range(16)]
    best = max(cells, key=lambda c: loglik(*c))
    simplex = [best, (best[0] + (m_hi - m_lo) / 64, best[1]),
               (best[0], best[1] + (v_hi - v_lo) / 32)]
    for _ in range(3):  # restarted: a collapsed simplex gets fresh directions
        simplex = _nelder_mead(loglik, simplex)
        top = simplex[0]
        size = max(abs(p[0] - top[0]) for p in simplex[1:]) or (m_hi - m_lo) * 1e-6
        simplex = [top, (top[0] + 10 * size, top[1]), (top[0], top[1] + 0.01)]
    return simplex[0]


def _nelder_mead(f, simplex, iterations: int = 300):
    """Maximises ``f`` from a 2-D simplex; the simplex, best point first."""
    points = sorted(simplex, key=lambda p: -f(*p))
    for _ in range(iterations):
        best, mid, worst = points
        centre = ((best[0] + mid[0]) / 2, (best[1] + mid[1]) / 2)

        def along(t, c=centre, w=worst):
            return (c[0] + t * (w[0] - c[0]), c[1] + t * (w[1] - c[1]))

        fb, fm, fw = f(*best), f(*mid), f(*worst)
        reflected = along(-1.0)
        fr = f(*reflected)
        if fr > fb:
            expanded = along(-2.0)
            points = [expanded if f(*expanded) > fr else reflected, best, mid]
        elif fr > fm:
            points = [best, reflected, mid]
        else:
            inner = along(0.5)
            if f(*inner) > fw:
                points = [best, inner, mid]
            else:
                points = [best, ((best[0] + mid[0]) / 2, (best[1] + mid[1]) / 2),
                          ((best[0] + worst[0]) / 2, (best[1] + worst[1]) / 2)]
        points.sort(key=lambda p: -f(*p))
    return points


def _covariance(loglik, mode, box) -> tuple[float, float, float]:
    """(var m, var v, cov) of the posterior near its mode (Laplace: the inverse of the
    log-likelihood's curvature, by finite differences at steps where it falls by about
    one); the axes' own widths where the curvature is not that of a peak."""
    top = loglik(*mode)
    steps = []
    for axis, span in ((0, box[1] - box[0]), (1, box[3] - box[2])):
        h = span * 1e-3
        for _ in range(80):
            point = list(mode)
            point[axis] += h
            drop = top - loglik(*point)
            if 0.5 <= drop <= 2.0 or (drop > 2.0 and h < span * 1e-12):
                break
            h = h / 2 if drop > 2.0 else h * 2
            if h > span:
                h = span
                break
        steps.append(h)
    hm, hv = steps
    m, v = mode

    def f(dm, dv):
        value = loglik(m + dm * hm, v + dv * hv)
        return value if value > -math.inf else top - 50.0

    a = -(f(1, 0) - 2 * top + f(-1, 0)) / hm ** 2
    c = -(f(0, 1) - 2 * top + f(0, -1)) / hv ** 2
    b = -(f(1, 1) - f(1, -1) - f(-1, 1) + f(-1, -1)) / (4 * hm * hv)
    det = a * c - b * b
    if a <= 0 or c <= 0 or det <= 0:
        return hm ** 2, hv ** 2, 0.0
    return c / det, a / det, -b / det


def _posterior(loglik, mode, cov) -> list[tuple[float, float, float]]:
    """(weight, mrr, log spread) on a grid along the covariance's principal axes, out
    to ``SIGMAS`` standard deviations, weights summing to 1 (the prior is flat)."""
    var_m, var_v, cov_mv = cov
    half_trace, det = (var_m + var_v) / 2, var_m * var_v - cov_mv ** 2
    gap = math.sqrt(max(half_trace ** 2 - det, 0.0))
    axes = []
    for value in (half_trace + gap, max(half_trace - gap, 1e-300)):
        vector = (cov_mv, value - var_m) if abs(cov_mv) > 1e-300 else \
            ((1.0, 0.0) if (value == half_trace + gap) == (var_m >= var_v) else (0.0, 1.0))
        norm = math.hypot(*vector)
        axes.append((math.sqrt(value), vector[0] / norm, vector[1] / norm))
    n = GRID
    cells = []
    for i in range(n):
        for j in range(n):
            a, b = SIGMAS * (2 * (i + 0.5) / n - 1), SIGMAS * (2 * (j + 0.5) / n - 1)
            (s1, x1, y1), (s2, x2, y2) = axes
            cells.append((mode[0] + a * s1 * x1 + b * s2 * x2,
                          mode[1] + a * s1 * y1 + b * s2 * y2))
    logs = [loglik(m, v) for m, v in cells]
    top = max(logs)
    weights = [math.exp(x - top) if x > -math.inf else 0.0 for x in logs]
    total = sum(weights)
    return [(w / total, m, v) for w, (m, v) in zip(weights, cells, strict=True) if w > 0]
