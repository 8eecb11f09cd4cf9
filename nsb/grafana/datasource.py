"""The InfluxDB data source the dashboards query, for the HTTP API and for provisioning.

The data source speaks InfluxQL, which every InfluxDB nsb writes to answers:
1.x with its database (and optionally user and password), 2.x and 3.x with the
bucket as database and an ``Authorization: Token ...`` header.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nsb.errors import NsbError

DATASOURCE_TYPE = "influxdb"  # the id of Grafana's InfluxDB data source plugin
DEFAULT_NAME = "nsb-influxdb"
DEFAULT_UID = "nsb-influxdb"
DEFAULT_URL = "http://localhost:8086"
DEFAULT_DATABASE = "nsb"
# what Grafana reads the secrets from in exported provisioning files
# (the names the influxdb output reads them from too)
TOKEN_ENV = "NSB_INFLUXDB_TOKEN"
PASSWORD_ENV = "NSB_INFLUXDB_PASSWORD"


@dataclass(frozen=True)
class InfluxDataSource:
    """Where the nsb points are: InfluxDB 1.x ``database``, or 2.x/3.x ``bucket`` + ``token``."""

    url: str = DEFAULT_URL
    database: str | None = None
    bucket: str | None = None
    token: str | None = field(default=None, repr=False)
    username: str | None = None  # 1.x, as the influxdb output's settings name it
    password: str | None = field(default=None, repr=False)
    name: str = DEFAULT_NAME
    uid: str = DEFAULT_UID

    def __post_init__(self) -> None:
        if self.database and self.bucket:
            raise NsbError("give the InfluxDB 1.x database or the 2.x/3.x bucket, not both")
        if not self.url.startswith(("http://", "https://")):
            raise NsbError(f"InfluxDB URL must start with http:// or https://: {self.url}")

    @property
    def v2(self) -> bool:
        """A bucket (InfluxDB 2.x/3.x), queried with InfluxQL through a token header."""
        return self.bucket is not None

    @property
    def database_name(self) -> str:
        """InfluxQL's database: the 1.x database, or the bucket (``db/rp`` gives ``db``)."""
        if self.bucket:
            return self.bucket.split("/")[0]
        return self.database or DEFAULT_DATABASE

    def _json_data(self, token_header: bool) -> dict:
        data = {"version": "InfluxQL", "dbName": self.database_name, "httpMode": "GET"}
        if token_header:
            data["httpHeaderName1"] = "Authorization"
        return data

    def _common(self, token_header: bool) -> dict:
        model = {"name": self.name, "uid": self.uid, "type": DATASOURCE_TYPE, "access": "proxy",
                 "url": self.url, "database": self.database_name,
                 "jsonData": self._json_data(token_header)}
        if self.username and not self.v2:
            model["user"] = self.username
        return model

    def api_model(self) -> dict:
        """The body of POST /api/datasources and PUT /api/datasources/uid/:uid.

        Secrets go to ``secureJsonData`` (Grafana encrypts them); without them an
        update keeps the secrets Grafana already has.
        """
        token_header = self.v2 and bool(self.token)  # InfluxDB 1.8 may run without auth
        model = {**self._common(token_header), "basicAuth": False, "isDefault": False,
                 "readOnly": False}
        secure = {}
        if token_header:
            secure["httpHeaderValue1"] = f"Token {self.token}"
        if not self.v2 and self.password:
            secure["password"] = self.password
        if secure:
            model["secureJsonData"] = secure
        return model

    def provisioning_model(self) -> dict:
        """One entry of a provisioning file; secrets are read from Grafana's environment."""
        model = {**self._common(token_header=self.v2), "editable": True}
        if self.v2:
            model["secureJsonData"] = {"httpHeaderValue1": f"Token ${{{TOKEN_ENV}}}"}
        elif self.username:
            model["secureJsonData"] = {"password": f"${{{PASSWORD_ENV}}}"}
        return model
