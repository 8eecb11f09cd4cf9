"""`--frame-size` and `--duration` for any task, as NFVbench offers them: the
same test case at other frame sizes or trial lengths without editing its file.

Each profile names its frame sizes `packet_sizes` (NSB's key); the trial length
is `duration` (binsearch, fixed, ramp, acl), `final_trial_duration` (fastndr) or
each goal's `final_trial_duration` and `duration_sum` (mlrsearch). A profile
without either refuses the override in one line.
"""

from __future__ import annotations

from dataclasses import replace

from nsb import plugins
from nsb.errors import TaskError
from nsb.task.model import PluginSpec, Task

DURATION_KEYS = ("duration", "final_trial_duration")


def apply(task: Task, frame_sizes: list[int] | None, duration_s: float | None) -> Task:
    if not frame_sizes and duration_s is None:
        return task
    for size in frame_sizes or []:
        if size < 64:
            raise TaskError(f"{size} is below the minimum Ethernet frame of 64 bytes",
                            "--frame-size")
    if duration_s is not None and not duration_s > 0:
        raise TaskError(f"must be a positive number of seconds, got {duration_s:g}",
                        "--duration")
    scenarios = tuple(replace(s, profile=_profile(s.profile, frame_sizes, duration_s))
                      for s in task.scenarios)
    return replace(task, scenarios=scenarios)


def _profile(spec: PluginSpec, frame_sizes, duration_s) -> PluginSpec:
    properties = (getattr(plugins.load_class("nsb.traffic_profiles", spec), "OPTIONS_SCHEMA",
                          None) or {}).get("properties", {})
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
