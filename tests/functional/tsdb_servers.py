"""Real time-series servers for the InfluxDB output tests, on free loopback ports.

``influxdb1(tmp_path)`` runs Debian's ``influxd`` (InfluxDB 1.6, v1 HTTP API);
``victoria_metrics(tmp_path)`` runs Debian's ``victoria-metrics``, which accepts
the InfluxDB v2 write API. Each keeps its data in a directory under tmp_path and
can be stopped and started again on the same port and data (the outage tests).
Both stop their process when the ``with`` block ends, whatever happened.
"""

from __future__ import annotations

import base64
import contextlib
import json
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

START_TIMEOUT_S = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def http(method: str, url: str, data: bytes | None = None, headers: dict | None = None,
         timeout: float = 10.0) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _binary(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed (make deps installs it)")
    return path


class Server:
    """A server process with a readiness URL; start() waits until it answers."""

    name = "server"

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        self.log_path = workdir / f"{self.name}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        raise NotImplementedError

    def ready(self) -> bool:
        raise NotImplementedError

    def start(self) -> None:
        assert self.process is None, f"{self.name} already running"
        log = open(self.log_path, "ab")  # noqa: SIM115 - the process keeps it
        self.process = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.process.returncode
                self.process = None
                pytest.fail(f"{self.name} exited with {code}:\n{self.log_tail()}")
            try:
                if self.ready():
                    return
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()
        pytest.fail(f"{self.name} did not answer within {START_TIMEOUT_S:g} s:\n"
                    f"{self.log_tail()}")

    def stop(self) -> None:
        """Graceful stop (SIGTERM): what the server acknowledged is on disk."""
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class InfluxDb1(Server):
    """Debian's InfluxDB 1.6 (influxd), optionally with authentication."""

    name = "influxd"

    def __init__(self, workdir: Path, admin: tuple[str, str] | None = None):
        super().__init__(workdir)
        self.rpc_port = free_port()
        self.admin = admin
        self.config = workdir / "influxdb.conf"
        self.config.write_text(f"""\
reporting-disabled = true
bind-address = "127.0.0.1:{self.rpc_port}"
[meta]
  dir = "{workdir}/meta"
[data]
  dir = "{workdir}/data"
  wal-dir = "{workdir}/wal"
  query-log-enabled = false
[monitor]
  store-enabled = false
[http]
  enabled = true
  bind-address = "127.0.0.1:{self.port}"
  auth-enabled = {"true" if admin else "false"}
  log-enabled = false
[continuous_queries]
  enabled = false
""")

    def command(self) -> list[str]:
        return [_binary("influxd"), "run", "-config", str(self.config)]

    def ready(self) -> bool:
        status, _ = http("GET", f"{self.url}/ping", timeout=2)
        return status == 204

    def start(self) -> None:
        first = not (self.workdir / "meta").exists()
        super().start()
        if first and self.admin:
            user, password = self.admin
            # with no user yet, InfluxDB lets anyone create the first admin
            self.query(f"CREATE USER \"{user}\" WITH PASSWORD '{password}' WITH ALL PRIVILEGES",
                       auth=False)

    def _auth(self) -> dict:
        if not self.admin:
            return {}
        token = base64.b64encode(":".join(self.admin).encode()).decode()
        return {"Authorization": f"Basic {token}"}

    def query(self, q: str, db: str | None = None, auth: bool = True) -> dict:
        """An InfluxQL statement over HTTP; times as integer nanoseconds."""
        params = {"q": q, "epoch": "ns"}
        if db:
            params["db"] = db
        status, body = http("POST", f"{self.url}/query",
                            data=urllib.parse.urlencode(params).encode(),
                            headers={"Content-Type": "application/x-www-form-urlencoded",
                                     **(self._auth() if auth else {})})
        assert status == 200, f"InfluxQL {q!r} failed ({status}): {body[:500]!r}"
        reply = json.loads(body)
        for result in reply.get("results", []):
            assert "error" not in result, f"InfluxQL {q!r}: {result['error']}"
        return reply

    def points(self, db: str, where: str = "") -> list[tuple[str, dict, int, dict]]:
        """Every stored point as (measurement, tags, time ns, fields), fields without nulls."""
        reply = self.query(f'SELECT * FROM /.*/ {where} GROUP BY *', db=db)
        points = []
        for result in reply["results"]:
            for series in result.get("series", []):
                columns = series["columns"]
                for row in series["values"]:
                    values = dict(zip(columns, row, strict=True))
                    stamp = values.pop("time")
                    fields = {k: v for k, v in values.items() if v is not None}
                    # GROUP BY * over several measurements lists every tag key: drop blanks
                    tags = {k: v for k, v in (series.get("tags") or {}).items() if v != ""}
                    points.append((series["name"], tags, stamp, fields))
        return points


class VictoriaMetrics(Server):
    """Debian's VictoriaMetrics single node: InfluxDB line protocol in, JSON export out."""

    name = "victoria-metrics"

    def command(self) -> list[str]:
        return [_binary("victoria-metrics"), f"-storageDataPath={self.workdir}/data",
                f"-httpListenAddr=127.0.0.1:{self.port}", "-retentionPeriod=100y",
                "-loggerLevel=WARN", "-search.disableCache"]

    def ready(self) -> bool:
        status, body = http("GET", f"{self.url}/health", timeout=2)
        return status == 200 and body.strip() == b"OK"

    def export(self, match: str = '{__name__=~"nsb_.+"}') -> list[dict]:
        """Raw samples (duplicates included) as /api/v1/export lines, after a flush."""
        status, body = http("GET", f"{self.url}/internal/force_flush")
        assert status == 200, f"force_flush failed ({status}): {body[:300]!r}"
        query = urllib.parse.urlencode({"match[]": match, "start": "0"})
        status, body = http("GET", f"{self.url}/api/v1/export?{query}", timeout=30)
        assert status == 200, f"export failed ({status}): {body[:300]!r}"
        return [json.loads(line) for line in body.decode().splitlines() if line.strip()]

    def samples(self, match: str = '{__name__=~"nsb_.+"}') -> list[tuple[str, dict, int, float]]:
        """Every raw sample as (metric name, labels, time ms, value)."""
        samples = []
        for series in self.export(match):
            labels = dict(series["metric"])
            name = labels.pop("__name__")
            for stamp, value in zip(series["timestamps"], series["values"], strict=True):
                samples.append((name, labels, stamp, value))
        return samples


@contextlib.contextmanager
def _running(server: Server) -> Iterator:
    try:
        server.start()
        yield server
    finally:
        server.stop()


def influxdb1(tmp_path: Path, admin: tuple[str, str] | None = None):
    """InfluxDB 1.6 on a free port with its data in tmp_path/influxdb."""
    return _running(InfluxDb1(tmp_path / "influxdb", admin))


def victoria_metrics(tmp_path: Path):
    """VictoriaMetrics on a free port with its data in tmp_path/victoria-metrics."""
    return _running(VictoriaMetrics(tmp_path / "victoria-metrics"))
