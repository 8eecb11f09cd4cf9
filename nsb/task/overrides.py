"""`--frame-size`, `--duration`, `--rate` and `--repeat` for any task, as NFVbench
offers them: the same test case at other frame sizes, trial lengths or rates, or
several times over (its answers' median and spread), without editing its file.

`--rate` is `ndr` (the task's own search), `mrr` (CSIT's maximum receive rate),
`ndr_pdr` (MLRsearch's NDR and 0.5 %
PDR goals), `50%` (of line rate) or `2Mpps`/`500kpps`/`1000pps` (a fixed rate:
one trial per frame size, judged with the task's tolerated loss).

Each profile names its frame sizes `packet_sizes` (NSB's key); the trial length
is `duration` (binsearch, fixed, ramp, acl), `final_trial_duration` (fastndr) or
each goal's `final_trial_duration` and `duration_sum` (mlrsearch). A profile
without either refuses the override in one line.
"""

from __future__ import annotations

import re
from dataclasses import replace

from nsb import frames, plugins
from nsb.errors import TaskError
from nsb.task import option_aliases
from nsb.task.model import PluginSpec, Task

DURATION_KEYS = ("duration", "final_trial_duration")


_RATE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(%|pps|kpps|Mpps)\s*$")
_PPS_UNITS = {"pps": 1.0, "kpps": 1e3, "Mpps": 1e6}
CARRIED = ("packet_sizes", "imix", "interface_speed_gbps", "tolerated_loss_pct", "flows")


def apply(task: Task, frame_sizes: list[str | int] | None, duration_s: float | None,
          rate: str | None = None, repeat: int | None = None) -> Task:
    if repeat is not None:
        task = replace(task, scenarios=tuple(replace(s, runner=_repeated(s.runner, repeat))
                                             for s in task.scenarios))
    if rate and rate.strip() != "ndr":
        task = replace(task, scenarios=tuple(replace(s, profile=_rate_profile(s.profile, rate))
                                             for s in task.scenarios))
    if not frame_sizes and duration_s is None:
        return task
    frame_sizes = [_frame_size(size) for size in frame_sizes or []]
    if duration_s is not None and not duration_s > 0:
        raise TaskError(f"must be a positive number of seconds, got {duration_s:g}",
                        "--duration")
    scenarios = tuple(replace(s, profile=_profile(s.profile, frame_sizes, duration_s))
                      for s in task.scenarios)
    return replace(task, scenarios=scenarios)


def _repeated(runner: PluginSpec, times: int) -> PluginSpec:
    """The whole profile ``times`` times (the Iteration runner): the median and spread of
    its answers say how it repeats."""
    if times < 1:
        raise TaskError(f"must be at least 1, got {times}", "--repeat")
    return replace(runner, type="Iteration", options={"iterations": times})


def _frame_size(text: str | int) -> int | str:
    """Bytes (64-9216) or IMIX, as packet_sizes holds them."""
    if frames.is_mix_name(text):
        return frames.IMIX_NAME
    try:
        size = int(text)
    except ValueError:
        raise TaskError(f"{text!r} is not a frame size; give bytes ({frames.MIN_FRAME}-"
                        f"{frames.MAX_FRAME}) or IMIX", "--frame-size") from None
    if size < frames.MIN_FRAME:
        raise TaskError(f"{size} is below the minimum Ethernet frame of 64 bytes",
                        "--frame-size")
    if size > frames.MAX_FRAME:
        raise TaskError(f"{size} is above the largest frame nsb sends ({frames.MAX_FRAME})",
                        "--frame-size")
    return size


def _option_schemas(spec: PluginSpec) -> dict:
    """The options the profile's plugin declares, by name."""
    plugin = plugins.load_class("nsb.traffic_profiles", spec)
    return (getattr(plugin, "OPTIONS_SCHEMA", None) or {}).get("properties", {})


def _profile(spec: PluginSpec, frame_sizes, duration_s) -> PluginSpec:
    properties = _option_schemas(spec)
    options = dict(spec.options)
    if frame_sizes:
        if "packet_sizes" not in properties:
            raise TaskError(f"traffic profile '{spec.type}' has no frame sizes to set",
                            "--frame-size")
        options["packet_sizes"] = list(frame_sizes)
    if duration_s is not None:
        if "goals" in properties:  # mlrsearch: every goal's full-length trials
            goals = options.get("goals") or properties["goals"].get("default") or []
            options["goals"] = [{**goal, "final_trial_duration": duration_s,
                                 "duration_sum": duration_s} for goal in goals]
        else:
            key = next((k for k in DURATION_KEYS if k in properties), None)
            if key is None:
                raise TaskError(f"traffic profile '{spec.type}' has no trial duration to set",
                                "--duration")
            options[key] = duration_s
    return replace(spec, options=options)


def _rate_profile(spec: PluginSpec, rate: str) -> PluginSpec:
    """The traffic profile ``--rate`` asks for, with the task's frame sizes, speed,
    tolerated loss, flows and trial length."""
    properties = _option_schemas(spec)
    given = option_aliases.canonical(spec.options, {"properties": properties},
                                     spec.options_where)
    carried = {key: given[key] for key in CARRIED if key in given and key in properties}
    duration = next((spec.options[k] for k in DURATION_KEYS if k in spec.options), None)
    if rate.strip() == "ndr_pdr":
        options = {k: v for k, v in carried.items() if k != "tolerated_loss_pct"}
        if duration is not None:
            options["goals"] = [{"name": "NDR", "loss_ratio": 0.0,
                                 "final_trial_duration": duration, "duration_sum": duration},
                                {"name": "PDR", "loss_ratio": 0.005,
                                 "final_trial_duration": duration, "duration_sum": duration}]
        return replace(spec, type="mlrsearch", options=options, type_key="type")
    if rate.strip() == "mrr":  # CSIT's: 10 trials of 1 s at line rate, unless given
        options = {k: v for k, v in carried.items() if k != "tolerated_loss_pct"}
        return replace(spec, type="mrr", options=options, type_key="type")
    match = _RATE.match(rate)
    if not match:
        raise TaskError(f"{rate!r} is not a rate; give ndr, ndr_pdr, mrr, a % of line rate "
                        "(50%) or a packet rate (2Mpps, 500kpps, 1000pps)", "--rate")
    value, unit = float(match.group(1)), match.group(2)
    options = {**carried, "duration": duration if duration is not None else 60}
    if unit == "%":
        if not 0 < value <= 100:
            raise TaskError(f"{rate!r}: a % of line rate is above 0 and at most 100", "--rate")
        options["rate_pct"] = value
    else:
        if value <= 0:
            raise TaskError(f"{rate!r}: a rate is above 0", "--rate")
        options["rate_pps"] = value * _PPS_UNITS[unit]
    return replace(spec, type="fixed", options=options, type_key="type")
