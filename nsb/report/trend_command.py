"""`nsb report trend`: each test's answers over the history, from the results directory
or from InfluxDB, and (``--annotate``) the changes written to InfluxDB for Grafana."""

from __future__ import annotations

from pathlib import Path

INFLUX_OPTIONS = {
    "url": "InfluxDB base URL (default: nsb.conf [influxdb])",
    "org": "v2 organisation", "bucket": "v2 bucket (read through /query as the database)",
    "token": "v2 API token (default: nsb.conf or NSB_INFLUXDB_TOKEN)",
    "database": "v1 database", "retention-policy": "v1 retention policy",
    "username": "v1 user", "password": "v1 password (default: nsb.conf or "
                                       "NSB_INFLUXDB_PASSWORD)",
}


def register(actions) -> None:
    trend = actions.add_parser(
        "trend", help="each test's answers over the run history, grouped with jumpavg: "
        "the newest run a regression, a progression or normal")
    trend.add_argument("--results-dir", metavar="DIR",
                       help="the history (default: results_dir from the configuration)")
    trend.add_argument("--influx", action="store_true",
                       help="read the history from InfluxDB (what the influxdb output "
                            "wrote) instead of the results directory")
    trend.add_argument("--days", type=float, default=365.0, metavar="N",
                       help="with --influx: the results of the last N days (default: 365)")
    trend.add_argument("--annotate", action="store_true",
                       help="write each run's place in its trend to InfluxDB (nsb_trend): "
                            "the trend dashboard marks where a regression or a "
                            "progression began")
    for opt, what in INFLUX_OPTIONS.items():
        trend.add_argument(f"--{opt}", help=what)
    trend.add_argument("--api", choices=["v1", "v2"], help="InfluxDB API (default: nsb.conf)")
    trend.add_argument("--test", metavar="TEXT",
                       help="only the tests whose name holds TEXT (task file, scenario, "
                            "frame size, chain)")
    trend.add_argument("--format", choices=("text", "json"), default="text")
    trend.add_argument("--html", metavar="FILE",
                       help="also write the trends as an HTML page: each test's answers "
                            "run by run, its groups and where they began")
    trend.set_defaults(handler=cmd_report_trend)


def influx_settings(args):
    """nsb.conf [influxdb] < environment < the options given."""
    from nsb import config
    from nsb.errors import NsbError
    from nsb.outputs.influxdb import settings

    conf = config.load(getattr(args, "config_file", None))
    given = {key.replace("-", "_"): getattr(args, key.replace("-", "_"))
             for key in [*INFLUX_OPTIONS, "api"]}
    try:
        return settings.resolve({k: v for k, v in given.items() if v is not None},
                                settings.conf_options(conf))
    except ValueError as exc:
        key, message = exc.args
        raise NsbError(f"InfluxDB {key}: {message}") from None


def cmd_report_trend(args) -> int:
    """Exit 0; the classification is for reading (``task gate --trend`` acts on it)."""
    from nsb.report import trend
    from nsb.report.terminal import history_dir, plain_table, print_tables

    settings = influx_settings(args) if args.influx or args.annotate else None
    if args.influx:
        from nsb.report import trend_influx

        found = trend.of_history(trend_influx.history(settings, args.days))
    else:
        found = trend.trends(history_dir(args)[0])
    found = [t for t in found if not args.test or args.test in t.name]
    if args.annotate:
        from nsb.report import trend_influx

        marks = trend_influx.marks(found)
        trend_influx.write(settings, marks)
        changes = sum(1 for mark in marks if mark.fields.get("change"))
        print(f"{len(marks)} trend point(s), {changes} change(s), written to "
              f"{settings.target}")
    if args.html:
        from nsb.report import trend_html
        from nsb.task import input_file

        input_file.write_text(Path(args.html), trend_html.render(found))
    if args.format == "json":
        print(trend.as_json(found))
        return 0
    print_tables([plain_table("trends (jumpavg)", trend.HEADERS, trend.rows(found))])
    return 0
