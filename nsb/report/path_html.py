"""The report's "Where the frames died" section: per result the path of the trial its
limit was found in, drawn as a chain of the points frames cross (port by port, with
the frames counted there), the lossy hop marked, and its losses by hop and kind.

Ids: ``{prefix}-path-{frame}`` per result (the chain of each direction inside it).
"""

from __future__ import annotations

from html import escape

CSS = """
.path { display: flex; flex-wrap: wrap; align-items: center; gap: 4px; margin: 6px 0 10px; }
.path .point { border: 1px solid #c6d0da; border-radius: 4px; padding: 3px 7px; background: #fff;
               font-size: 12px; text-align: center; }
.path .point b { display: block; font-variant-numeric: tabular-nums; }
.path .point.blind { color: #8a97a3; border-style: dashed; }
.path .point.lossy { border-color: #c62828; background: #fdecea; }
.path .arrow { color: #8a97a3; }
p.blame { color: #c62828; font-weight: 600; margin: 4px 0; }
"""


def section(results: list[dict], trials: list[dict], prefix: str) -> str:
    """The section, or '' when no trial of the scenario has a path."""
    by_index = {t.get("trial_index"): t for t in trials}
    parts = []
    for result in results:
        blamed = result.get("lossy_hop")
        trial = by_index.get(blamed.get("trial_index")) if blamed else None
        if trial is None or not trial.get("path"):
            continue
        frame = escape(str(result.get("frame_size")))
        parts.append(f'<div id="{prefix}-path-{frame}"><h5>{frame} B: trial '
                     f'{escape(str(trial.get("trial_index")))} '
                     f'({escape(str(trial.get("verdict")))})</h5>'
                     f'<p class="blame">{escape(blamed["words"])} '
                     f'({blamed["frames"]:,} frames)</p>{_directions(trial["path"], blamed)}'
                     "</div>")
    if not parts:
        return ""
    return ("<h4>Where the frames died</h4><p class=\"note\">Per frame size, the trial where "
            "the answer's limit was found: the frames counted at each port along each "
            "direction (dashed: no counter there) and the hop that lost the most.</p>"
            + "".join(parts))


def _directions(path: dict, blamed: dict) -> str:
    out = []
    for direction in path.get("directions", []):
        lossy = {loss["hop"] for loss in direction.get("losses", [])
                 if loss["hop"] == blamed.get("hop")}
        points = []
        for point in direction.get("points", []):
            css = "point blind" if point.get("frames") is None else "point"
            if any(point["place"].startswith(hop) for hop in lossy):
                css += " lossy"
            frames = "-" if point.get("frames") is None else f"{point['frames']:,}"
            points.append(f'<span class="{css}">{escape(point["place"])}<b>{frames}</b></span>')
        losses = "; ".join(f"{escape(loss['hop'])}: {escape(loss['kind'])} "
                           f"{loss['frames']:,}" for loss in direction.get("losses", []))
        out.append(f"<p class=\"note\">{escape(direction['path'])}: sent "
                   f"{_n(direction.get('sent'))}, received {_n(direction.get('received'))}"
                   f"{'; lost at ' + losses if losses else ''}</p><div class=\"path\">"
                   + '<span class="arrow">&rarr;</span>'.join(points) + "</div>")
    return "".join(out)


def _n(value) -> str:
    return "-" if value is None else f"{value:,}"
