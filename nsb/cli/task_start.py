"""`nsb task start`: run a task with the live progress line, then print its summary
and the SLA verdict, also when the run stopped early."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from nsb.cli.sla_gate import gate_from_args
from nsb.cli.task_plan import load_task, make_plan, plan_yaml
from nsb.errors import Interrupted, NsbError


def cmd_task_start(args) -> int:
    """The SLA gate reports even when the run failed or was interrupted."""
    from nsb import config

    conf = config.load(args.config_file)
    task = load_task(args)
    # bad SLAs: before anything runs
    gate = gate_from_args(args, args.results_dir or conf.results_dir)
    if getattr(args, "calibrate", False):
        task = _calibrated(args, conf, task)
    plan = make_plan(args, conf, task, args.results_dir, dry_run=args.dry_run)
    if task.notice:  # once the task is known to be good, before it runs
        print(f"nsb: note: {task.notice}", file=sys.stderr)
    if args.dry_run:
        print(plan_yaml(plan.describe()), end="")
        return 0
    from nsb.events import TaskStatus

    results: list[dict] = []
    status, error = TaskStatus.ERROR, ""
    try:
        run_plan(plan, conf, results)
        status = TaskStatus.OK
    except NsbError as exc:
        status = TaskStatus.INTERRUPTED if isinstance(exc, Interrupted) else TaskStatus.ERROR
        error = str(exc)
        raise
    finally:
        if gate is not None:
            outcomes = gate.check(results)
            gate.report(outcomes, plan.run.task_id, plan.task.file.stem, status, error)
    if gate is not None:
        gate.verdict(outcomes)
    return 0


def _calibrated(args, conf, task):
    """The task with the generator ceilings its twin measured port to port (a run of
    its own, before it); a dry run only checks the twin can be made."""
    from nsb import calibration

    twin = calibration.twin(task)
    plan = make_plan(args, conf, twin, args.results_dir, dry_run=args.dry_run)
    if args.dry_run:
        return task
    results: list[dict] = []
    run_plan(plan, conf, results)
    ceilings = calibration.ceilings(results)
    for scenario, cps in sorted(ceilings.items()):
        print(f"nsb: calibration {plan.run.task_id}: {scenario}: the generator opened "
              f"{cps:,.0f} connections/s port to port", file=sys.stderr)
    return calibration.with_ceilings(task, ceilings)


def _create_dirs(run, conf) -> None:
    # the log's first: a log that cannot be written leaves no empty results directory
    for directory in (Path(conf.log_dir), run.results_dir):
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise NsbError(f"cannot create {directory}: {exc.strerror} (set results_dir/log_dir "
                           "in nsb.conf, or --results-dir)") from None
        if not os.access(directory, os.W_OK | os.X_OK):  # e.g. root's /var/log/nsb, not root
            raise NsbError(f"cannot write in {directory}: Permission denied (set "
                           "results_dir/log_dir in nsb.conf, or --results-dir)")


def run_plan(plan, conf, results: list[dict]) -> None:
    """Run the plan with the live line; ``results`` gets every result record, also
    those of a run that stopped early."""
    from rich.console import Console

    from nsb import engine, leftovers
    from nsb.progress import Progress
    from nsb.report import terminal

    run = plan.run
    _create_dirs(run, conf)
    log_file = logging.FileHandler(Path(conf.log_dir) / f"{run.task_id}.log")
    log_file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(log_file)
    out = terminal.stdout_console()
    err = Console(stderr=True)
    err.print(f"task {run.task_id}: {plan.task.file.name} -> {run.results_dir}", highlight=False)
    progress = Progress(err)
    try:
        leftovers.clean_killed_runs()
        with leftovers.registered(run.task_id, run.results_dir, str(plan.task.file)), \
                progress:
            engine.execute(plan, [progress.handle])
    finally:
        logging.getLogger().removeHandler(log_file)
        log_file.close()
        _print_summary(out, run, progress.results, results)


def _print_summary(out, run, events, results: list[dict]) -> None:
    """One table per scenario; ``results`` gets the records the SLA gate checks."""
    from nsb.outputs import records
    from nsb.report import formats

    by_scenario: dict[str, list] = {}
    for event in events:
        record = records.result_record(event)
        results.append(record)
        by_scenario.setdefault(event.scenario, []).append(record)
    for scenario, records_of in by_scenario.items():
        for rendered in formats.scenario_tables(run.task_id, scenario, records_of):
            out.print(rendered)
    from nsb.report import sweep

    for rendered in sweep.text_tables([results], [run.task_id], [run.task_id]):
        out.print(rendered)  # a sweep's scaling table
    out.print(f"Results: {run.results_dir / 'results.json'}", highlight=False)
