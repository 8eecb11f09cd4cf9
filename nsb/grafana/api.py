"""``push``: the InfluxDB data source and the dashboards into a running Grafana.

Through Grafana's HTTP API (urllib3, no client library): ``GET /api/health``, the data
source looked up by name (``GET /api/datasources/name/:name``) then created
(``POST /api/datasources``) or updated (``PUT /api/datasources/uid/:uid``), and each
dashboard saved with ``POST /api/dashboards/db`` and ``overwrite``, so pushing
again updates in place. The token goes in ``Authorization: Bearer``; it never
reaches a message or a log.
"""

from __future__ import annotations

import contextlib
import logging
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field

from nsb.errors import NsbError
from nsb.grafana.dashboards import Measures, dashboards
from nsb.grafana.datasource import InfluxDataSource

LOG = logging.getLogger(__name__)
DEFAULT_TIMEOUT_S = 10.0


class GrafanaError(NsbError):
    """Grafana refused a request or did not answer like Grafana."""


class GrafanaUnreachable(GrafanaError):
    """Nothing answers at the URL (refused, timeout, bad host)."""


class GrafanaAuthError(GrafanaError):
    """401 (bad or missing token) or 403 (the token's role may not do this)."""


@dataclass(frozen=True)
class SavedDashboard:
    uid: str
    title: str
    url: str
    version: int


@dataclass
class PushResult:
    grafana_version: str
    datasource_uid: str
    datasource_created: bool
    dashboards: list[SavedDashboard] = field(default_factory=list)


