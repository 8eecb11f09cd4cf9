"""The `nsb` command line.

Heavy imports (oslo.config, rich, stevedore) happen inside the commands so that
`nsb --help` stays fast.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import signal
import sys
from pathlib import Path

from nsb import __version__, redact
from nsb.errors import Interrupted, NsbError

LOG = logging.getLogger("nsb")
_WHERE_RUN_WROTE = " (default: where the run was writing, else nsb.conf [influxdb])"
_SECRET_DEFAULT = " (default: nsb.conf [influxdb] or the environment; never stored with the run)"
PUSH_OPTIONS = {
    "url": "InfluxDB base URL, e.g. http://localhost:8086" + _WHERE_RUN_WROTE,
    "org": "v2 organisation" + _WHERE_RUN_WROTE, "bucket": "v2 bucket" + _WHERE_RUN_WROTE,
    "token": "v2 API token" + _SECRET_DEFAULT,
    "database": "v1 database" + _WHERE_RUN_WROTE,
    "retention-policy": "v1 retention policy" + _WHERE_RUN_WROTE,
    "username": "v1 user" + _WHERE_RUN_WROTE, "password": "v1 password" + _SECRET_DEFAULT,
}
PUSH_RETRY_S = 10.0  # someone is waiting at the terminal: fail soon, push again later


def _task_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="task file (YAML, may use Jinja2)")
    parser.add_argument("--task-args", metavar="JSON",
                        help="template variables as a JSON object, e.g. '{\"duration_s\": 5}'")
    parser.add_argument("--task-args-file", metavar="FILE",
                        help="template variables from a YAML or JSON file")
    parser.add_argument("--frame-size", action="append", metavar="BYTES",
                        help="run every scenario at this frame size instead of the task's "
                             "(repeatable), e.g. --frame-size 64 --frame-size 1518; IMIX "
                             "sends the profile's mix (imix option; 64:594:1518 at 7:4:1)")
    parser.add_argument("--duration", type=float, metavar="SECONDS",
                        help="every scenario's trial length instead of the task's (the "
                             "full-length trials of fastndr and mlrsearch)")
    parser.add_argument("--rate", metavar="RATE",
                        help="ndr (the task's search), ndr_pdr (MLRsearch NDR and PDR), or a "
                             "fixed rate: 50%% of line rate, 2Mpps, 500kpps, 1000pps")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nsb", description="Network Services Benchmarking: RFC 2544 throughput, latency "
        "and NFVi KPIs of VNFs and vSwitches, from YAML task files.")
    parser.add_argument("--version", action="version", version=f"nsb {__version__}")
    parser.add_argument("--config-file", action="append", metavar="FILE",
                        help="configuration file (default: /etc/nsb/nsb.conf if present)")
    parser.add_argument("--debug", action="store_true",
                        help="debug logging and tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    task = sub.add_parser("task", help="validate or run task files")
    task_sub = task.add_subparsers(dest="task_command", metavar="ACTION")
    task_sub.required = True
    start = task_sub.add_parser("start", help="run a task")
    _task_args(start)
    start.add_argument("--dry-run", action="store_true",
                       help="print the resolved plan and stop; touches nothing")
    start.add_argument("--results-dir", metavar="DIR",
                       help="override results_dir from the configuration")
    start.set_defaults(handler=cmd_task_start)
    start.add_argument("--label", metavar="NAME",
                       help="a name for this run in the history (nsb task list)")
    _gate_options(start)
    gate = task_sub.add_parser("gate", help="SLA checks on a finished run (exit 4 when one "
                               "is missed), optionally as JUnit XML")
    gate.add_argument("task_id", metavar="TASK_ID", help="a task id or a unique prefix")
    gate.add_argument("--results-dir", metavar="DIR",
                      help="override results_dir from the configuration")
    _gate_options(gate)
    gate.set_defaults(handler=cmd_task_gate)
    listing = task_sub.add_parser("list", help="the run history, newest first: start time, "
                                  "task id, test case, label, status, NDR per frame size")
    listing.add_argument("--results-dir", metavar="DIR",
                         help="override results_dir from the configuration")
    listing.add_argument("-n", "--limit", type=int, default=20, metavar="N",
                         help="show the N newest runs (default 20; 0 for all)")
    listing.set_defaults(handler=cmd_task_list)
    show = task_sub.add_parser("show", help="one run: file, label, status, error, task args "
                               "and its summary table")
    show.add_argument("task_id", metavar="TASK_ID",
                      help="a task id or a unique prefix of one (ids start with the UTC "
                           "start time, YYMMDD-HHMMSS), or a results directory")
    show.add_argument("--results-dir", metavar="DIR",
                      help="override results_dir from the configuration")
    show.set_defaults(handler=cmd_task_show)
    validate = task_sub.add_parser("validate", help="check a task file without running it")
    _task_args(validate)
    validate.set_defaults(handler=cmd_task_validate)

    node = sub.add_parser("node", help="lab nodes of a pod file")
    node_sub = node.add_subparsers(dest="node_command", metavar="ACTION")
    node_sub.required = True
    check = node_sub.add_parser("check", help="pre-flight report of every node of a pod: "
                                "reachable, binaries, hugepages, isolated CPUs, NIC drivers")
    check.add_argument("pod", help="NSB pod file")
    check.add_argument("--binary", action="append", metavar="NAME",
                       help="a binary that must be present (repeatable; default: "
                            "dpdk-testpmd, trafgen)")
    check.set_defaults(handler=cmd_node_check)

    results = sub.add_parser("results", help="results of past tasks")
    results_sub = results.add_subparsers(dest="results_command", metavar="ACTION")
    results_sub.required = True
    push = results_sub.add_parser("push", help="send a task's InfluxDB points spooled while "
                                  "InfluxDB was unreachable")
    push.add_argument("task_id", metavar="TASK_ID")
    push.add_argument("--results-dir", metavar="DIR",
                      help="override results_dir from the configuration")
    for opt, what in PUSH_OPTIONS.items():
        push.add_argument(f"--{opt}", help=what)
    push.add_argument("--api", choices=["v1", "v2"],
                      help="InfluxDB API: v2 (org, bucket, token) or v1 (database, "
                           "retention policy, username, password)")
    push.add_argument("--max-retry-time", type=float, default=PUSH_RETRY_S, metavar="SECONDS",
                      help="how long a batch is retried while InfluxDB is unreachable before "
                           f"the push gives up (default: {PUSH_RETRY_S:g}; the run itself "
                           "retries for max_retry_time_s of nsb.conf)")
    push.set_defaults(handler=cmd_results_push)

    ansible = sub.add_parser("ansible", help="prepare lab nodes with ansible/")
    ansible_sub = ansible.add_subparsers(dest="ansible_command", metavar="ACTION")
    ansible_sub.required = True
    inventory = ansible_sub.add_parser("inventory", help="an Ansible inventory from a pod file")
    inventory.add_argument("pod", help="NSB pod file")
    inventory.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    inventory.set_defaults(handler=cmd_ansible_inventory)

    from nsb.grafana.cli import register as register_grafana
    from nsb.report import commands as report_commands

    report_commands.register(sub)
    register_grafana(sub)

    plugin = sub.add_parser("plugin", help="installed plugins")
    plugin_sub = plugin.add_subparsers(dest="plugin_command", metavar="ACTION")
    plugin_sub.required = True
    plugin_list = plugin_sub.add_parser("list", help="list plugins with their descriptions")
    plugin_list.add_argument("namespace", nargs="?",
                             help="e.g. nsb.vnfs or vnfs (default: all namespaces)")
    plugin_list.set_defaults(handler=cmd_plugin_list)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.raiseExceptions = False  # a full disk must not print logging's own tracebacks
    _setup_logging(args.debug)
    try:
        code = args.handler(args) or 0
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except BrokenPipeError:
        # the reader went away (nsb plugin list | head -1): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except Interrupted as exc:
        print(f"nsb: {exc}", file=sys.stderr)
        return 128 + getattr(signal, exc.signame, signal.SIGTERM)
    except NsbError as exc:
        if args.debug:
            LOG.exception("error")
        print(f"nsb: error: {redact.text(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("nsb: interrupted", file=sys.stderr)
        return 130


_console_log: logging.Handler | None = None


class _CurrentStderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is when a record comes: while the live progress
    line runs, rich redirects stderr so that log lines print above it, not into it."""

    def __init__(self):
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


