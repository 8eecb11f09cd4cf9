"""SLA checks of a run (--sla, --baseline, --junit): during `task start`, or
afterwards with `task gate`, e.g. in CI. A missed check exits 4; a check the
traffic generator kept from judging (its results generator-limited) exits 5
when nothing was missed."""

from __future__ import annotations

import argparse
from pathlib import Path

from nsb.errors import NsbError


def add_gate_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sla", action="append", metavar="CHECK",
                        help="a threshold on the results, METRIC OP VALUE[@FRAME], e.g. "
                             "'ndr_pps>=1.2M@64', 'latency_p99_us<=50', 'regression_pct<=5' "
                             "(with --baseline); repeatable; a miss exits 4, a check on "
                             "generator-limited results is not comparable and exits 5")
    parser.add_argument("--baseline", metavar="TASK_ID",
                        help="the task regression_pct compares with (NDR per frame size)")
    parser.add_argument("--junit", metavar="FILE",
                        help="write the SLA checks (and the run's status) as JUnit XML")


class Gate:
    """The --sla / --baseline / --junit options of one command."""

    def __init__(self, slas, baseline, junit_path):
        self.slas, self.baseline, self.junit_path = slas, baseline, junit_path

    def check(self, results: list[dict]):
        from nsb import sla

        return sla.check(self.slas, results, self.baseline)

    def report(self, outcomes, task_id: str, test_case: str, status: str, error: str = ""):
        from nsb import sla

        for outcome in outcomes:
            print(f"SLA {outcome.message}")
        if self.junit_path:
            sla.write_junit(self.junit_path, sla.junit(outcomes, task_id, test_case, status,
                                                       error))

    @staticmethod
    def verdict(outcomes) -> None:
        """A miss (4) outweighs a check that could not be judged (5)."""
        from nsb.errors import SlaMissed, SlaNotComparable

        missed = [o for o in outcomes if not o.passed and o.comparable]
        apart = [o for o in outcomes if not o.comparable]
        if missed:
            raise SlaMissed(f"SLA missed ({len(missed)} of {len(outcomes)} checks): "
                            + _first(missed))
        if apart:
            raise SlaNotComparable(f"SLA not comparable ({len(apart)} of {len(outcomes)} "
                                   "checks; the generator set the numbers, or an answer was not "
                                   "confirmed): "
                                   + _first(apart))


def _first(outcomes) -> str:
    return "; ".join(o.message for o in outcomes[:3]) + (" ..." if len(outcomes) > 3 else "")


def gate_from_args(args, results_dir) -> Gate | None:
    """None without --sla or --junit; parsed before anything runs, so a bad SLA costs
    no lab time."""
    from nsb import sla
    from nsb.report import loading

    if not (args.sla or args.junit):
        if args.baseline:
            raise NsbError("--baseline is for SLAs: add e.g. --sla 'regression_pct<=5'")
        return None
    slas = [sla.parse(text) for text in args.sla or []]
    baseline = None
    if args.baseline:
        baseline = loading.load(args.baseline, results_dir, "--baseline").results
    if any(s.metric == sla.REGRESSION for s in slas) and baseline is None:
        raise NsbError("regression_pct compares with a baseline: give --baseline TASK_ID")
    return Gate(slas, baseline, args.junit)


def cmd_task_gate(args) -> int:
    """SLA checks on a finished run, e.g. in CI after `nsb task start`."""
    from nsb.events import TaskStatus
    from nsb.report import loading, terminal

    if getattr(args, "trend", False):
        return _trend_gate(args)
    if not args.sla:
        raise NsbError("give at least one --sla (e.g. --sla 'ndr_pps>=1M@64') or --trend")
    results_dir, where = terminal.results_dir_of(args)
    gate = gate_from_args(args, results_dir)
    task = loading.load(args.task_id, results_dir, where)
    outcomes = gate.check(task.results)
    gate.report(outcomes, task.id, Path(str(task.task.get("file") or "task")).stem,
                task.status, str(task.task.get("error") or ""))
    if task.status != TaskStatus.OK:
        raise NsbError(f"task {task.id} did not finish cleanly (status {task.status}); its "
                       "results are what was measured before")
    gate.verdict(outcomes)
    return 0


def _trend_gate(args) -> int:
    """Exit 4 when the run's answers are a regression of their trend (jumpavg over the
    history up to this run), 0 otherwise; each test's class is printed."""
    from nsb.errors import SlaMissed
    from nsb.report import loading, terminal, trend

    results_dir, where = terminal.history_dir(args)  # the trends read all of it
    task_id = loading.resolve(args.task_id, results_dir, where).parent.name
    found = [t for t in trend.trends(Path(results_dir), until=task_id)
             if t.points and t.points[-1].task_id == task_id]
    if not found:
        raise NsbError(f"task {task_id} has no answer in the trends of {results_dir} (a run "
                       "that did not finish is no point of a trend)")
    for t in found:
        change = f" ({t.change_pct:+.1f} % from the group before)" \
            if t.change_pct is not None else ""
        print(f"TREND {t.name}: {t.newest or 'too few runs'}{change}")
    regressions = [t for t in found if t.newest == "regression"]
    if regressions:
        raise SlaMissed(f"trend: {len(regressions)} of {len(found)} tests regressed: "
                        + "; ".join(t.name for t in regressions[:3]))
    return 0
