"""``export``: Grafana provisioning files instead of API calls.

Layout written under DIR, ready to be Grafana's provisioning directory
(``/etc/grafana/provisioning`` or ``[paths] provisioning``)::

    DIR/datasources/nsb.yaml      the InfluxDB data source (apiVersion 1)
    DIR/dashboards/nsb.yaml       a file provider reading DIR/dashboards/json
    DIR/dashboards/json/*.json    one JSON model per dashboard

Secrets are not written: the data source reads them from Grafana's environment
(NSB_INFLUX_TOKEN, NSB_INFLUX_PASSWORD).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path, PurePosixPath

import yaml

from nsb.errors import NsbError
from nsb.grafana.dashboards import Measures, dashboards
from nsb.grafana.datasource import InfluxDataSource
from nsb.task import input_file

LOG = logging.getLogger(__name__)
PROVIDER = "nsb"
FILE_NAME = "nsb.yaml"


def datasources_file(influx: InfluxDataSource) -> dict:
    return {"apiVersion": 1, "datasources": [influx.provisioning_model()]}


def dashboards_file(json_dir: str, folder: str = "nsb") -> dict:
    return {"apiVersion": 1, "providers": [{
        "name": PROVIDER, "orgId": 1, "folder": folder, "type": "file",
        "disableDeletion": False, "allowUiUpdates": False, "updateIntervalSeconds": 30,
        "options": {"path": json_dir, "foldersFromFilesStructure": False}}]}


def export(directory: str | Path, data_source: InfluxDataSource, *,
           grafana_path: str | None = None, measures: Measures | None = None) -> list[Path]:
    """Write the provisioning files; returns the paths written.

    ``grafana_path`` is where Grafana will see ``directory`` (e.g.
    ``/etc/grafana/provisioning`` when it is mounted into a container); the dashboard
    provider's path is written relative to it. Default: ``directory`` itself.
    """
    root = Path(directory)
    seen = PurePosixPath(grafana_path) if grafana_path else input_file.absolute(root)
    if not seen.is_absolute():
        raise NsbError(f"--grafana-path must be absolute (where Grafana sees {root}): {seen}")
    json_dir = root / "dashboards" / "json"
    input_file.make_dir(json_dir)
    input_file.make_dir(root / "datasources")
    written = []

    def write(path: Path, text: str) -> None:
        input_file.write_text(path, text)
        written.append(path)

    yaml_text = yaml.safe_dump(datasources_file(data_source), sort_keys=False)
    write(root / "datasources" / FILE_NAME, yaml_text)
    provider = dashboards_file(str(seen / "dashboards" / "json"))
    write(root / "dashboards" / FILE_NAME, yaml.safe_dump(provider, sort_keys=False))
    for board in dashboards(data_source.uid, measures):
        write(json_dir / f"{board['uid']}.json", json.dumps(board, indent=2) + "\n")
    LOG.info("wrote %d Grafana provisioning files under %s", len(written), root)
    return written
