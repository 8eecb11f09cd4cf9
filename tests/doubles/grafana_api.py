"""Test double of Grafana's HTTP API: the endpoints `nsb grafana push` uses.

Grafana cannot be installed on the test machines, so this stdlib-only server
stands in for it on a free loopback port. It checks each request against
Grafana's documented HTTP API (docs/sources/developers/http_api/data_source.md,
dashboard.md and other.md of Grafana) and answers as Grafana does:

- ``GET /api/health`` (no auth): ``{"commit", "database": "ok", "version"}``;
- ``GET /api/datasources/name/:name``: the data source, or 404 "Data source not found";
- ``POST /api/datasources``: 409 on a taken name or uid, else "Datasource added";
- ``PUT /api/datasources/uid/:uid``: 404 when unknown, else "Datasource updated";
- ``POST /api/dashboards/db``: 412 "name-exists" without ``overwrite`` when the
  uid exists, else saved with its version incremented and ``/d/:uid/:slug``.

With ``sub_path`` ("/grafana") it serves under that prefix, as Grafana does with
``root_url`` and ``serve_from_sub_path``. Every other /api/ request needs
``Authorization: Bearer <token>`` of a known token (401 "Invalid API key"
otherwise); a token with the Viewer role gets 403 on writes.
Bodies must be JSON objects with the documented keys and types (400 otherwise).
Anything off the documented API is also recorded in ``violations``, which a test
asserts empty; ``requests`` keeps every request (method, path, headers, body).
Secrets sent in ``secureJsonData`` are kept apart and never returned, as Grafana does.
"""

from __future__ import annotations

import json
import re
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERSION = "11.6.0"
COMMIT = "nsb-double"

DATASOURCE_KEYS = {  # AddDataSourceCommand / UpdateDataSourceCommand and the doc examples
    "id", "orgId", "uid", "name", "type", "typeLogoUrl", "access", "url", "password", "user",
    "database", "basicAuth", "basicAuthUser", "basicAuthPassword", "withCredentials",
    "isDefault", "jsonData", "secureJsonData", "version", "readOnly"}
DATASOURCE_REQUIRED = {"name", "type", "access"}
DATASOURCE_TYPES = {"name": str, "type": str, "access": str, "url": str, "user": str,
                    "database": str, "uid": str, "basicAuth": bool, "isDefault": bool,
                    "withCredentials": bool, "readOnly": bool, "jsonData": dict,
                    "secureJsonData": dict, "id": int, "orgId": int, "version": int}
DASHBOARD_SAVE_KEYS = {"dashboard", "folderId", "folderUid", "overwrite", "message"}
UID_RE = re.compile(r"^[a-zA-Z0-9\-_]{1,40}$")
WRITE_ROLES = {"Admin"}


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: object = None


@dataclass
class GrafanaState:
    tokens: dict[str, str]  # token -> role (Admin, Editor, Viewer)
    datasources: dict[str, dict] = field(default_factory=dict)  # uid -> stored model
    secrets: dict[str, dict] = field(default_factory=dict)  # uid -> secureJsonData
    dashboards: dict[str, dict] = field(default_factory=dict)  # uid -> {"dashboard", "version"}
    requests: list[Request] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    next_id: int = 1


