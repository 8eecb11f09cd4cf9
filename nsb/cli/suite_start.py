"""`nsb task start --suite FILE`: every case of a suite checked before any runs, then
run in order, each its own task under one suite id; a summary table, one JUnit file,
the first failed case's exit code."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

from nsb.errors import Interrupted, NsbError, TaskError


def cmd_suite_start(args) -> int:
    from nsb import config, suite_record
    from nsb.cli.sla_gate import gate_from_args
    from nsb.cli.task_plan import make_plan
    from nsb.runinfo import new_task_id
    from nsb.task import input_file
    from nsb.task import suite as suite_file

    if args.task_args or args.task_args_file or args.sweep:
        raise TaskError("each case of a suite has its own task args (in the suite file); "
                        "--task-args, --task-args-file and --sweep are for one task", "--suite")
    conf = config.load(args.config_file)
    suite = suite_file.load(args.file)
    gate = gate_from_args(SimpleNamespace(sla=args.sla, junit=None, baseline=args.baseline),
                          args.results_dir or conf.results_dir)
    tasks = {case.name: _checked(args, conf, suite, case) for case in suite.cases
             if not case.skipped}  # every case before any runs
    if args.dry_run:
        for case in suite.cases:
            print(f"{case.name}: {case.file} {json.dumps(case.task_args)}"
                  + (f" (skipped: {case.skipped})" if case.skipped else ""))
        return 0
    results_dir = Path(args.results_dir or conf.results_dir)
    input_file.make_dir(results_dir / suite_record.SUITES)  # its record's, before any case
    run = suite_record.SuiteRun(
        suite_id=new_task_id(lambda c: (results_dir / suite_record.SUITES / f"{c}.json")
                             .exists()), name=suite.name, file=str(suite.file))
    print(f"suite {run.suite_id}: {suite.name}, {len(suite.cases)} case(s)", file=sys.stderr)
    try:
        for case in suite.cases:
            done = _run_case(args, conf, case, tasks.get(case.name), gate, run, make_plan)
            run.cases.append(done)
            run.save(results_dir)
            if done.exit_code and (suite.stop_on_failure or args.stop_on_failure):
                break
        run.status = "ok" if not run.exit_code else "failed"
    except (Interrupted, KeyboardInterrupt):
        run.status = "interrupted"
        raise
    finally:
        run.save(results_dir)
        _report(run, args.junit)
    return run.exit_code


def _checked(args, conf, suite, case):
    """The case's task loaded with its args and planned as a dry run would; its first
    problem is one line at the case in the suite file."""
    from nsb.cli.task_plan import load_task, make_plan

    case_args = SimpleNamespace(
        file=str(case.file), task_args=json.dumps(case.task_args) if case.task_args else None,
        task_args_file=case.task_args_file, sweep=None, frame_size=args.frame_size,
        duration=args.duration, rate=args.rate, repeat=args.repeat, label=None)
    try:
        task = load_task(case_args)
        make_plan(case_args, conf, task, args.results_dir, dry_run=True)
    except NsbError as exc:
        first = str(exc).splitlines()[0]
        raise suite.error(case, f"case {case.name}: {first}") from None
    return task


def _run_case(args, conf, case, task, gate, run, make_plan):
    from nsb import suite_record
    from nsb.cli.task_start import run_plan
    from nsb.events import TaskStatus

    done = suite_record.CaseRun(name=case.name, file=str(case.file), task_args=case.task_args,
                                status="skipped" if case.skipped else TaskStatus.OK,
                                error=case.skipped)
    if case.skipped:
        return done
    label = args.label or f"suite {run.suite_id} {case.name}"
    plan = make_plan(SimpleNamespace(label=label), conf, task, args.results_dir)
    done.task_id = plan.run.task_id
    results: list[dict] = []
    try:
        run_plan(plan, conf, results)
    except Interrupted as exc:
        done.status, done.error, done.exit_code = TaskStatus.INTERRUPTED, str(exc), 130
        run.cases.append(done)
        raise
    except NsbError as exc:
        done.status, done.error, done.exit_code = TaskStatus.ERROR, str(exc), exc.exit_code
        print(f"nsb: error: case {case.name}: {str(exc).splitlines()[0]}", file=sys.stderr)
    first = results[0]["scenario"] if results else None
    done.answers = [{"frame_size": r["frame_size"], "throughput_pps": r["throughput_pps"],
                     "limited_by": r["limited_by"]} for r in results if r["scenario"] == first]
    if gate is not None or case.slas:
        from nsb.cli.sla_gate import Gate

        checks = Gate([*(gate.slas if gate else []), *case.slas],
                      gate.baseline if gate else None, None)
        outcomes = checks.check(results)
        done.sla = [{"check": o.sla.text, "passed": o.passed, "comparable": o.comparable,
                     "message": o.message} for o in outcomes]
        if not done.exit_code:
            try:
                checks.verdict(outcomes)
            except NsbError as exc:  # missed (4), or not comparable (5)
                done.status, done.exit_code = "sla_missed" if exc.exit_code == 4 else \
                    "sla_not_comparable", exc.exit_code
    return done


def _report(run, junit_path: str | None) -> None:
    from nsb import suite_record
    from nsb.report.terminal import plain_table, print_tables

    print_tables([plain_table(f"suite {run.name} ({run.suite_id})", suite_record.HEADERS,
                              suite_record.table_rows(run))])
    if junit_path:
        from nsb import sla

        sla.write_junit(junit_path, suite_record.junit(run))
