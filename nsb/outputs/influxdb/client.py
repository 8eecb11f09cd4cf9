"""Send line protocol to a server: v2 API through influxdb-client, v1 /write over HTTP.

InfluxDB 1.x before 1.8 has no /api/v2/write, so api v1 posts to /write itself
(urllib3, HTTP basic authentication: credentials never in a URL, where an
HTTP log line would show them). No sender retries on its own; the caller decides.
Errors are sorted by what helps: a transient one (connection, timeout, 5xx, 429)
is worth retrying; an access one (401, 403, 404: token, user, bucket, database)
needs the user; a rejected one (400, 413, 422...) is bad data that no retry fixes.
"""

from __future__ import annotations

import base64
import logging
import urllib.parse

from nsb.outputs.influxdb.settings import InfluxSettings

LOG = logging.getLogger(__name__)

TRANSIENT_STATUS = {408, 425, 429, 500, 502, 503, 504}
ACCESS_STATUS = {401, 403, 404}


class SendError(Exception):
    """A write failed; ``kind`` is "transient", "access" or "rejected"."""

    def __init__(self, kind: str, message: str, status: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.status = status


def classify(status: int | None) -> str:
    if status is None or status in TRANSIENT_STATUS or status >= 500:
        return "transient"
    if status in ACCESS_STATUS:
        return "access"
    return "rejected"


def _body_text(body) -> str:
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    return " ".join(str(body or "").split())[:300]


class Sender:
    def __init__(self, settings: InfluxSettings):
        self.settings = settings

    def send(self, lines: list[str]) -> None:
        """Write the lines (nanosecond timestamps); raise SendError."""
        raise NotImplementedError

    def close(self) -> None: ...


class V2Sender(Sender):
    """/api/v2/write through influxdb-client's synchronous write API."""

    def __init__(self, settings: InfluxSettings):
        super().__init__(settings)
        from influxdb_client import InfluxDBClient
        from influxdb_client.client.write_api import SYNCHRONOUS

        self.client = InfluxDBClient(url=settings.url, token=settings.token or None,
                                     org=settings.org or "-",
                                     timeout=int(settings.timeout_s * 1000),
                                     verify_ssl=settings.verify_ssl, retries=False)
        self.write_api = self.client.write_api(write_options=SYNCHRONOUS)

    def send(self, lines: list[str]) -> None:
        from influxdb_client import WritePrecision
        from influxdb_client.rest import ApiException

        settings = self.settings
        try:
            self.write_api.write(bucket=settings.bucket, org=settings.org or "-",
                                 record="\n".join(lines), write_precision=WritePrecision.NS)
        except ApiException as exc:
            raise SendError(classify(exc.status), f"HTTP {exc.status} {exc.reason or ''}: "
                            f"{_body_text(exc.body)}".strip(), exc.status) from None
        except Exception as exc:  # urllib3 connection, timeout and protocol errors
            raise SendError("transient", _network_message(exc)) from None

    def close(self) -> None:
        self.client.close()


class V1Sender(Sender):
    """InfluxDB 1.x: POST /write?db=..&rp=..&precision=ns with basic authentication."""

    def __init__(self, settings: InfluxSettings):
        super().__init__(settings)
        import urllib3

        self.http = urllib3.PoolManager(
            cert_reqs="CERT_REQUIRED" if settings.verify_ssl else "CERT_NONE",
            retries=False, timeout=urllib3.Timeout(total=settings.timeout_s))
        self.headers = {"Content-Type": "text/plain; charset=utf-8"}
        if settings.username or settings.password:
            pair = f"{settings.username}:{settings.password}".encode()
            self.headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        self.database_created = not settings.create_database

    def _request(self, path: str, params: dict, body: bytes, headers: dict):
        url = f"{self.settings.url}{path}?{urllib.parse.urlencode(params)}"
        try:
            return self.http.request("POST", url, body=body, headers={**self.headers, **headers})
        except Exception as exc:  # connection refused, timeout, TLS
            raise SendError("transient", _network_message(exc)) from None

    def create_database(self) -> None:
        """CREATE DATABASE once (it is idempotent); a refusal is logged, writes decide."""
        name = self.settings.database.replace("\\", "\\\\").replace('"', '\\"')
        response = self._request("/query", {}, urllib.parse.urlencode(
            {"q": f'CREATE DATABASE "{name}"'}).encode(),
            {"Content-Type": "application/x-www-form-urlencoded"})
        if response.status == 200 and b'"error"' not in response.data:
            LOG.debug("InfluxDB database %s is there", self.settings.database)
        else:
            LOG.info("could not create InfluxDB database %s (HTTP %s: %s); writing anyway",
                     self.settings.database, response.status, _body_text(response.data))
        self.database_created = True

    def send(self, lines: list[str]) -> None:
        if not self.database_created:
            self.create_database()
        params = {"db": self.settings.database, "precision": "ns"}
        if self.settings.retention_policy:
            params["rp"] = self.settings.retention_policy
        response = self._request("/write", params, "\n".join(lines).encode(), {})
        if response.status != 204:
            raise SendError(classify(response.status),
                            f"HTTP {response.status}: {_body_text(response.data)}",
                            response.status)

    def close(self) -> None:
        self.http.clear()


def _network_message(exc: Exception) -> str:
    """The cause without the request URL's query (it names nothing secret, but keep it short)."""
    reason = getattr(exc, "reason", None) or exc
    return f"{type(reason).__name__}: {reason}"[:300]


def make_sender(settings: InfluxSettings) -> Sender:
    return V1Sender(settings) if settings.api == "v1" else V2Sender(settings)