class ApiError(Exception):
    def __init__(self, status: int, body: dict, violation: str | None = None):
        super().__init__(body.get("message", ""))
        self.status, self.body, self.violation = status, body, violation


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def _check_datasource(body: object, where: str) -> dict:
    if not isinstance(body, dict):
        raise ApiError(400, {"message": "bad request data"}, f"{where}: body is not an object")
    unknown = set(body) - DATASOURCE_KEYS
    if unknown:
        raise ApiError(400, {"message": "bad request data"},
                       f"{where}: undocumented keys {sorted(unknown)}")
    missing = DATASOURCE_REQUIRED - set(body)
    if missing:
        raise ApiError(400, {"message": "bad request data"}, f"{where}: missing {sorted(missing)}")
    for key, kind in DATASOURCE_TYPES.items():
        if key in body and not isinstance(body[key], kind):
            raise ApiError(400, {"message": "bad request data"},
                           f"{where}: {key} is {type(body[key]).__name__}, not {kind.__name__}")
    if body["access"] not in ("proxy", "direct"):
        raise ApiError(400, {"message": "bad request data"}, f"{where}: access {body['access']}")
    if not all(isinstance(v, str) for v in body.get("secureJsonData", {}).values()):
        raise ApiError(400, {"message": "bad request data"}, f"{where}: secureJsonData not strings")
    return body


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # quiet
        pass

    def _reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _handle(self, method: str) -> None:
        state = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = urllib.parse.urlsplit(self.path).path
        request = Request(method, path, dict(self.headers.items()))
        sub_path = self.server.sub_path
        with self.server.lock:
            state.requests.append(request)
            try:
                if raw:
                    if not self.headers.get("Content-Type", "").startswith("application/json"):
                        raise ApiError(400, {"message": "bad request data"},
                                       f"{method} {path}: body without Content-Type JSON")
                    try:
                        request.body = json.loads(raw)
                    except ValueError:
                        raise ApiError(400, {"message": "bad request data"},
                                       f"{method} {path}: body is not JSON") from None
                if not path.startswith(sub_path + "/"):
                    raise ApiError(404, {"message": "Not found"},
                                   f"{method} {path}: outside Grafana's sub path {sub_path}")
                status, body = self.server.api.route(method, path[len(sub_path):], request)
            except ApiError as exc:
                if exc.violation:
                    state.violations.append(exc.violation)
                status, body = exc.status, exc.body
        self._reply(status, body)

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_DELETE(self) -> None:
        self._handle("DELETE")


