"""Where the InfluxDB output writes and how patiently: nsb.conf [influxdb], task options.

Precedence, lowest first: the defaults below, what nsb.conf's ``[influxdb]`` group
sets (Yardstick's ``[dispatcher_influxdb]`` reads as it), the environment
(``NSB_INFLUXDB_TOKEN``, ``NSB_INFLUXDB_PASSWORD``: secrets kept out of files), the
task's ``outputs: [{type: influxdb, ...}]`` options. Only what a level sets counts:
a default never hides what nsb.conf says. The API is the one the task names or
implies (its keys), else the one nsb.conf names or implies, else v2.
Tokens and passwords never appear in logs, ``describe()`` or results.
"""

from __future__ import annotations

import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields

from oslo_config import cfg

from nsb import config

GROUP = "influxdb"
SECRETS = ("token", "password")
ENVIRONMENT = {"token": "NSB_INFLUXDB_TOKEN", "password": "NSB_INFLUXDB_PASSWORD"}
V1_ONLY = ("database", "retention_policy", "username", "password", "create_database")
V2_ONLY = ("org", "bucket", "token")
MASK = "<secret>"
# Yardstick's yardstick.conf spelling of these options, read as nsb's
YARDSTICK_GROUP = "dispatcher_influxdb"
YARDSTICK_NAMES = {"url": "target", "database": "db_name", "username": "username",
                   "password": "password", "timeout_s": "timeout"}


def _yardstick(name: str) -> list[cfg.DeprecatedOpt]:
    """oslo reads the option under Yardstick's name too (its sample lists it as
    "Deprecated group/name"); nsb's own name wins when a file has both."""
    return [cfg.DeprecatedOpt(YARDSTICK_NAMES[name], group=YARDSTICK_GROUP)]


OPTS = [
    cfg.StrOpt("url", default="http://localhost:8086", deprecated_opts=_yardstick("url"),
               help="InfluxDB base URL (http or https), e.g. http://influx.lab:8086. "
                    "Yardstick's [dispatcher_influxdb] target, db_name, username, password "
                    "and timeout read as url, database, username, password and timeout_s."),
    cfg.StrOpt("api", default="v2", choices=[
        ("v2", "/api/v2/write with url, token, org, bucket: InfluxDB 2.x and 3.x, 1.8+ "
               "(token 'user:password', bucket 'database/retention'), VictoriaMetrics"),
        ("v1", "/write with url, database, username, password: InfluxDB 1.x")],
        help="Which write API to use (when it is not set: v1 if the options set are "
             "v1's, e.g. database, else v2)."),
    cfg.StrOpt("org", default="", help="v2: organization name or ID."),
    cfg.StrOpt("bucket", default="nsb", help="v2: bucket the points go to."),
    cfg.StrOpt("token", default="", secret=True,
               help="v2: API token (or NSB_INFLUXDB_TOKEN in the environment)."),
    cfg.StrOpt("database", default="nsb", deprecated_opts=_yardstick("database"),
               help="v1: database the points go to (setting it means api v1, unless "
                    "api says otherwise)."),
    cfg.StrOpt("retention_policy", default="",
               help="v1: retention policy (default: the database's default)."),
    cfg.StrOpt("username", default="", deprecated_opts=_yardstick("username"),
               help="v1: user name (HTTP basic authentication)."),
    cfg.StrOpt("password", default="", secret=True, deprecated_opts=_yardstick("password"),
               help="v1: password (or NSB_INFLUXDB_PASSWORD in the environment)."),
    cfg.BoolOpt("create_database", default=True,
                help="v1: CREATE DATABASE before the first write (needs admin rights; "
                     "a refusal is only logged)."),
    cfg.BoolOpt("verify_ssl", default=True, help="Check the server's TLS certificate."),
    cfg.FloatOpt("timeout_s", default=10.0, min=0.1, deprecated_opts=_yardstick("timeout_s"),
                 help="Seconds one HTTP request may take."),
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
    """The options the [influxdb] group of a loaded nsb.conf sets ({} if it is not
    registered): an option left out is not there, so its default never hides the
    task's or the environment's value, nor decides the API."""
    if conf is None:
        return {}
    try:
        group = conf[GROUP]
    except (cfg.NoSuchOptError, KeyError, AttributeError):
        return {}
    return {opt.dest: getattr(group, opt.dest) for opt in OPTS
            if config.is_set(conf, opt.dest, GROUP)}


def implied_api(options: Mapping) -> str | None:
    """The API ``options`` name or imply by their keys (a database means v1); None if
    they say nothing; ValueError("api", ...) if they name options of both."""
    if options.get("api"):
        return options["api"]
    v1 = sorted(key for key in V1_ONLY if key in options)
    v2 = sorted(key for key in V2_ONLY if key in options)
    if v1 and v2:
        raise ValueError("api", f"{', '.join(v1)} (api v1) and {', '.join(v2)} (api v2) are "
                                "both set: set api = v1 or api = v2")
    return "v1" if v1 else "v2" if v2 else None


def resolve(task_options: Mapping | None = None, conf_values: Mapping | None = None,
            environ: Mapping[str, str] | None = None) -> InfluxSettings:
    """Merge defaults < nsb.conf < environment < task; raise ValueError(key, message)."""
    environ = os.environ if environ is None else environ
    known = {f.name for f in fields(InfluxSettings)}
    conf_values = {k: v for k, v in (conf_values or {}).items()
                   if k in known and v is not None}
    task_options = dict(task_options or {})
    values: dict = {opt.dest: opt.default for opt in OPTS}
    values.update(conf_values)
    for key, variable in ENVIRONMENT.items():
        if environ.get(variable):
            values[key] = environ[variable]
    values.update({k: v for k, v in task_options.items() if k in known})
    values["api"] = _api(task_options, conf_values)
    values["tags"] = {str(k): str(v) for k, v in (values.get("tags") or {}).items()}
    values["url"] = str(values["url"]).rstrip("/")
    check(values, task_options)
    return InfluxSettings(**values)


def _api(task_options: Mapping, conf_values: Mapping) -> str:
    """The task's keys say which API it means, else nsb.conf's, else v2. A task naming
    options of both gets check()'s error, which names its key; an option nsb.conf
    leaves empty (``org =``) says nothing."""
    try:
        task = implied_api(task_options)
    except ValueError:
        task = None
    conf = {key: value for key, value in conf_values.items() if value not in ("", None)}
    return task or implied_api(conf) or "v2"


def origins(task_options: Mapping | None = None, conf_values: Mapping | None = None,
            environ: Mapping[str, str] | None = None) -> dict[str, list[str]]:
    """Which settings the task, the environment and nsb.conf set (names only, for the
    dry-run and results: what is not listed is the default)."""
    environ = os.environ if environ is None else environ
    known = {opt.dest for opt in OPTS}
    task = sorted(k for k in (task_options or {}) if k in known)
    env = sorted(k for k, var in ENVIRONMENT.items() if environ.get(var) and k not in task)
    conf = sorted(k for k, v in (conf_values or {}).items()
                  if k in known and v is not None and k not in task and k not in env)
    found = {"task": task, "environment": env, "nsb.conf": conf}
    return {where: keys for where, keys in found.items() if keys}


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