def public_url(url: str) -> str:
    """The URL without user and password, for messages."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


def _reason(exc: BaseException) -> str:
    text = str(exc)
    for known in ("Connection refused", "timed out", "Name or service not known",
                  "No route to host", "Temporary failure in name resolution"):
        if known.lower() in text.lower():
            return known.lower()
    return text.splitlines()[0][:200] if text else type(exc).__name__


class _HttpError(Exception):
    def __init__(self, status: int, body):
        super().__init__(f"HTTP {status}")
        self.status, self.body = status, body


class _NotJson(Exception):
    pass


class _Unreachable(Exception):
    pass


class _Http:
    """The five JSON calls nsb makes, over urllib3 (already an nsb dependency)."""

    def __init__(self, url: str, token: str | None, timeout: float):
        import urllib3

        parts = urllib.parse.urlsplit(url)
        self.base = urllib.parse.urlunsplit((parts.scheme, parts.netloc.rsplit("@", 1)[-1],
                                             parts.path.rstrip("/") + "/api", "", ""))
        self.headers = {"Accept": "application/json", "Content-Type": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        elif parts.username:
            auth = f"{urllib.parse.unquote(parts.username)}:" \
                   f"{urllib.parse.unquote(parts.password or '')}"
            self.headers.update(urllib3.make_headers(basic_auth=auth))
        self.pool = urllib3.PoolManager(timeout=urllib3.Timeout(total=timeout), retries=False)

    def call(self, method: str, path: str, body: dict | None = None):
        import json

        import urllib3

        try:
            reply = self.pool.request(method, self.base + path, headers=self.headers,
                                      body=json.dumps(body).encode() if body is not None
                                      else None)
        except urllib3.exceptions.NewConnectionError as exc:  # (a ConnectTimeoutError too)
            raise _Unreachable(_reason(exc)) from exc
        except urllib3.exceptions.TimeoutError as exc:
            raise _Unreachable("timed out") from exc
        except urllib3.exceptions.HTTPError as exc:
            raise _Unreachable(_reason(exc)) from exc
        try:
            data = json.loads(reply.data or b"null")
        except ValueError:
            if reply.status >= 400:
                raise _HttpError(reply.status, None) from None
            raise _NotJson() from None
        if reply.status >= 400:
            raise _HttpError(reply.status, data)
        return data


@contextlib.contextmanager
def _answers(where: str, action: str) -> Iterator[None]:
    """HTTP failures as one clear NsbError line."""
    try:
        yield
    except _Unreachable as exc:
        if str(exc) == "timed out":
            raise GrafanaUnreachable(f"Grafana at {where} did not answer in time ({action})") \
                from None
        raise GrafanaUnreachable(f"cannot reach Grafana at {where}: {exc}") from None
    except _HttpError as exc:
        if exc.status == 401:
            raise GrafanaAuthError(
                f"Grafana at {where} rejected the credentials (401 Unauthorized) when trying to "
                f"{action}: give a valid service account token with --token or "
                "NSB_GRAFANA_TOKEN") from None
        if exc.status == 403:
            raise GrafanaAuthError(
                f"Grafana at {where} refused to {action} (403 Forbidden): the token's service "
                "account needs the Admin role to manage data sources and dashboards") from None
        message = exc.body.get("message") if isinstance(exc.body, dict) else None
        raise GrafanaError(f"Grafana at {where} could not {action}: HTTP {exc.status}"
                           + (f": {message}" if message else "")) from None
    except _NotJson:
        raise GrafanaError(f"{where} does not answer like Grafana (no JSON) when trying to "
                           f"{action}; is it the Grafana URL?") from None


def _find_datasource(api: _Http, name: str) -> dict | None:
    try:
        return api.call("GET", "/datasources/name/" + urllib.parse.quote(name, safe=""))
    except _HttpError as exc:
        if exc.status == 404:
            return None
        raise


def push(url: str, token: str | None, data_source: InfluxDataSource, *,
         measures: Measures | None = None, folder_uid: str | None = None,
         timeout: float = DEFAULT_TIMEOUT_S) -> PushResult:
    """Create or update the data source, then save every dashboard over its last version.

    ``url`` is Grafana's base URL (``http://host:3000``, or with a sub-path); without
    a token, a ``user:password@`` in the URL is used for basic auth.
    """
    where = public_url(url)
    if not url.startswith(("http://", "https://")):
        raise GrafanaError(f"Grafana URL must start with http:// or https://: {where}")
    api = _Http(url, token, timeout)

    with _answers(where, "report its health"):
        health = api.call("GET", "/health")
    if not isinstance(health, dict) or "version" not in health:
        raise GrafanaError(f"{where} does not answer like Grafana (GET /api/health)")
    if health.get("database", "ok") != "ok":
        raise GrafanaError(f"Grafana at {where} is not healthy: database {health['database']}")

    model = data_source.api_model()
    with _answers(where, f"read the data source '{data_source.name}'"):
        existing = _find_datasource(api, data_source.name)
    if existing is None:
        with _answers(where, f"create the data source '{data_source.name}'"):
            answer = api.call("POST", "/datasources", model)
        uid = answer["datasource"]["uid"]
        LOG.info("created Grafana data source %s (uid %s)", data_source.name, uid)
    else:
        uid = existing["uid"]
        model.update(uid=uid, id=existing["id"])
        header = (existing.get("jsonData") or {}).get("httpHeaderName1")
        if data_source.v2 and header and "secureJsonData" not in model:
            model["jsonData"]["httpHeaderName1"] = header  # keep using the token Grafana has
        with _answers(where, f"update the data source '{data_source.name}'"):
            api.call("PUT", f"/datasources/uid/{urllib.parse.quote(uid, safe='')}", model)
        LOG.info("updated Grafana data source %s (uid %s)", data_source.name, uid)
    result = PushResult(grafana_version=str(health["version"]), datasource_uid=uid,
                        datasource_created=existing is None)

    for board in dashboards(uid, measures):
        body = {"dashboard": board, "overwrite": True, "message": "nsb grafana push"}
        if folder_uid:
            body["folderUid"] = folder_uid
        with _answers(where, f"save the dashboard '{board['title']}'"):
            saved = api.call("POST", "/dashboards/db", body)
        result.dashboards.append(SavedDashboard(
            uid=saved.get("uid", board["uid"]), title=board["title"],
            url=urllib.parse.urljoin(where, saved.get("url", f"d/{board['uid']}")),
            version=int(saved.get("version", 0))))
        LOG.info("saved Grafana dashboard %s (version %s)", board["uid"], saved.get("version"))
    return result
