"""NSB's ``framesize`` weights (``{64B: 70, 1518B: 30}``) as the frames nsb sends.

NSB's weights are percentages of the line rate in bytes, not of the frames: its
TRex RFC 2544 profile (``rfc2544.py``, ``_create_imix_data`` and
``_create_streams``) normalises the weights of a direction to 100 and gives the
stream of each size ``weight * rate / 100`` % of the line rate (TRex's
``percentage``, on the wire with preamble and gap). A size of weight ``w``
therefore sends ``w / (size + 20)`` frames for every share of bandwidth: 70 %
of 64 B frames and 30 % of 1518 B ones are 42 small frames to one large.

nsb sends a mix as a cycle of at most ``frames.MAX_CYCLE`` frames, so the
frame counts are the whole numbers whose bandwidth shares come closest to
NSB's weights. One size alone is a plain frame size.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from nsb import frames
from nsb.errors import TaskError
from nsb.frames import Frame

# NSB reads a size key with ``int(size.upper().replace('B', ''))``: 64B, 373b, 64
_SIZE = re.compile(r"^\s*([0-9]+)\s*[Bb]?\s*$")
_WEIGHT = re.compile(r"^\s*[0-9]+\s*$")
WIRE_OVERHEAD_B = 20  # preamble, start delimiter, inter-frame gap
DEFAULT = {64: 100.0}  # NSB's mix when every weight is 0

Error = Callable[..., TaskError]  # error(message, *key path below the mapping)


def parse_weights(raw: object, error: Error) -> dict[int, int]:
    """``{64B: "70", 1518B: 30}`` as ``{64: 70, 1518: 30}`` (sizes NSB gives weight 0
    included); ``error(message, *subpath)`` locates a bad key or weight."""
    if not isinstance(raw, Mapping):
        raise error(f"expected frame sizes with their weights (e.g. {{64B: 100}}), got "
                    f"{type(raw).__name__}")
    weights: dict[int, int] = {}
    for key, value in raw.items():
        match = _SIZE.match(str(key))
        if not match:
            raise error(f"'{key}' is not a frame size; NSB writes sizes as 64B, 128B, ...",
                        key)
        size = int(match.group(1))
        if not frames.MIN_FRAME <= size <= frames.MAX_FRAME:
            raise error(f"frame size {size} is outside {frames.MIN_FRAME}-{frames.MAX_FRAME} "
                        "bytes (with FCS)", key)
        weight = _weight(value)
        if weight is None:
            raise error(f"the weight of {key} must be a whole number of percent (0-100), got "
                        f"{value!r}", key)
        if size in weights:
            raise error(f"frame size {size} is given twice", key)
        weights[size] = weight
    return weights


def _weight(value: object) -> int | None:
    """NSB's ``int(weight)``: a number (a fraction is cut, as NSB does) or digits."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return int(value) if value >= 0 else None
    if isinstance(value, str) and _WEIGHT.match(value):
        return int(value)
    return None


def normalized(weights: Mapping[int, int]) -> dict[int, float]:
    """NSB's ``_create_imix_data``: the weights as percentages adding up to 100, sizes
    of weight 0 left out; all 0 (or none) is 64 B alone."""
    total = sum(weights.values())
    if total <= 0:
        return dict(DEFAULT)
    return {size: 100.0 * weight / total for size, weight in sorted(weights.items())
            if weight > 0}


def frame_of(percent: Mapping[int, float]) -> Frame:
    """What a trial sends for NSB's normalised weights: one size, or a byte-weighted mix."""
    if len(percent) == 1:
        return next(iter(percent))
    return frames.from_weights(frame_counts(percent))


def frame_counts(percent: Mapping[int, float], max_cycle: int = frames.MAX_CYCLE
                 ) -> dict[int, int]:
    """Frames per size in one cycle whose bandwidth shares are closest to ``percent``
    (the largest difference in share is smallest; a shorter cycle on a tie)."""
    sizes = sorted(percent)
    share = {s: percent[s] / 100.0 for s in sizes}
    rate = {s: share[s] / (s + WIRE_OVERHEAD_B) for s in sizes}  # frames per share of bw
    total_rate = sum(rate.values())
    best: tuple[float, dict[int, int]] | None = None
    for cycle in range(len(sizes), max_cycle + 1):
        counts = _apportion({s: cycle * rate[s] / total_rate for s in sizes}, cycle)
        error = max(abs(b - share[s]) for s, b in bandwidth_shares(counts).items())
        if best is None or error < best[0] - 1e-12:
            best = (error, counts)
    assert best is not None
    return best[1]


def bandwidth_shares(counts: Mapping[int, int]) -> dict[int, float]:
    """The share of the line each size takes when ``counts`` frames make a cycle."""
    wire = {s: n * (s + WIRE_OVERHEAD_B) for s, n in counts.items()}
    total = sum(wire.values())
    return {s: w / total for s, w in wire.items()}


def _apportion(quotas: dict[int, float], cycle: int) -> dict[int, int]:
    """Whole frame counts adding up to ``cycle``, each at least 1, nearest ``quotas``
    (largest remainders)."""
    counts = {s: max(1, int(q)) for s, q in quotas.items()}
    while sum(counts.values()) < cycle:
        size = max(counts, key=lambda s: (quotas[s] - counts[s], -s))
        counts[size] += 1
    while sum(counts.values()) > cycle:
        size = min((s for s in counts if counts[s] > 1),
                   key=lambda s: (quotas[s] - counts[s], s))
        counts[size] -= 1
    return counts
