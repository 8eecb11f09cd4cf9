"""`nsb results push`: send the InfluxDB points a run spooled while InfluxDB was
unreachable."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from nsb.cli.options import add_results_dir, command_group

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


def register(subparsers) -> None:
    actions = command_group(subparsers, "results", help="results of past tasks")
    push = actions.add_parser("push", help="send a task's InfluxDB points spooled while "
                              "InfluxDB was unreachable")
    push.add_argument("task_id", metavar="TASK_ID")
    add_results_dir(push)
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


def cmd_results_push(args) -> int:
    """Send what the influxdb output spooled; a second push sends nothing."""
    from nsb import config
    from nsb.outputs.influxdb import push as results_push
    from nsb.task import input_file

    conf = config.load(args.config_file)
    base = args.results_dir or conf.results_dir
    if "/" not in args.task_id:  # a task id: looked up there
        input_file.check_readable_dir(base, "the results directory")
    results_dir = results_push.task_dir(args.task_id, Path(base))
    settings = results_push.settings_for(
        results_dir, conf, url=args.url, api=args.api, org=args.org, bucket=args.bucket,
        token=args.token, database=args.database, retention_policy=args.retention_policy,
        username=args.username, password=args.password)
    settings = dataclasses.replace(settings, max_retry_time_s=max(0.0, args.max_retry_time))
    sent = results_push.push(results_dir, settings)
    print(f"task {results_dir.name}: {sent} point(s) sent to {settings.target}")
    return 0
