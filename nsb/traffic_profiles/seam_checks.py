"""What a traffic profile hands the measurer, and a generator hands back, checked at the
seam: a plugin that passes something else stops the run with one line naming the
plugin, what it passed and what the seam takes, not with an AttributeError deep in
nsb. Where a plugin author's natural value has one meaning (a ``Measurement`` for the
answer's trial, a verdict's string for ``limited_by``), it is taken as that."""

from __future__ import annotations

from nsb.errors import PluginContractError
from nsb.events import LimitedBy
from nsb.frames import FrameMix
from nsb.trial import Trial, TrialResult


def _what(value) -> str:
    shown = repr(value)
    return f"{type(value).__name__} {shown[:60] + '...' if len(shown) > 60 else shown}"


def trial_asked(profile: str, trial, at, judge, point_type: type) -> None:
    """``measure(trial, at, judge)``'s arguments, as the seam takes them."""
    for name, value, wanted, ok in (
            ("trial", trial, "an nsb.trial.Trial", isinstance(trial, Trial)),
            ("at", at, "a SearchPoint (SearchPoint.single(pct) for one rate)",
             isinstance(at, point_type)),
            ("judge", judge, "a function of a TrialResult to (Verdict, reason), e.g. "
             "loss_judge(0.0)", callable(judge))):
        if not ok:
            raise PluginContractError(f"traffic profile '{profile}' passed measure({name}="
                                      f"{_what(value)}): it takes {wanted}")


def trial_done(generator: str, result) -> None:
    """What a generator's ``run_trial`` returned."""
    if not isinstance(result, TrialResult):
        raise PluginContractError(f"generator '{generator}' returned {_what(result)} from "
                                  "run_trial: it returns an nsb.trial.TrialResult")


def answer(profile: str, frame_size, best, limited_by) -> tuple[TrialResult | None, LimitedBy]:
    """``result_ready``'s frame size, answer and limit, as the seam takes them: a
    Measurement's result, a LimitedBy's value."""
    if not isinstance(frame_size, (int, FrameMix)) or isinstance(frame_size, bool):
        raise PluginContractError(f"traffic profile '{profile}' passed result_ready(frame_size="
                                  f"{_what(frame_size)}): it takes the trial's frame size "
                                  "(bytes, or its FrameMix)")
    if isinstance(getattr(best, "result", None), TrialResult):
        best = best.result  # the Measurement that measure() returned
    if best is not None and not isinstance(best, TrialResult):
        raise PluginContractError(f"traffic profile '{profile}' passed result_ready(best="
                                  f"{_what(best)}): it takes the answer's TrialResult, the "
                                  "Measurement that measure() returned, or None")
    try:
        limited_by = LimitedBy(limited_by)
    except ValueError:
        raise PluginContractError(f"traffic profile '{profile}' passed result_ready(limited_by="
                                  f"{_what(limited_by)}): it takes a LimitedBy: "
                                  f"{', '.join(v.value for v in LimitedBy)}") from None
    return best, limited_by
