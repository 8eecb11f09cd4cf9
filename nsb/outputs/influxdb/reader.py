"""Read back with InfluxQL: GET /query, as Grafana's InfluxDB data source does.

One query language for both APIs: InfluxDB 1.x answers /query with HTTP basic
authentication; InfluxDB 2.x answers its v1-compatible /query with ``Authorization:
Token`` and the bucket as the database (its DBRP mapping). Errors are one line:
what failed, where, and InfluxDB's own words.
"""

from __future__ import annotations

import base64
import json
import urllib.parse

from nsb.errors import NsbError
from nsb.outputs.influxdb.settings import InfluxSettings


def headers(settings: InfluxSettings) -> dict[str, str]:
    if settings.api == "v2":
        return {"Authorization": f"Token {settings.token}"} if settings.token else {}
    if settings.username or settings.password:
        pair = f"{settings.username}:{settings.password}".encode()
        return {"Authorization": "Basic " + base64.b64encode(pair).decode()}
    return {}


def query(settings: InfluxSettings, influxql: str) -> list[dict]:
    """The series of one statement's answer (``name``, ``tags``, ``columns``, ``values``,
    times in nanoseconds); [] when nothing matched."""
    import urllib3

    database = settings.bucket if settings.api == "v2" else settings.database
    params = {"db": database, "q": influxql, "epoch": "ns"}
    if settings.api == "v1" and settings.retention_policy:
        params["rp"] = settings.retention_policy
    http = urllib3.PoolManager(cert_reqs="CERT_REQUIRED" if settings.verify_ssl else "CERT_NONE",
                               retries=False, timeout=urllib3.Timeout(total=settings.timeout_s))
    url = f"{settings.url}/query?{urllib.parse.urlencode(params)}"
    try:
        response = http.request("GET", url, headers=headers(settings))
    except Exception as exc:  # connection refused, timeout, TLS
        reason = getattr(exc, "reason", None) or exc
        raise NsbError(f"InfluxDB at {settings.target}: cannot query: "
                       f"{type(reason).__name__}: {reason}"[:400]) from None
    finally:
        http.clear()
    text = response.data.decode("utf-8", "replace")
    try:
        body = json.loads(text)
    except ValueError:
        body = {}
    error = body.get("error") if isinstance(body, dict) else None
    results = body.get("results") if isinstance(body, dict) else None
    if response.status != 200 or error or not isinstance(results, list) or not results:
        words = error or " ".join(text.split())[:300]
        raise NsbError(f"InfluxDB at {settings.target} refused a query (HTTP "
                       f"{response.status}): {words}")
    first = results[0]
    if first.get("error"):
        raise NsbError(f"InfluxDB at {settings.target} refused a query: {first['error']}")
    return first.get("series") or []


def rows(series: list[dict]):
    """(tags, {column: value}) of every row of every series."""
    for one in series:
        tags = one.get("tags") or {}
        columns = one.get("columns") or []
        for values in one.get("values") or []:
            yield tags, dict(zip(columns, values, strict=False))
