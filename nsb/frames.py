"""What a trial sends: frames of one size, or a mix of sizes (IMIX).

A mix is written as weights (``{64: 7, 594: 4, 1518: 1}``, the "simple IMIX"
of 7:4:1) or as an RFC 6985 genome (``aaaaaaaddg``: one letter per frame, in
the order they are sent). Weights are spread evenly over one cycle, so a
short trial sends the same proportions as a long one. Rates, Mbps and % of
line rate of a mix use its mean frame size; results name it by its label
(``IMIX``) and record its sizes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

# RFC 6985 section 4, table 1 ('z', the interface MTU, depends on the port)
GENOME_SIZES = {"a": 64, "b": 128, "c": 256, "d": 512, "e": 1024, "f": 1280, "g": 1518,
                "h": 2112, "i": 9000}
SIMPLE_IMIX = {64: 7, 594: 4, 1518: 1}
MIN_FRAME, MAX_FRAME = 64, 9216
MAX_CYCLE = 128  # frames in one cycle: PROX's limit for its imix command
IMIX_NAME = "IMIX"


@dataclass(frozen=True)
class FrameMix:
    """Frame sizes (FCS included) sent one after the other, cycle after cycle."""

    sequence: tuple[int, ...]
    label: str = IMIX_NAME

    @property
    def avg_size(self) -> float:
        return sum(self.sequence) / len(self.sequence)

    @property
    def weights(self) -> dict[int, int]:
        return dict(sorted(Counter(self.sequence).items()))

    @property
    def largest(self) -> int:
        return max(self.sequence)

    @property
    def most_common(self) -> int:
        return Counter(self.sequence).most_common(1)[0][0]

    def describe(self) -> dict:
        """What results record beside the label."""
        return {"label": self.label, "weights": {str(k): v for k, v in self.weights.items()},
                "avg_size": round(self.avg_size, 2), "cycle": len(self.sequence)}

    def __str__(self) -> str:
        return self.label


Frame = int | FrameMix


def from_weights(weights: dict, label: str = IMIX_NAME) -> FrameMix:
    """Sizes in proportion to integer weights, interleaved (smooth weighted round robin)."""
    parsed = {}
    for size, weight in weights.items():
        size_value = int(size)
        if not MIN_FRAME <= size_value <= MAX_FRAME:
            raise ValueError(f"frame size {size} is outside {MIN_FRAME}-{MAX_FRAME}")
        if not isinstance(weight, int) or isinstance(weight, bool) or weight < 1:
            raise ValueError(f"the weight of {size} must be a whole number of at least 1, "
                             f"got {weight!r}")
        parsed[size_value] = weight
    if not parsed:
        raise ValueError("a mix needs at least one frame size")
    total = sum(parsed.values())
    if total > MAX_CYCLE:
        raise ValueError(f"the weights add up to {total}; at most {MAX_CYCLE} frames make one "
                         "cycle (divide them by a common factor)")
    current = dict.fromkeys(parsed, 0)
    sequence = []
    for _ in range(total):
        for size, weight in parsed.items():
            current[size] += weight
        chosen = max(current, key=lambda s: (current[s], -s))
        current[chosen] -= total
        sequence.append(chosen)
    return FrameMix(tuple(sequence), label)


def from_genome(genome: str, label: str = IMIX_NAME) -> FrameMix:
    """An RFC 6985 genome: each letter one frame, sent in the order written."""
    unknown = sorted({c for c in genome if c not in GENOME_SIZES})
    if unknown:
        known = ", ".join(f"{k}={v}" for k, v in GENOME_SIZES.items())
        raise ValueError(f"genome letters {', '.join(unknown)} are not known; RFC 6985 "
                         f"letters: {known}")
    if not genome or len(genome) > MAX_CYCLE:
        raise ValueError(f"a genome has 1 to {MAX_CYCLE} letters, got {len(genome)}")
    return FrameMix(tuple(GENOME_SIZES[c] for c in genome), label)


def parse_mix(value) -> FrameMix:
    """A profile's ``imix`` option: weights by size, or a genome string."""
    if isinstance(value, str):
        return from_genome(value.strip())
    if isinstance(value, dict):
        return from_weights(value)
    raise ValueError(f"expected weights by frame size or an RFC 6985 genome, got {value!r}")


def is_mix_name(value) -> bool:
    return isinstance(value, str) and value.strip().upper() == IMIX_NAME


def avg_size(frame: Frame) -> float:
    """The mean frame size: what rates and line-rate shares are computed with."""
    return frame.avg_size if isinstance(frame, FrameMix) else float(frame)


def largest(frame: Frame) -> int:
    return frame.largest if isinstance(frame, FrameMix) else int(frame)


def json_value(frame: Frame) -> int | str:
    """How results name the frame size: the number, or the mix's label."""
    return frame.label if isinstance(frame, FrameMix) else int(frame)


def sort_key(value) -> tuple:
    """Frame sizes as results hold them (numbers, mix labels): numbers first, ascending."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, float(value), "")
    return (1, 0.0, str(value))



def shown(value) -> str:
    """A frame size as results hold it, for people: ``64 B`` or ``IMIX``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:g} B"
    return str(value)