def _setup_logging(debug: bool) -> None:
    """Warnings (everything with --debug) to stderr; the task log file gets it all."""
    global _console_log
    root = logging.getLogger()
    if _console_log is not None:
        root.removeHandler(_console_log)
    _console_log = _CurrentStderrHandler()
    _console_log.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    _console_log.setLevel(logging.DEBUG if debug else logging.WARNING)
    root.addHandler(_console_log)
    root.setLevel(logging.DEBUG)


def _load_task(args):
    from nsb.task import loader, render

    task_args = render.parse_task_args(args.task_args, args.task_args_file)
    with render.names_used() as used:
        task = loader.load(args.file, task_args)
    render.check_args_used(task_args, used,
                           "--task-args" if args.task_args else args.task_args_file)
    from nsb.task import overrides

    return overrides.apply(task, args.frame_size, args.duration, args.rate)


def _plan(args, conf, task, results_dir: Path | None = None, dry_run: bool = False):
    from nsb import engine, leftovers
    from nsb.runinfo import RunInfo, new_task_id

    base = Path(results_dir or conf.results_dir)
    task_id = new_task_id(lambda candidate: (base / candidate).exists() or (
        leftovers.STATE_DIR / f"{candidate}.json").exists())  # two runs never share a name
    from nsb.outputs import influx_settings

    run = RunInfo(task_id=task_id, task=task, results_dir=base / task_id, dry_run=dry_run,
                  vnf_start_timeout_s=conf.vnf_start_timeout,
                  nfvi_interval_s=conf.nfvi_interval,
                  output_defaults={"influxdb": influx_settings.conf_options(conf)},
                  label=getattr(args, "label", None) or "")
    return engine.plan(task, run)