class _Api:
    """The routes; each returns (status, body) or raises ApiError."""

    def __init__(self, state: GrafanaState, sub_path: str):
        self.state = state
        self.sub_path = sub_path
        self.routes = [  # method, path, handler, needs a token, writes
            ("GET", r"^/api/health$", self.health, False, False),
            ("GET", r"^/api/datasources/name/(?P<name>[^/]+)$", self.ds_by_name, True, False),
            ("POST", r"^/api/datasources$", self.ds_create, True, True),
            ("PUT", r"^/api/datasources/uid/(?P<uid>[^/]+)$", self.ds_update, True, True),
            ("POST", r"^/api/dashboards/db$", self.dashboard_save, True, True),
        ]

    def route(self, method: str, path: str, request: Request) -> tuple[int, dict]:
        known_path = False
        for verb, pattern, handler, auth, writes in self.routes:
            match = re.match(pattern, path)
            if not match:
                continue
            known_path = True
            if verb != method:
                continue
            if auth:
                self._authorize(request, writes, f"{method} {path}")
            if method in ("POST", "PUT") and not isinstance(request.body, dict):
                raise ApiError(400, {"message": "bad request data"},
                               f"{method} {path}: no JSON object body")
            args = {k: urllib.parse.unquote(v) for k, v in match.groupdict().items()}
            return handler(request, **args)
        if known_path:
            raise ApiError(405, {"message": "Method Not Allowed"}, f"{method} {path}: method")
        raise ApiError(404, {"message": "Not found"}, f"{method} {path}: not a Grafana API path "
                       "nsb should use")

    def _authorize(self, request: Request, writes: bool, where: str) -> None:
        header = next((v for k, v in request.headers.items() if k.lower() == "authorization"), "")
        if not header:
            raise ApiError(401, {"message": "Unauthorized"})
        scheme, _, token = header.partition(" ")
        if scheme != "Bearer":
            raise ApiError(401, {"message": "Unauthorized"},
                           f"{where}: Authorization scheme {scheme!r}, not Bearer")
        role = self.state.tokens.get(token)
        if role is None:
            raise ApiError(401, {"message": "Invalid API key", "messageId": "api-keys.invalid-key",
                                 "statusCode": 401, "traceID": ""})
        if writes and role not in WRITE_ROLES:
            raise ApiError(403, {"title": "Access denied", "message": "You'll need additional "
                                 "permissions to perform this action."})

    def health(self, request: Request) -> tuple[int, dict]:
        return 200, {"commit": COMMIT, "database": "ok", "version": VERSION}

    def _view(self, uid: str) -> dict:
        stored = dict(self.state.datasources[uid])
        stored["secureJsonFields"] = {key: True for key in self.state.secrets.get(uid, {})}
        return stored

    def ds_by_name(self, request: Request, name: str) -> tuple[int, dict]:
        for uid, stored in self.state.datasources.items():
            if stored["name"] == name:
                return 200, self._view(uid)
        raise ApiError(404, {"message": "Data source not found"})

    def _store(self, uid: str, body: dict, ds_id: int, version: int) -> None:
        stored = {"id": ds_id, "uid": uid, "orgId": 1, "name": body["name"],
                  "type": body["type"], "typeLogoUrl": "", "access": body["access"],
                  "url": body.get("url", ""), "user": body.get("user", ""),
                  "database": body.get("database", ""), "basicAuth": body.get("basicAuth", False),
                  "basicAuthUser": body.get("basicAuthUser", ""),
                  "withCredentials": body.get("withCredentials", False),
                  "isDefault": body.get("isDefault", False), "jsonData": body.get("jsonData", {}),
                  "version": version, "readOnly": body.get("readOnly", False)}
        self.state.datasources[uid] = stored
        self.state.secrets.setdefault(uid, {}).update(body.get("secureJsonData", {}))

    def ds_create(self, request: Request) -> tuple[int, dict]:
        body = _check_datasource(request.body, "POST /api/datasources")
        if any(s["name"] == body["name"] for s in self.state.datasources.values()):
            raise ApiError(409, {"message": "data source with the same name already exists"},
                           f"POST /api/datasources: '{body['name']}' exists; update it instead")
        uid = body.get("uid") or f"ds{self.state.next_id:012d}"
        if uid in self.state.datasources:
            raise ApiError(409, {"message": "data source with the same uid already exists"})
        ds_id, self.state.next_id = self.state.next_id, self.state.next_id + 1
        self._store(uid, body, ds_id, 1)
        return 200, {"datasource": self._view(uid), "id": ds_id, "message": "Datasource added",
                     "name": body["name"]}

    def ds_update(self, request: Request, uid: str) -> tuple[int, dict]:
        body = _check_datasource(request.body, f"PUT /api/datasources/uid/{uid}")
        if uid not in self.state.datasources:
            raise ApiError(404, {"message": "Data source not found"})
        if any(s["name"] == body["name"] and u != uid for u, s in self.state.datasources.items()):
            raise ApiError(409, {"message": "data source with the same name already exists"})
        if body.get("uid", uid) != uid:
            self.state.violations.append(f"PUT /api/datasources/uid/{uid}: body renames the uid")
        stored = self.state.datasources[uid]
        self._store(uid, body, stored["id"], stored["version"] + 1)
        return 200, {"datasource": self._view(uid), "id": stored["id"],
                     "message": "Datasource updated", "name": body["name"]}

    def dashboard_save(self, request: Request) -> tuple[int, dict]:
        body, where = request.body, "POST /api/dashboards/db"
        unknown = set(body) - DASHBOARD_SAVE_KEYS
        if unknown:
            raise ApiError(400, {"message": "bad request data"},
                           f"{where}: undocumented keys {sorted(unknown)}")
        board = body.get("dashboard")
        if not isinstance(board, dict):
            raise ApiError(400, {"message": "bad request data"}, f"{where}: no dashboard object")
        if not isinstance(body.get("overwrite", False), bool):
            raise ApiError(400, {"message": "bad request data"}, f"{where}: overwrite not bool")
        title = board.get("title")
        if not isinstance(title, str) or not title.strip():
            raise ApiError(400, {"message": "Dashboard title cannot be empty"},
                           f"{where}: no title")
        uid = board.get("uid")
        if not isinstance(uid, str) or not UID_RE.match(uid):
            raise ApiError(400, {"message": "uid contains illegal characters"},
                           f"{where}: uid {uid!r} (nsb dashboards keep a stable uid)")
        if not isinstance(board.get("schemaVersion"), int) or not isinstance(
                board.get("panels"), list):
            raise ApiError(400, {"message": "bad request data"},
                           f"{where}: no schemaVersion or panels")
        self.state.violations.extend(_annotation_violations(board, where))
        if board.get("id") is not None:
            self.state.violations.append(f"{where}: dashboard id {board['id']} sent; nsb "
                                         "identifies dashboards by uid")
        for other_uid, saved in self.state.dashboards.items():
            if other_uid != uid and saved["dashboard"]["title"] == title:
                raise ApiError(412, {"message": "A dashboard with the same name in the folder "
                                     "already exists", "status": "name-exists"})
        existing = self.state.dashboards.get(uid)
        if existing and not body.get("overwrite", False):
            raise ApiError(412, {"message": "A dashboard with the same uid already exists",
                                 "status": "name-exists"})
        if existing:
            version, dash_id = existing["version"] + 1, existing["id"]
        else:
            version, dash_id = 1, self.state.next_id
            self.state.next_id += 1
        self.state.dashboards[uid] = {"dashboard": board, "version": version, "id": dash_id,
                                      "folderUid": body.get("folderUid", "")}
        slug = _slug(title)
        return 200, {"id": dash_id, "uid": uid, "url": f"{self.sub_path}/d/{uid}/{slug}",
                     "status": "success", "version": version, "slug": slug}


