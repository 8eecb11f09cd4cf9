"""The tools of ../shared/tools packed the way users receive them: one .tar.gz per
tool with one top directory (TRex's release tarballs unpack to ``v3.08/``), and the
sha256 a release page would print beside it. The ansible roles install these."""

from __future__ import annotations

import hashlib
import tarfile
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import ROOT, TREX_PATH

TOOLS = ROOT.parent / "shared" / "tools"
BPF = "so/x86_64/libbpf-64.so"
BPF_BUILT = Path("/usr/local/lib/libbpf-64.so")


@dataclass(frozen=True)
class Archive:
    tool: str
    version: str
    path: Path
    sha256: str

    def variables(self) -> dict[str, str]:
        """The role's variables for it (nsb_<tool>_archive, _version, _sha256)."""
        return {f"nsb_{self.tool}_archive": str(self.path),
                f"nsb_{self.tool}_version": self.version,
                f"nsb_{self.tool}_sha256": self.sha256}


# tool -> (where it is, its version, the top directory, what goes in (None: all))
LAYOUT = {
    "trex": (TREX_PATH, "v3.08", "v3.08", None),
    "samplevnf": (TOOLS / "samplevnf", "c97164903fc7", "samplevnf-c97164903fc7",
                  ["vFW", "vACL", "vCGNAPT", "UDP_Replay", "README.md", "examples"]),
    "prox": (TOOLS / "prox", "v22.11", "prox-v22.11", ["prox", "README.md"]),
    "dpdk_apps": (TOOLS / "dpdk-apps", "22.11", "dpdk-apps-22.11", ["l3fwd", "l2fwd"]),
}


def _skip_caches(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    return None if "__pycache__" in Path(info.name).parts else info


def pack(tool: str, into: Path) -> Archive:
    """The tool's archive in ``into`` (made once; gzip level 1: tests, not downloads)."""
    source, version, top, members = LAYOUT[tool]
    into.mkdir(parents=True, exist_ok=True)
    path = into / f"{top}.tar.gz"
    if not path.exists():
        partial = path.with_suffix(".part")
        with tarfile.open(partial, "w:gz", compresslevel=1) as tar:
            for name in members or sorted(p.name for p in source.iterdir()):
                tar.add(source / name, arcname=f"{top}/{name}", filter=_skip_caches)
            if tool == "trex" and not (source / BPF).exists():
                # a release has its capture-filter library in so/x86_64; the copy here
                # lacks it and runs with `make trex-runtime`'s build of it on libpcap
                tar.add(BPF_BUILT, arcname=f"{top}/{BPF}")
        partial.rename(path)
    digest = hashlib.sha256()
    with open(path, "rb") as data:
        for block in iter(lambda: data.read(1 << 20), b""):
            digest.update(block)
    return Archive(tool, version, path, digest.hexdigest())
