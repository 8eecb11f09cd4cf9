"""When the first and the last frame of a trial went by, from a cumulative frame counter
read now and then (a generator's tx counter, a DUT's rx counter).

The pace is the frames counted between the first reading that shows the trial's
frames and the last that does not show them all, over the time between the two: the
whole trial but its two ends, so a counter that moves in bursts (af_packet's ring,
a busy core) changes it little. The two ends are that pace extrapolated: the first
frame went by the first reading's frames earlier, the last one the frames still to
come later; a reading taken before the first frame (or after the last) bounds its
end. So a trial's span is known to a few milliseconds with readings 10-20 ms apart,
where the readings' midpoints alone are only known to half their spacing.
"""

from __future__ import annotations

from collections.abc import Sequence

Reading = tuple[float, int]  # (seconds, frames counted by then)


def pace(readings: Sequence[Reading], base: int = 0,
         total: int | None = None) -> float | None:
    """Frames per second between the first reading past ``base`` and the last short of
    ``total`` (the last reading when no total is given); None when those are one."""
    inside = _inside(readings, base, total)
    if len(inside) < 2:
        return None
    (t1, n1), (tb, nb) = readings[inside[0]], readings[inside[-1]]
    return (nb - n1) / (tb - t1) if tb > t1 and nb > n1 else None


def span_s(readings: Sequence[Reading], total: int, base: int = 0) -> float | None:
    """Seconds from the first frame past ``base`` to the ``total``-th (None when no
    reading shows the end, or too few the frames in between)."""
    inside = _inside(readings, base, total)
    rate = pace(readings, base, total)
    if rate is None or not any(n >= total for _, n in readings[inside[-1]:]):
        return None
    i, j = inside[0], inside[-1]
    (t1, n1), (tb, nb) = readings[i], readings[j]
    first = t1 - (n1 - base) / rate
    if i > 0:  # the reading before the first frame bounds it
        first = max(first, readings[i - 1][0])
    last = tb + (total - nb) / rate
    done = next(t for t, n in readings[j + 1:] if n >= total)
    return min(last, done) - first


def _inside(readings: Sequence[Reading], base: int, total: int | None) -> list[int]:
    """The readings taken while frames went by: past ``base``, short of ``total``."""
    return [k for k, (_, n) in enumerate(readings)
            if n > base and (total is None or n < total)]
