"""From a task file and its options to the engine's plan: what `task validate`
checks and `task start --dry-run` prints, without touching the lab."""

from __future__ import annotations

import os
from pathlib import Path


def load_task(args):
    """The task with --task-args rendered in (once per point of a sweep) and
    --frame-size/--duration/--rate/--repeat applied;
    a task argument the template never uses is an error, not silently ignored."""
    from nsb.task import render, sweep

    task_args = render.parse_task_args(args.task_args, args.task_args_file)
    source = "--task-args" if args.task_args else args.task_args_file
    task, used = sweep.load(args.file, task_args, getattr(args, "sweep", None), source)
    render.check_args_used(task_args, used, source)
    from nsb.task import overrides

    return overrides.apply(task, args.frame_size, args.duration, args.rate,
                           getattr(args, "repeat", None))


def make_plan(args, conf, task, results_dir: Path | None = None, dry_run: bool = False):
    """The engine's plan under a new task id that no run, finished or killed, has used."""
    from nsb import config, engine
    from nsb.runinfo import RunInfo, new_task_id

    base = Path(results_dir or conf.results_dir)
    task_id = new_task_id(_taken(base, dry_run))
    run = RunInfo(task_id=task_id, task=task, results_dir=base / task_id, dry_run=dry_run,
                  vnf_start_timeout_s=conf.vnf_start_timeout,
                  nfvi_interval_s=conf.nfvi_interval,
                  output_defaults=config.output_defaults(conf),
                  conf_outputs=tuple(conf.outputs),
                  label=getattr(args, "label", None) or "")
    return engine.plan(task, run)


def _taken(base: Path, dry_run: bool):
    """Two runs never share a name: a fresh id is neither a results directory nor in
    the run registry. A dry run makes and registers nothing, so any id will do (and
    neither directory needs to be readable)."""
    if dry_run:
        return lambda candidate: False
    from nsb import leftovers

    def taken(candidate: str) -> bool:
        try:
            os.stat(base / candidate)
        except OSError:  # none; or results_dir is unreadable, which making the run's
            return leftovers.in_registry(candidate)  # directory says in one line
        return True

    return taken


def plan_yaml(described: dict) -> str:
    """The plan as YAML; multi-line text (rendered configs) as readable blocks."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper, value: str):
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    return yaml.dump(described, Dumper=Dumper, sort_keys=False, default_flow_style=False,
                     width=100)


def cmd_task_validate(args) -> int:
    """Plans the task as a dry run would, so that validate finds what start would."""
    from nsb import config

    conf = config.load(args.config_file)
    task = load_task(args)
    make_plan(args, conf, task, dry_run=True)
    print(f"{args.file}: valid ({len(task.scenarios)} scenario(s))")
    return 0
