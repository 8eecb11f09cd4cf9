"""Where the InfluxDB output writes and how patiently: nsb.conf [influxdb], task options.

Precedence, lowest first: the defaults below, nsb.conf's ``[influxdb]`` group,
the environment (``NSB_INFLUXDB_TOKEN``, ``NSB_INFLUXDB_PASSWORD``: secrets kept
out of files), the task's ``outputs: [{type: influxdb, ...}]`` options.
Tokens and passwords never appear in logs, ``describe()`` or results.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields

from oslo_config import cfg

GROUP = "influxdb"
SECRETS = ("token", "password")
ENVIRONMENT = {"token": "NSB_INFLUXDB_TOKEN", "password": "NSB_INFLUXDB_PASSWORD"}
V1_ONLY = ("database", "retention_policy", "username", "password", "create_database")
V2_ONLY = ("org", "bucket", "token")
MASK = "<secret>"

OPTS = [
    cfg.StrOpt("url", default="http://localhost:8086",
               help="InfluxDB base URL (http or https), e.g. http://influx.lab:8086."),
    cfg.StrOpt("api", default="v2", choices=[
        ("v2", "/api/v2/write with url, token, org, bucket: InfluxDB 2.x and 3.x, 1.8+ "
               "(token 'user:password', bucket 'database/retention'), VictoriaMetrics"),
        ("v1", "/write with url, database, username, password: InfluxDB 1.x")],
        help="Which write API to use."),
    cfg.StrOpt("org", default="", help="v2: organization name or ID."),
    cfg.StrOpt("bucket", default="nsb", help="v2: bucket the points go to."),
    cfg.StrOpt("token", default="", secret=True,
               help="v2: API token (or NSB_INFLUXDB_TOKEN in the environment)."),
    cfg.StrOpt("database", default="nsb", help="v1: database the points go to."),
    cfg.StrOpt("retention_policy", default="",
               help="v1: retention policy (default: the database's default)."),
    cfg.StrOpt("username", default="", help="v1: user name (HTTP basic authentication)."),
    cfg.StrOpt("password", default="", secret=True,
               help="v1: password (or NSB_INFLUXDB_PASSWORD in the environment)."),
    cfg.BoolOpt("create_database", default=True,
                help="v1: CREATE DATABASE before the first write (needs admin rights; "
                     "a refusal is only logged)."),
    cfg.BoolOpt("verify_ssl", default=True, help="Check the server's TLS certificate."),
    cfg.FloatOpt("timeout_s", default=10.0, min=0.1, help="Seconds one HTTP request may take."),
    cfg.IntOpt("batch_size", default=1000, min=1, help="Points per write request."),
    cfg.FloatOpt("flush_interval_s", default=1.0, min=0.0,
                 help="Seconds points may wait for a batch to fill before they are written."),
    cfg.FloatOpt("retry_interval_s", default=1.0, min=0.0,
                 help="Seconds before the first retry of a failed write; each further retry "
                      "waits exponential_base times longer, up to max_retry_interval_s."),
    cfg.FloatOpt("max_retry_interval_s", default=30.0, min=0.0,
                 help="Longest wait between two retries; also how often an unreachable "
                      "server is tried again once points are being spooled."),
    cfg.FloatOpt("exponential_base", default=2.0, min=1.0,
                 help="Growth factor of the wait between retries."),
    cfg.FloatOpt("max_retry_time_s", default=120.0, min=0.0,
                 help="Seconds a batch is retried before it is spooled to the results "
                      "directory (influxdb.spool.lp) for 'nsb results push'."),
    cfg.DictOpt("tags", default={},
                help="Extra tags on every point, e.g. lab:pod3,dut:gen10."),
]

_JSON_TYPES = {cfg.StrOpt: "string", cfg.BoolOpt: "boolean", cfg.FloatOpt: "number",
               cfg.IntOpt: "integer"}


def list_opts() -> list[tuple[str, list[cfg.Opt]]]:
    """The [influxdb] options (the output's CONF_OPTS, which nsb.config registers)."""
    return [(GROUP, OPTS)]


def options_schema() -> dict:
    """The task options: the same names as nsb.conf; no defaults (nsb.conf fills them)."""
    properties: dict = {}
    for opt in OPTS:
        if isinstance(opt, cfg.DictOpt):
            prop: dict = {"type": "object", "additionalProperties": {
                "type": ["string", "number", "boolean"]}}
        else:
            prop = {"type": _JSON_TYPES[type(opt)]}
        if opt.name == "api":
            prop["enum"] = ["v1", "v2"]
        if getattr(opt.type, "min", None) is not None:
            prop["minimum"] = opt.type.min
        prop["description"] = opt.help
        properties[opt.name] = prop
    return {"type": "object", "additionalProperties": False, "properties": properties}


@dataclass(frozen=True)
class InfluxSettings:
    url: str = "http://localhost:8086"
    api: str = "v2"
    org: str = ""
    bucket: str = "nsb"
    token: str = field(default="", repr=False)
    database: str = "nsb"
    retention_policy: str = ""
    username: str = ""
    password: str = field(default="", repr=False)
    create_database: bool = True
    verify_ssl: bool = True
    timeout_s: float = 10.0
    batch_size: int = 1000
    flush_interval_s: float = 1.0
    retry_interval_s: float = 1.0
    max_retry_interval_s: float = 30.0
    exponential_base: float = 2.0
    max_retry_time_s: float = 120.0
    tags: Mapping[str, str] = field(default_factory=dict)

    @property
    def target(self) -> str:
        """Where the points go, for messages: URL and bucket or database (no secrets)."""
        if self.api == "v1":
            where = self.database + (f".{self.retention_policy}" if self.retention_policy else "")
            return f"{self.url} database {where}"
        return f"{self.url} bucket {self.bucket}" + (f" (org {self.org})" if self.org else "")

    def public(self) -> dict:
        """Every setting, secrets masked: for describe(), results and logs."""
        values = asdict(self)
        for key in SECRETS:
            if values[key]:
                values[key] = MASK
        unused = V2_ONLY if self.api == "v1" else V1_ONLY
        return {key: value for key, value in values.items() if key not in unused}

    def destination(self) -> dict:
        """What identifies the target (no secrets, no tuning): kept beside a spool."""
        keys = (("url", "api", "database", "retention_policy", "username") if self.api == "v1"
                else ("url", "api", "org", "bucket"))
        return {key: getattr(self, key) for key in keys}


def conf_options(conf) -> dict:
    """The [influxdb] group of a loaded nsb.conf as a dict ({} if it is not registered)."""
    if conf is None:
        return {}
    try:
        group = conf[GROUP]
    except (cfg.NoSuchOptError, KeyError, AttributeError):
        return {}
    return {opt.dest: getattr(group, opt.dest) for opt in OPTS}


def resolve(task_options: Mapping | None = None, conf_values: Mapping | None = None,
            environ: Mapping[str, str] | None = None) -> InfluxSettings:
    """Merge defaults < nsb.conf < environment < task; raise ValueError(key, message)."""
    environ = os.environ if environ is None else environ
    known = {f.name for f in fields(InfluxSettings)}
    values: dict = {opt.dest: opt.default for opt in OPTS}
    values.update({k: v for k, v in (conf_values or {}).items() if k in known and v is not None})
    for key, variable in ENVIRONMENT.items():
        if environ.get(variable):
            values[key] = environ[variable]
    task_options = dict(task_options or {})
    values.update({k: v for k, v in task_options.items() if k in known})
    if "api" not in task_options:  # the task's keys say which API it means
        v1, v2 = (any(k in task_options for k in keys) for keys in (V1_ONLY, V2_ONLY))
        if v1 != v2:
            values["api"] = "v1" if v1 else "v2"
    values["tags"] = {str(k): str(v) for k, v in (values.get("tags") or {}).items()}
    values["url"] = str(values["url"]).rstrip("/")
    check(values, task_options)
    return InfluxSettings(**values)


def check(values: Mapping, task_options: Mapping) -> None:
    parsed = urllib.parse.urlsplit(values["url"])
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError("url", f"'{values['url']}' is not an http(s) URL, e.g. "
                                "http://localhost:8086")
    if parsed.username or parsed.password:
        raise ValueError("url", "put credentials in token or username/password, not the URL")
    if values["api"] not in ("v1", "v2"):
        raise ValueError("api", f"api must be v1 or v2, not '{values['api']}'")
    wrong = V2_ONLY if values["api"] == "v1" else V1_ONLY
    for key in wrong:
        if key in task_options:
            other = "v2" if values["api"] == "v1" else "v1"
            raise ValueError(key, f"'{key}' belongs to api: {other} but this output uses api: "
                                  f"{values['api']} (set api: {other}, or drop '{key}')")
    if values["api"] == "v2" and not values["bucket"]:
        raise ValueError("bucket", "api v2 needs a bucket")
    if values["api"] == "v1" and not values["database"]:
        raise ValueError("database", "api v1 needs a database")
