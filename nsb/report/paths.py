"""Where a run's frames died, as text (``nsb task show ID --path``): per result the hop
to blame, and the path of the trial it was found in, point by point, with every
loss by hop and kind and what was blind or unaccounted."""

from __future__ import annotations

from nsb import frames
from nsb.report.loading import TaskResults


def lines(task: TaskResults) -> list[str]:
    """Per result (scenario and frame size) the hop to blame and the path of the trial
    that lost the most there, else of the answer's trial."""
    trials = {(t.get("scenario"), t.get("trial_index")): t for t in task.trials}
    out = []
    for result in task.results:
        scenario, frame = result.get("scenario"), result.get("frame_size")
        blamed = result.get("lossy_hop") or {}
        title = f"{scenario}, {frames.shown(frame)}"
        if blamed:
            out.append(f"{title}: the hop to blame: {blamed['words']} "
                       f"({blamed['frames']:,} frames, trial {blamed['trial_index']})")
            trial = trials.get((scenario, blamed["trial_index"]))
        else:
            out.append(f"{title}: no trial of this answer's limit lost frames at a counted hop")
            trial = _answer_trial(task, result)
        out += chain_lines(result)
        if trial is not None:
            out += trial_lines(trial)
    return out or ["no results"]


def chain_lines(result: dict) -> list[str]:
    """Per service chain that lost frames, the hop that lost the most of them."""
    out = []
    for share in result.get("chains") or []:
        hop = share.get("lossy_hop")
        if hop:
            out.append(f"  chain {share['chain']}: {hop['words']} ({hop['frames']:,} frames, "
                       f"trial {hop['trial_index']})")
    return out


def _answer_trial(task: TaskResults, result: dict) -> dict | None:
    same = [t for t in task.trials if t.get("scenario") == result.get("scenario")
            and t.get("frame_size") == result.get("frame_size") and t.get("path")]
    rate = result.get("throughput_pps")
    at = [t for t in same if abs((t.get("tx_rate_pps") or 0) - (rate or 0)) < 1e-6]
    return (at or same or [None])[-1]


def trial_lines(trial: dict) -> list[str]:
    """One trial's path: per direction its points and losses."""
    path = trial.get("path")
    head = (f"  trial {trial.get('trial_index')} ({trial.get('verdict')}, "
            f"{trial.get('requested_rate_pps') or 0:,.0f} pps asked)")
    if not path:
        return [f"{head}: no path (its counters were not read)"]
    out = [head]
    for direction in path.get("directions", []):
        out.append(f"    {direction['path']}: sent {_n(direction['sent'])}, received "
                   f"{_n(direction['received'])}, lost {_n(direction['lost'])}")
        width = max((len(p["place"]) for p in direction["points"]), default=0)
        out += [f"      {p['place']:<{width}}  {_n(p['frames'])}" for p in direction["points"]]
        for loss in direction["losses"]:
            out.append(f"      lost: {loss['hop']}, {loss['kind']}: {loss['frames']:,}")
        if direction.get("unaccounted"):
            out.append(f"      unaccounted: {direction['unaccounted']:,}")
        if direction.get("blind"):
            out.append(f"      no counters at: {', '.join(direction['blind'])}")
    return out


def _n(value) -> str:
    return "-" if value is None else f"{value:,}"