def cmd_task_validate(args) -> int:
    from nsb import config

    conf = config.load(args.config_file)
    task = _load_task(args)
    _plan(args, conf, task, dry_run=True)
    print(f"{args.file}: valid ({len(task.scenarios)} scenario(s))")
    return 0


def cmd_task_start(args) -> int:
    from nsb import config

    conf = config.load(args.config_file)
    task = _load_task(args)
    gate = _gate(args, args.results_dir or conf.results_dir)  # bad SLAs: before anything runs
    plan = _plan(args, conf, task, args.results_dir, dry_run=args.dry_run)
    if args.dry_run:
        print(_plan_yaml(plan.describe()), end="")
        return 0
    from nsb.events import TaskStatus

    results: list[dict] = []
    status, error = TaskStatus.ERROR, ""
    try:
        _run(plan, conf, results)
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


class _Gate:
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
        from nsb.errors import SlaMissed

        missed = [o for o in outcomes if not o.passed]
        if missed:
            raise SlaMissed(f"SLA missed ({len(missed)} of {len(outcomes)} checks): "
                            + "; ".join(o.message for o in missed[:3])
                            + (" ..." if len(missed) > 3 else ""))


def _gate(args, results_dir) -> _Gate | None:
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
    return _Gate(slas, baseline, args.junit)


def _gate_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sla", action="append", metavar="CHECK",
                        help="a threshold on the results, METRIC OP VALUE[@FRAME], e.g. "
                             "'ndr_pps>=1.2M@64', 'latency_p99_us<=50', 'regression_pct<=5' "
                             "(with --baseline); repeatable; a miss exits 4")
    parser.add_argument("--baseline", metavar="TASK_ID",
                        help="the task regression_pct compares with (NDR per frame size)")
    parser.add_argument("--junit", metavar="FILE",
                        help="write the SLA checks (and the run's status) as JUnit XML")


def cmd_task_gate(args) -> int:
    """SLA checks on a finished run, e.g. in CI after `nsb task start`."""
    from nsb.events import TaskStatus
    from nsb.report import commands, loading

    if not args.sla:
        raise NsbError("give at least one --sla, e.g. --sla 'ndr_pps>=1M@64'")
    results_dir, where = commands.results_dir_of(args)
    gate = _gate(args, results_dir)
    task = loading.load(args.task_id, results_dir, where)
    outcomes = gate.check(task.results)
    gate.report(outcomes, task.id, Path(str(task.task.get("file") or "task")).stem,
                task.status, str(task.task.get("error") or ""))
    if task.status != TaskStatus.OK:
        raise NsbError(f"task {task.id} did not finish cleanly (status {task.status}); its "
                       "results are what was measured before")
    gate.verdict(outcomes)
    return 0


def _plan_yaml(described: dict) -> str:
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


