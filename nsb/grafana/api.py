"""``push``: the InfluxDB data source and the dashboards into a running Grafana.

Through Grafana's HTTP API with grafana-client: ``GET /api/health``, the data
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
from nsb.grafana.datasource import InfluxSettings

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


@contextlib.contextmanager
def _answers(where: str, action: str) -> Iterator[None]:
    """grafana-client and niquests exceptions as one clear NsbError line."""
    import niquests.exceptions
    from grafana_client.client import GrafanaException, GrafanaTimeoutError

    try:
        yield
    except GrafanaTimeoutError as exc:
        raise GrafanaUnreachable(f"Grafana at {where} did not answer in time ({action})") \
            from exc
    except GrafanaException as exc:
        status = exc.status_code
        if status == 401:
            raise GrafanaAuthError(
                f"Grafana at {where} rejected the credentials (401 Unauthorized) when trying to "
                f"{action}: give a valid service account token with --token or "
                "NSB_GRAFANA_TOKEN") from None
        if status == 403:
            raise GrafanaAuthError(
                f"Grafana at {where} refused to {action} (403 Forbidden): the token's service "
                "account needs the Admin role to manage data sources and dashboards") from None
        if not status:
            raise GrafanaUnreachable(f"cannot reach Grafana at {where}: {_reason(exc)}") \
                from None
        message = exc.response.get("message") if isinstance(exc.response, dict) else None
        raise GrafanaError(f"Grafana at {where} could not {action}: HTTP {status}"
                           + (f": {message}" if message else "")) from None
    except niquests.exceptions.JSONDecodeError:
        raise GrafanaError(f"{where} does not answer like Grafana (no JSON) when trying to "
                           f"{action}; is it the Grafana URL?") from None
    except niquests.exceptions.RequestException as exc:
        raise GrafanaUnreachable(f"cannot reach Grafana at {where}: {_reason(exc)}") from None


def _find_datasource(api, name: str) -> dict | None:
    from grafana_client.client import GrafanaClientError

    try:
        return api.datasource.get_datasource_by_name(urllib.parse.quote(name, safe=""))
    except GrafanaClientError as exc:
        if exc.status_code == 404:
            return None
        raise


def push(url: str, token: str | None, influx_settings: InfluxSettings, *,
         measures: Measures | None = None, folder_uid: str | None = None,
         timeout: float = DEFAULT_TIMEOUT_S) -> PushResult:
    """Create or update the data source, then save every dashboard over its last version.

    ``url`` is Grafana's base URL (``http://host:3000``, or with a sub-path); without
    a token, a ``user:password@`` in the URL is used for basic auth.
    """
    from grafana_client import GrafanaApi

    where = public_url(url)
    if not url.startswith(("http://", "https://")):
        raise GrafanaError(f"Grafana URL must start with http:// or https://: {where}")
    parts = urllib.parse.urlsplit(url)
    if parts.path.strip("/") and not parts.path.endswith("/"):
        # a sub-path: grafana-client appends "api" to the path as it is
        url = urllib.parse.urlunsplit(parts._replace(path=parts.path + "/"))
    api = GrafanaApi.from_url(url, credential=token or None, timeout=timeout)

    with _answers(where, "report its health"):
        health = api.client.GET("/health")
    if not isinstance(health, dict) or "version" not in health:
        raise GrafanaError(f"{where} does not answer like Grafana (GET /api/health)")
    if health.get("database", "ok") != "ok":
        raise GrafanaError(f"Grafana at {where} is not healthy: database {health['database']}")

    model = influx_settings.api_model()
    with _answers(where, f"read the data source '{influx_settings.name}'"):
        existing = _find_datasource(api, influx_settings.name)
    if existing is None:
        with _answers(where, f"create the data source '{influx_settings.name}'"):
            answer = api.datasource.create_datasource(model)
        uid = answer["datasource"]["uid"]
        LOG.info("created Grafana data source %s (uid %s)", influx_settings.name, uid)
    else:
        uid = existing["uid"]
        model.update(uid=uid, id=existing["id"])
        header = (existing.get("jsonData") or {}).get("httpHeaderName1")
        if influx_settings.v2 and header and "secureJsonData" not in model:
            model["jsonData"]["httpHeaderName1"] = header  # keep using the token Grafana has
        with _answers(where, f"update the data source '{influx_settings.name}'"):
            api.datasource.update_datasource_by_uid(uid, model)
        LOG.info("updated Grafana data source %s (uid %s)", influx_settings.name, uid)
    result = PushResult(grafana_version=str(health["version"]), datasource_uid=uid,
                        datasource_created=existing is None)

    for board in dashboards(uid, measures):
        body = {"dashboard": board, "overwrite": True, "message": "nsb grafana push"}
        if folder_uid:
            body["folderUid"] = folder_uid
        with _answers(where, f"save the dashboard '{board['title']}'"):
            saved = api.dashboard.update_dashboard(body)
        result.dashboards.append(SavedDashboard(
            uid=saved.get("uid", board["uid"]), title=board["title"],
            url=urllib.parse.urljoin(where, saved.get("url", f"d/{board['uid']}")),
            version=int(saved.get("version", 0))))
        LOG.info("saved Grafana dashboard %s (version %s)", board["uid"], saved.get("version"))
    return result
