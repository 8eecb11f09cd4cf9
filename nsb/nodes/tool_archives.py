"""Which archives ``nsb ansible install`` installs: a YAML file naming, per tool, the
archive (a file on this machine or a URL the nodes reach), its version and sha256.

    trex: {archive: /srv/v3.08.tar.gz, version: v3.08, sha256: 4f0c...}
    samplevnf: {archive: https://lab/samplevnf.tar.gz, version: c97164903fc7, sha256: ...}

The roles (ansible/roles/install_<tool>) read them as nsb_<tool>_archive, _version
and _sha256; a mistake here is one located line before ansible starts.
"""

from __future__ import annotations

import re
from pathlib import Path

from nsb.nodes.tool_roles import ROLES

KEYS = ("archive", "version", "sha256")
_SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")
_URL = re.compile(r"^(https?|ftp)://")


def load(path: Path) -> dict[str, dict[str, str]]:
    """The archives file, checked; relative archive paths are taken from its folder."""
    from nsb.task import input_file, yaml_lines

    doc = yaml_lines.parse(input_file.read_text(path, str(path)), str(path))
    data = doc.data
    if not isinstance(data, dict) or not data:
        raise doc.error((), f"a mapping of tools ({', '.join(ROLES)}) to their archive, "
                            "version and sha256 is expected")
    found = {}
    for tool, entry in data.items():
        if tool not in ROLES:
            raise doc.error((tool,), f"unknown tool (allowed: {', '.join(ROLES)})")
        if not isinstance(entry, dict) or set(entry) != set(KEYS):
            raise doc.error((tool,), f"give exactly {', '.join(KEYS)}")
        values = {key: str(entry[key]) for key in KEYS}
        if not _SHA256.match(values["sha256"]):
            raise doc.error((tool, "sha256"), f"'{values['sha256']}' is not 64 hex digits")
        if not _URL.match(values["archive"]):
            values["archive"] = str((path.parent / values["archive"]).resolve())
        found[tool] = values
    return found


def role_variables(archives: dict[str, dict[str, str]]) -> dict[str, str]:
    """The roles' variables: nsb_<tool>_archive, nsb_<tool>_version, nsb_<tool>_sha256."""
    return {f"nsb_{tool}_{key}": value for tool, entry in archives.items()
            for key, value in entry.items()}