def _run(plan, conf, results: list[dict]) -> None:
    """Run the plan with the live line; ``results`` gets every result record, also
    those of a run that stopped early."""
    from rich.console import Console

    from nsb import engine, leftovers
    from nsb.outputs import records
    from nsb.progress import Progress
    from nsb.report import formats

    run = plan.run
    for directory in (run.results_dir, Path(conf.log_dir)):
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise NsbError(f"cannot create {directory}: {exc.strerror} (set results_dir/log_dir "
                           "in nsb.conf, or --results-dir)") from None
    log_file = logging.FileHandler(Path(conf.log_dir) / f"{run.task_id}.log")
    log_file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(log_file)
    out = Console()
    if not out.is_terminal:
        out = Console(width=170)  # a pipe or file gets the whole table unwrapped
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
        by_scenario: dict[str, list] = {}
        for event in progress.results:
            record = records.result_record(event)
            results.append(record)
            by_scenario.setdefault(event.scenario, []).append(record)
        for scenario, records_of in by_scenario.items():
            for rendered in formats.scenario_tables(run.task_id, scenario, records_of):
                out.print(rendered)
        out.print(f"Results: {run.results_dir / 'results.json'}", highlight=False)


def cmd_task_list(args) -> int:
    from nsb.report import commands, history

    lines = history.runs(Path(commands.results_dir_of(args)[0]))
    print(history.render_list(lines[:args.limit] if args.limit > 0 else lines), end="")
    return 0


def cmd_task_show(args) -> int:
    from nsb.report import commands, formats, history, loading

    task = loading.load(args.task_id, *commands.results_dir_of(args))
    print(history.render_show(task), end="")
    sys.stdout.flush()
    commands.print_tables(formats.text_tables([task], [task.id]))
    return 0


def cmd_node_check(args) -> int:
    """One line per check and node; exit 1 when a check failed."""
    from nsb import preflight
    from nsb.contexts import baremetal, pod
    from nsb.errors import TaskError
    from nsb.task import input_file

    nodes = pod.load_pod(input_file.resolve(args.pod))
    binaries = args.binary or ["dpdk-testpmd", "trafgen"]
    failed = 0
    try:
        for node in nodes.values():
            if node.ssh is None:
                raise TaskError(f"node '{node.name}' has no 'ip' to reach it over SSH", args.pod)
            try:
                baremetal.connect([node])
            except NsbError as exc:
                print(f"{node.name}: reachable: FAILED: {exc}")
                failed += 1
                continue
            for result in preflight.check_node(node, binaries):
                print(result.line())
                failed += not result.ok
    finally:
        baremetal.disconnect(nodes.values())
    return 1 if failed else 0


def cmd_results_push(args) -> int:
    """Send what the influxdb output spooled; a second push sends nothing."""
    from nsb import config, results_push

    conf = config.load(args.config_file)
    results_dir = results_push.task_dir(args.task_id, Path(args.results_dir or conf.results_dir))
    settings = results_push.settings_for(
        results_dir, conf, url=args.url, api=args.api, org=args.org, bucket=args.bucket,
        token=args.token, database=args.database, retention_policy=args.retention_policy,
        username=args.username, password=args.password)
    settings = dataclasses.replace(settings, max_retry_time_s=max(0.0, args.max_retry_time))
    sent = results_push.push(results_dir, settings)
    print(f"task {results_dir.name}: {sent} point(s) sent to {settings.target}")
    return 0


def cmd_ansible_inventory(args) -> int:
    """Rendered in memory first, so a bad pod never truncates an existing file."""
    import io

    from nsb.ansible_inventory import write_inventory

    text = io.StringIO()
    write_inventory(Path(args.pod), text)
    if args.output:
        try:
            Path(args.output).write_text(text.getvalue())
        except OSError as exc:
            raise NsbError(f"{args.output}: cannot write the inventory: "
                           f"{exc.strerror or exc}") from None
    else:
        print(text.getvalue(), end="")
    return 0


def cmd_plugin_list(args) -> int:
    from nsb import plugins

    namespace = args.namespace
    if namespace and not namespace.startswith("nsb."):
        namespace = f"nsb.{namespace}"
    if namespace and namespace not in plugins.NAMESPACES:
        raise NsbError(f"unknown plugin namespace '{args.namespace}'; namespaces: "
                       f"{', '.join(plugins.NAMESPACES)}")
    current = None
    for info in plugins.describe_all(namespace):
        if info.namespace != current:
            current = info.namespace
            print(f"{current}:")
        print(f"  {info.name:<24} {info.summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
