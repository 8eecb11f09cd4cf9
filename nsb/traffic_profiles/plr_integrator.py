"""PLRsearch's integrator: the posterior mean and variance of a value (the log of the
critical load) over the prior's unit square, by importance-sampled Monte Carlo, as
CSIT's Integrator does it.

Samples come from a normal proposal around the posterior's focus (its mean and
covariance, carried from one search trial to the next), widened ``SCALE`` times and
truncated to the square; each is weighted by its likelihood over the proposal's
density. The focus is refitted from each stage's weighted samples, so the proposal
follows the posterior as it narrows, and the estimate comes from the later stages.
A fit can neither collapse nor claim certainty it does not have: a stage dominated
by a few samples moves the focus only half way, and the variance reported is
CSIT's "pessimistic" one, which also counts how far the estimate moves without the
heaviest sample. Seeded per integration (CSIT reseeds with 0), so a search repeats.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

SCALE = 5.0  # CSIT's scale_coeff: the proposal's covariance is this times the focus's
STAGES = 4
SAMPLES_PER_STAGE = 300
MIN_VARIANCE = 1e-16  # of a coordinate of the focus (a point in the unit square)
DRAWS_PER_SAMPLE = 1000  # draws outside the square before the proposal gives way

# (value, log-likelihood) at a point of the unit square
Integrand = Callable[[float, float], tuple[float, float]]


@dataclass(frozen=True)
class Focus:
    """Where the posterior's mass is in the unit square: mean and covariance."""

    mean: tuple[float, float] = (0.0, 0.0)
    cov: tuple[float, float, float] = (1.0, 1.0, 0.0)  # var x, var y, cov xy


@dataclass(frozen=True)
class Integral:
    """The value's posterior mean and (pessimistic) variance, and the focus found."""

    mean: float
    variance: float
    focus: Focus
    effective_samples: float


def integrate(integrand: Integrand, focus: Focus = Focus(), seed: int = 0,
              stages: int = STAGES, per_stage: int = SAMPLES_PER_STAGE) -> Integral:
    rng = random.Random(seed)
    kept: list[tuple[float, float]] = []  # (value, log weight) of the later stages
    for stage in range(stages):
        samples = _stage(integrand, focus, rng, per_stage)
        focus = _refit(focus, samples)
        if stage > 0 or stages == 1:
            kept += [(value, log_w) for value, log_w, _ in samples]
    mean, variance, effective = _pessimistic(kept)
    return Integral(mean, variance, focus, effective)


def _stage(integrand: Integrand, focus: Focus, rng: random.Random, count: int):
    """``count`` samples of the truncated proposal: (value, log weight, point). The
    weight divides by the proposal's density on the square (its normal density over
    the share of draws that fell inside), so stages with different proposals mix. A
    proposal that keeps missing the square gives way to the prior's own focus."""
    chol = _cholesky(focus)
    samples, draws, evaluated = [], 0, 0
    while len(samples) < count:
        if evaluated > 50 * count and samples:  # most points impossible: use what was found
            break
        drawn = _draw(focus.mean, chol, rng)
        if drawn is None:
            return _stage(integrand, Focus(), rng, count)
        point, log_q, tries = drawn
        draws, evaluated = draws + tries, evaluated + 1
        value, loglik = integrand(*point)
        if loglik > -math.inf:
            samples.append([value, loglik - log_q, point])
    inside = math.log(evaluated / draws)
    for sample in samples:
        sample[1] += inside
    return samples


def _cholesky(focus: Focus) -> tuple[float, float, float]:
    vx, vy, cxy = (SCALE * v for v in focus.cov)
    a = math.sqrt(max(vx, MIN_VARIANCE))
    b = cxy / a
    c = math.sqrt(max(vy - b * b, MIN_VARIANCE))
    return a, b, c


def _draw(mean, chol, rng: random.Random):
    """A proposal point inside the square, its log density and the draws it took;
    None when ``DRAWS_PER_SAMPLE`` draws all fell outside."""
    a, b, c = chol
    for tries in range(1, DRAWS_PER_SAMPLE + 1):
        z1, z2 = rng.gauss(0.0, 1.0), rng.gauss(0.0, 1.0)
        x, y = mean[0] + a * z1, mean[1] + b * z1 + c * z2
        if -1.0 < x < 1.0 and -1.0 < y < 1.0:
            return (x, y), -0.5 * (z1 * z1 + z2 * z2) - math.log(a * c), tries
    return None


def _normalised(samples) -> list[float]:
    top = max(s[1] for s in samples)
    weights = [math.exp(s[1] - top) for s in samples]
    total = sum(weights)
    return [w / total for w in weights]


def _refit(focus: Focus, samples) -> Focus:
    """The stage's weighted mean and covariance; half way from the old focus when a
    few samples carry the weight (fewer than a tenth effective)."""
    weights = _normalised(samples)
    mx = sum(w * s[2][0] for w, s in zip(weights, samples, strict=True))
    my = sum(w * s[2][1] for w, s in zip(weights, samples, strict=True))
    vx = sum(w * (s[2][0] - mx) ** 2 for w, s in zip(weights, samples, strict=True))
    vy = sum(w * (s[2][1] - my) ** 2 for w, s in zip(weights, samples, strict=True))
    cxy = sum(w * (s[2][0] - mx) * (s[2][1] - my) for w, s in zip(weights, samples, strict=True))
    if 1.0 / sum(w * w for w in weights) < 0.1 * len(samples):
        (ox, oy), (ovx, ovy, ocxy) = focus.mean, focus.cov
        mx, my = (mx + ox) / 2, (my + oy) / 2
        vx, vy, cxy = (vx + ovx) / 2, (vy + ovy) / 2, (cxy + ocxy) / 2
    return Focus((mx, my), (max(vx, MIN_VARIANCE), max(vy, MIN_VARIANCE), cxy))


def _moments(samples) -> tuple[float, float]:
    weights = _normalised(samples)
    mean = sum(w * s[0] for w, s in zip(weights, samples, strict=True))
    variance = sum(w * (s[0] - mean) ** 2 for w, s in zip(weights, samples, strict=True))
    return mean, variance


def _pessimistic(samples) -> tuple[float, float, float]:
    """CSIT's dual tracker: the variance of all samples and of all but the heaviest
    averaged, plus half their means' difference squared; and the effective samples."""
    mean, variance = _moments(samples)
    heaviest = max(range(len(samples)), key=lambda i: samples[i][1])
    rest = samples[:heaviest] + samples[heaviest + 1:]
    rest_mean, rest_variance = _moments(rest) if rest else (mean, variance)
    weights = _normalised(samples)
    return (mean, (variance + rest_variance) / 2 + ((mean - rest_mean) / 2) ** 2,
            1.0 / sum(w * w for w in weights))
