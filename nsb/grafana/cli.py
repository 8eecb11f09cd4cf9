"""`nsb grafana push|export`: argparse wiring and handlers.

urllib3 and grafana-foundation-sdk are imported inside the handlers, so
`nsb --help` stays fast. Where the data source points comes, lowest first, from
the influxdb output's settings (nsb.conf ``[influxdb]``, NSB_INFLUXDB_TOKEN,
NSB_INFLUXDB_PASSWORD) and the ``--influx-*`` options; the Grafana token from
``--token`` or NSB_GRAFANA_TOKEN (the environment keeps it out of ps).
"""

from __future__ import annotations

import argparse
import os

from nsb.errors import NsbError

GRAFANA_URL_ENV = "NSB_GRAFANA_URL"
GRAFANA_TOKEN_ENV = "NSB_GRAFANA_TOKEN"
DEFAULT_GRAFANA_URL = "http://localhost:3000"


def _influx_args(parser: argparse.ArgumentParser, secrets: bool) -> None:
    from nsb.grafana.datasource import DEFAULT_NAME

    group = parser.add_argument_group(
        "InfluxDB data source", "default: the [influxdb] settings of nsb.conf, as the "
        "influxdb output writes")
    group.add_argument("--influx-url", metavar="URL",
                       help="InfluxDB as Grafana reaches it (e.g. http://influxdb:8086)")
    where = group.add_mutually_exclusive_group()
    where.add_argument("--influx-database", metavar="NAME", help="InfluxDB 1.x database")
    where.add_argument("--influx-bucket", metavar="NAME",
                       help="InfluxDB 2.x/3.x (or 1.8 v2 API) bucket, queried with InfluxQL")
    group.add_argument("--influx-user", metavar="NAME", help="InfluxDB 1.x user")
    if secrets:
        group.add_argument("--influx-password", metavar="PASSWORD",
                           help="InfluxDB 1.x password (default: $NSB_INFLUXDB_PASSWORD)")
        group.add_argument("--influx-token", metavar="TOKEN",
                           help="token with read access to the bucket (default: "
                                "$NSB_INFLUXDB_TOKEN)")
    group.add_argument("--datasource-name", default=DEFAULT_NAME, metavar="NAME",
                       help=f"name of the Grafana data source (default: {DEFAULT_NAME})")


def register(subparsers) -> None:
    """Add `grafana` with its `push` and `export` actions to the CLI's subparsers."""
    grafana = subparsers.add_parser(
        "grafana", help="Grafana dashboards of the results nsb writes to InfluxDB")
    actions = grafana.add_subparsers(dest="grafana_command", metavar="ACTION")
    actions.required = True

    push = actions.add_parser(
        "push", help="create or update the InfluxDB data source and the nsb dashboards "
        "in a running Grafana (HTTP API)")
    push.add_argument("--url", default=os.environ.get(GRAFANA_URL_ENV, DEFAULT_GRAFANA_URL),
                      help=f"Grafana's URL (default: ${GRAFANA_URL_ENV} or "
                           f"{DEFAULT_GRAFANA_URL})")
    push.add_argument("--token", default=os.environ.get(GRAFANA_TOKEN_ENV), metavar="TOKEN",
                      help="a Grafana service account token with the Admin role (default: "
                           f"${GRAFANA_TOKEN_ENV})")
    push.add_argument("--folder-uid", metavar="UID",
                      help="save the dashboards in this folder (default: the root)")
    push.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                      help="per request (default: 10)")
    _influx_args(push, secrets=True)
    push.set_defaults(handler=cmd_grafana_push)

    export = actions.add_parser(
        "export", help="write Grafana provisioning files (data source YAML, dashboard "
        "provider YAML, dashboard JSON) instead")
    export.add_argument("directory", metavar="DIR",
                        help="writes DIR/datasources/nsb.yaml, DIR/dashboards/nsb.yaml and "
                             "DIR/dashboards/json/*.json")
    export.add_argument("--grafana-path", metavar="PATH",
                        help="where Grafana sees DIR, e.g. /etc/grafana/provisioning when "
                             "mounted in a container (default: DIR's absolute path)")
    _influx_args(export, secrets=False)
    export.set_defaults(handler=cmd_grafana_export)


def influx_data_source(args, secrets: bool):
    """The data source: the influxdb output's settings, overridden by --influx-* options."""
    from nsb import config
    from nsb.grafana.datasource import InfluxDataSource
    from nsb.outputs.influxdb import settings as output

    conf = config.load(getattr(args, "config_file", None))
    try:
        run = output.resolve(None, output.conf_options(conf))
    except ValueError as exc:
        key, message = exc.args
        raise NsbError(f"nsb.conf [influxdb] {key}: {message}") from None
    if args.influx_database or args.influx_bucket:
        database, bucket = args.influx_database, args.influx_bucket
    elif run.api == "v1":
        database, bucket = run.database, None
    else:
        database, bucket = None, run.bucket
    v1 = database is not None
    user = args.influx_user or (run.username if v1 else None) or None
    password = token = None
    if secrets:
        password = (args.influx_password or run.password or None) if v1 else None
        token = (args.influx_token or run.token or None) if not v1 else None
    return InfluxDataSource(url=args.influx_url or run.url, database=database, bucket=bucket,
                            username=user, password=password, token=token,
                            name=args.datasource_name)


def cmd_grafana_push(args) -> int:
    from nsb.grafana.api import push

    influx = influx_data_source(args, secrets=True)
    result = push(args.url, args.token, influx, folder_uid=args.folder_uid,
                  timeout=args.timeout)
    state = "created" if result.datasource_created else "updated"
    where = f"bucket {influx.bucket}" if influx.v2 else f"database {influx.database}"
    print(f"Grafana {result.grafana_version}: data source {influx.name} "
          f"(uid {result.datasource_uid}) {state}: {influx.url} {where}")
    for board in result.dashboards:
        print(f"  {board.title} (version {board.version}): {board.url}")
    return 0


def cmd_grafana_export(args) -> int:
    from nsb.grafana.provisioning import export

    influx = influx_data_source(args, secrets=False)
    for path in export(args.directory, influx, grafana_path=args.grafana_path):
        print(path)
    return 0
