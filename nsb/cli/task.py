"""`nsb task start|gate|list|show|validate`: the argparse wiring of the task commands.

The handlers live in modules of their own; this one only says which options each
action takes, in the order its help lists them.
"""

from __future__ import annotations

import argparse

from nsb.cli.options import add_results_dir, command_group
from nsb.cli.sla_gate import add_gate_options, cmd_task_gate
from nsb.cli.suite_start import cmd_suite_start
from nsb.cli.task_history import cmd_task_list, cmd_task_show
from nsb.cli.task_info import register as register_task_info
from nsb.cli.task_plan import cmd_task_validate
from nsb.cli.task_start import cmd_task_start


def register(subparsers) -> None:
    """Add `task` with its actions to the CLI's subparsers."""
    actions = command_group(subparsers, "task", help="validate or run task files")
    _add_start(actions)
    _add_gate(actions)
    _add_list(actions)
    _add_show(actions)
    _add_validate(actions)
    register_task_info(actions)


def _add_task_file(parser: argparse.ArgumentParser) -> None:
    """The task file and what may change it, the same for `start` and `validate`."""
    parser.add_argument("file", help="task file (YAML, may use Jinja2)")
    parser.add_argument("--task-args", metavar="JSON",
                        help="template variables as a JSON object, e.g. '{\"duration_s\": 5}'")
    parser.add_argument("--task-args-file", metavar="FILE",
                        help="template variables from a YAML or JSON file")
    parser.add_argument("--sweep", action="append", metavar="NAME=V1,V2",
                        help="run the task for each value of task arg NAME (repeatable: "
                             "every combination), e.g. --sweep pmd_cores=1,2,4; one task "
                             "id, each result tagged with its point")
    parser.add_argument("--frame-size", action="append", metavar="BYTES",
                        help="run every scenario at this frame size instead of the task's "
                             "(repeatable), e.g. --frame-size 64 --frame-size 1518; IMIX "
                             "sends the profile's mix (imix option; 64:594:1518 at 7:4:1)")
    parser.add_argument("--duration", type=float, metavar="SECONDS",
                        help="every scenario's trial length instead of the task's (the "
                             "full-length trials of fastndr and mlrsearch)")
    parser.add_argument("--rate", metavar="RATE",
                        help="ndr (the task's search), ndr_pdr (MLRsearch NDR and PDR), mrr "
                             "(maximum receive rate: 10 trials of 1 s at line rate), or a "
                             "fixed rate: 50%% of line rate, 2Mpps, 500kpps, 1000pps")
    parser.add_argument("--repeat", type=int, metavar="N",
                        help="run every scenario's profile N times (its runner becomes "
                             "Iteration N): the summary gives each answer's median and how "
                             "far the runs are from it")


def _add_start(actions) -> None:
    start = actions.add_parser("start", help="run a task")
    _add_task_file(start)
    start.add_argument("--calibrate", action="store_true",
                       help="first measure the generator's own connection rate with the DUT "
                            "taken out (the lab's generator ports cabled to each other) and "
                            "give it to each cps scenario as generator_ceiling_cps")
    start.add_argument("--dry-run", action="store_true",
                       help="print the resolved plan and stop; touches nothing")
    add_results_dir(start)
    start.add_argument("--label", metavar="NAME",
                       help="a name for this run in the history (nsb task list)")
    start.add_argument("--suite", action="store_true",
                       help="FILE is a suite (Yardstick's yardstick:suite:0.1 or "
                            "nsb:suite:0.1): every case is checked, then each runs as its "
                            "own task under one suite id")
    start.add_argument("--stop-on-failure", action="store_true",
                       help="with --suite: stop at the first case that fails")
    add_gate_options(start)
    start.set_defaults(handler=lambda args: (cmd_suite_start if args.suite
                                             else cmd_task_start)(args))


def _add_gate(actions) -> None:
    gate = actions.add_parser("gate", help="SLA checks on a finished run (exit 4 when one "
                              "is missed, 5 when one is not comparable: the generator set "
                              "the numbers), optionally as JUnit XML")
    gate.add_argument("task_id", metavar="TASK_ID", help="a task id or a unique prefix")
    add_results_dir(gate)
    add_gate_options(gate)
    gate.add_argument("--trend", action="store_true",
                      help="exit 4 when the run is a regression of its tests' trends "
                           "(jumpavg over the history up to it; nsb report trend)")
    gate.set_defaults(handler=cmd_task_gate)


def _add_list(actions) -> None:
    listing = actions.add_parser("list", help="the run history, newest first: start time, "
                                 "task id, test case, label, status, NDR per frame size")
    add_results_dir(listing)
    listing.add_argument("-n", "--limit", type=int, default=20, metavar="N",
                         help="show the N newest runs (default 20; 0 for all)")
    listing.add_argument("--suite", metavar="SUITE_ID",
                         help="a suite run's cases: task id, status, NDR, SLA checks")
    listing.set_defaults(handler=cmd_task_list)


def _add_show(actions) -> None:
    show = actions.add_parser("show", help="one run: file, label, status, error, task args "
                              "and its summary table")
    show.add_argument("task_id", metavar="TASK_ID",
                      help="a task id or a unique prefix of one (ids start with the UTC "
                           "start time, YYMMDD-HHMMSS), or a results directory")
    add_results_dir(show)
    show.add_argument("--path", action="store_true",
                      help="where the frames died: per result the hop to blame and the "
                           "path of the trial it was found in, hop by hop")
    show.set_defaults(handler=cmd_task_show)


def _add_validate(actions) -> None:
    validate = actions.add_parser("validate", help="check a task file without running it")
    _add_task_file(validate)
    validate.set_defaults(handler=cmd_task_validate)