ANNOTATION_TYPES = {"name": str, "enable": bool, "iconColor": str, "datasource": dict}
INFLUX_ANNOTATION_TYPES = {"query": str, "rawQuery": bool, "textColumn": str,
                           "tagsColumn": str, "refId": str}


def _annotation_violations(board: dict, where: str) -> list[str]:
    """Annotation queries as the dashboard JSON model documents them (annotations.list:
    name, datasource, enable, iconColor) and, for an InfluxDB data source, as its
    annotation editor saves an InfluxQL one: the target's raw query with the
    ``$timeFilter`` Grafana's InfluxDB annotation documentation requires. Whether
    Grafana then draws the marks where they belong is not shown here."""
    found = []
    for index, anno in enumerate((board.get("annotations") or {}).get("list") or []):
        at = f"{where}: annotations.list[{index}]"
        found += [f"{at}.{key}: not a {kind.__name__}" for key, kind in ANNOTATION_TYPES.items()
                  if not isinstance(anno.get(key), kind)]
        if (anno.get("datasource") or {}).get("type") != "influxdb":
            continue
        target = anno.get("target")
        if not isinstance(target, dict):
            found.append(f"{at}: an InfluxDB annotation without a target")
            continue
        found += [f"{at}.target.{key}: not a {kind.__name__}"
                  for key, kind in INFLUX_ANNOTATION_TYPES.items()
                  if not isinstance(target.get(key), kind)]
        if "$timeFilter" not in str(target.get("query")):
            found.append(f"{at}.target.query: no $timeFilter")
    return found


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: GrafanaState, sub_path: str):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state
        self.sub_path = sub_path
        self.api = _Api(state, sub_path)
        self.lock = threading.Lock()


class GrafanaApiDouble:
    """``with GrafanaApiDouble({"token": "Admin"}) as grafana: ... grafana.url``."""

    def __init__(self, tokens: dict[str, str], sub_path: str = ""):
        self.state = GrafanaState(tokens=dict(tokens))
        self.sub_path = sub_path.rstrip("/")
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{self.sub_path}"

    @property
    def requests(self) -> list[Request]:
        return self.state.requests

    @property
    def violations(self) -> list[str]:
        return self.state.violations

    def __enter__(self) -> GrafanaApiDouble:
        self._server = _Server(self.state, self.sub_path)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        name="grafana-double", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
