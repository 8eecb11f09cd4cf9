"""`nsb ansible install`: the tools of ../shared/tools, packed as release archives
(tests/tool_archives.py), installed by ansible/nsb_tools.yml onto a pod's nodes.

The pod is a real sshd in a network namespace (tests/functional/sshd_node.py) named
twice, as its traffic generator tg_0 and its SUT sut_0. The namespace shares this
machine's filesystem, so the roles write under a scratch root (--root, the roles'
nsb_root): TRex goes to the generator, the SampleVNFs to the SUT, laid out as NSB
lays them out, and the files are compared with the ones packed.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import subprocess
import threading
from pathlib import Path

import pytest
import yaml

from tests.conftest import NSB, TREX_PATH
from tests.functional.test_ansible import ansible_env
from tests.tool_archives import BPF, BPF_BUILT, TOOLS, pack

DIST = "/opt/nsb_bin/dist"


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    where = tmp_path_factory.mktemp("archives")
    return {tool: pack(tool, where) for tool in ("trex", "samplevnf")}


def pod(tmp_path: Path, node, extra: list | None = None) -> Path:
    nodes = [{"name": name, "role": role, "ip": node.host, "user": "root",
              "key_filename": node.key_filename, "interfaces": {}}
             for name, role in (("tg_0", "TrafficGen"), ("sut_0", "VNF"))]
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump({"nodes": nodes + (extra or [])}))
    return path


def archives_file(tmp_path: Path, archives: dict, **changes) -> Path:
    doc = {tool: {"archive": str(a.path), "version": a.version, "sha256": a.sha256}
           for tool, a in archives.items()}
    for tool, change in changes.items():
        doc[tool].update(change)
    path = tmp_path / "archives.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def install(tmp_path: Path, pod_file: Path, archives_yaml: Path, root: Path, *more):
    return subprocess.run(NSB + ["ansible", "install", str(pod_file), "--archives",
                                 str(archives_yaml), "--root", str(root), *more],
                          capture_output=True, text=True, env=ansible_env(tmp_path),
                          cwd=tmp_path, timeout=900)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def lines(run) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in run.stdout.splitlines())


def test_trex_and_the_samplevnfs_go_where_nsb_looks_and_a_second_run_changes_nothing(
        node, archives, tmp_path):
    root = tmp_path / "root"
    pod_file, wanted = pod(tmp_path, node), archives_file(tmp_path, archives)
    first = install(tmp_path, pod_file, wanted, root)
    assert first.returncode == 0, first.stdout + first.stderr
    trex, vnfs = archives["trex"], archives["samplevnf"]
    said = lines(first)
    assert said["tg_0"].startswith("ok, ") and (
        f"trex v3.08 (sha256 {trex.sha256[:12]}): /opt/nsb_bin/trex/scripts, "
        "/opt/nsb_bin/trex_client") in said["tg_0"], first.stdout
    assert f"samplevnf c97164903fc7 (sha256 {vnfs.sha256[:12]}): /opt/nsb_bin/vFW, " \
        "/opt/nsb_bin/vACL, /opt/nsb_bin/vCGNAPT, /opt/nsb_bin/UDP_Replay" in said["sut_0"]

    bin_dir = root / "opt" / "nsb_bin"
    trex_dir = f"{DIST}/trex-v3.08-{trex.sha256[:12]}"
    trex_rel = f"dist/trex-v3.08-{trex.sha256[:12]}"
    assert (bin_dir / "trex" / "scripts").readlink() == Path("..") / trex_rel  # relative
    assert (bin_dir / "trex_client").readlink() == Path(trex_rel) / \
        "automation/trex_control_plane"
    assert (bin_dir / "trex" / "scripts" / "t-rex-64").is_file()  # resolves in the tree
    unpacked = root / trex_dir.lstrip("/")
    for name in ("_t-rex-64", "t-rex-64", "automation/trex_control_plane/interactive/"
                 "trex/stl/api.py"):
        assert sha256(unpacked / name) == sha256(TREX_PATH / name), name
    assert sha256(unpacked / BPF) == sha256(BPF_BUILT)
    vnf_dir = root / f"{DIST}/samplevnf-c97164903fc7-{vnfs.sha256[:12]}".lstrip("/")
    for name in ("vFW", "vACL", "vCGNAPT", "UDP_Replay"):
        assert (bin_dir / name).resolve() == (vnf_dir / name).resolve()
        assert sha256(vnf_dir / name) == sha256(TOOLS / "samplevnf" / name)
    record = json.loads((bin_dir / ".nsb-tools" / "trex.json").read_text())
    assert record == {"tool": "trex", "version": "v3.08", "sha256": trex.sha256,
                      "archive": trex.path.name, "dir": trex_dir,
                      "paths": ["/opt/nsb_bin/trex/scripts", "/opt/nsb_bin/trex_client"]}
    assert not (bin_dir / ".nsb-tools" / "prox.json").exists()  # no PROX archive given
    assert_node_check_finds_them(bin_dir, node, tmp_path)

    second = install(tmp_path, pod_file, wanted, root)
    assert second.returncode == 0, second.stdout + second.stderr
    assert [v.split(":")[0] for v in lines(second).values()] == ["ok, 0 change(s)"] * 2

    fresh = tmp_path / "fresh"
    checked = install(tmp_path, pod_file, wanted, fresh, "--check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert all(int(v.split(", ")[1].split()[0]) > 0 for v in lines(checked).values())
    assert not fresh.exists() or not any(fresh.rglob("*"))  # check mode wrote nothing


def test_a_wrong_checksum_a_missing_archive_and_an_unreachable_node_are_a_line_each(
        node, archives, tmp_path):
    root = tmp_path / "root"
    closed = {"name": "gone_0", "role": "VNF", "ip": "127.0.0.1", "ssh_port": 9,
              "user": "root", "key_filename": node.key_filename, "interfaces": {}}
    wrong = "0" * 64
    bad = archives_file(tmp_path, archives, trex={"sha256": wrong},
                        samplevnf={"archive": str(tmp_path / "nowhere.tar.gz")})
    run = install(tmp_path, pod(tmp_path, node, [closed]), bad, root)
    assert run.returncode == 3, run.stdout + run.stderr
    said = lines(run)
    assert list(said) == ["tg_0", "sut_0", "gone_0"] and len(run.stdout.splitlines()) == 3
    assert said["tg_0"].startswith("FAILED: tool_archive: ") and \
        f"sha256 is {archives['trex'].sha256}, expected {wrong}" in said["tg_0"]
    assert said["sut_0"].endswith(f"archive {tmp_path / 'nowhere.tar.gz'}: no such file on "
                                  "the controller")
    assert said["gone_0"].startswith("UNREACHABLE: ")
    assert not (root / "opt").exists()  # nothing unpacked from a wrong archive


def test_a_bad_archives_file_is_one_located_line(node, tmp_path):
    bad = tmp_path / "archives.yaml"
    bad.write_text("trex: {archive: x.tgz, version: v3.08, sha256: abc}\n")
    run = install(tmp_path, pod(tmp_path, node), bad, tmp_path / "root")
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
    assert f"{bad}:1: trex.sha256: 'abc' is not 64 hex digits" in run.stderr



def assert_node_check_finds_them(bin_dir: Path, node, tmp_path: Path) -> None:
    """On the tree the roles installed, the node check's own shell finds TRex and the
    SampleVNFs with their versions; on the node as it is (no /opt/nsb_bin), `nsb node
    check` names the role that installs each missing tool."""
    from nsb.nodes import tool_check

    shell = subprocess.run(["sh", "-c", tool_check.script(str(bin_dir))],
                           capture_output=True, text=True, check=True)
    can, cannot = tool_check.summary("tg_0", *tool_check.what_runs(shell.stdout))
    assert can.startswith("tg_0: can run: trex (v3.08), vfw (c97164903fc7), "
                          "vacl (c97164903fc7), vcgnapt (c97164903fc7), "
                          "udp_replay (c97164903fc7)"), can
    assert "prox (no " in cannot and "the install_prox role installs it" in cannot

    check = subprocess.run(NSB + ["node", "check", str(pod(tmp_path, node))],
                           capture_output=True, text=True, timeout=300)
    said = [line for line in check.stdout.splitlines()
            if ": can run: " in line or ": cannot run: " in line]
    assert len(said) == 4, check.stdout + check.stderr  # two lines per node
    assert "testpmd" in said[0] and "trafgen" in said[0]  # Debian's, on this machine
    assert "trex (no /opt/nsb_bin/trex/scripts/t-rex-64; the install_trex role installs " \
        "it (nsb ansible install POD --archives FILE))" in said[1]


def test_an_archive_fetched_by_url_with_a_wrong_checksum_leaves_nothing_behind(
        node, archives, tmp_path):
    """The node fetches the archive itself (get_url and its checksum); when that fails,
    the tool's directory the role made for it is removed again, and the line is
    get_url's."""
    vnfs = archives["samplevnf"]
    handler = functools.partial(http.server.SimpleHTTPRequestHandler,
                                directory=str(vnfs.path.parent))
    with http.server.ThreadingHTTPServer((node.gateway, 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://{node.gateway}:{server.server_port}/{vnfs.path.name}"
        wanted = tmp_path / "archives.yaml"
        wanted.write_text(yaml.safe_dump({"samplevnf": {
            "archive": url, "version": vnfs.version, "sha256": "1" * 64}}))
        root = tmp_path / "root"
        run = install(tmp_path, pod(tmp_path, node), wanted, root)
        server.shutdown()
    assert run.returncode == 3, run.stdout + run.stderr
    said = lines(run)
    assert said["tg_0"].startswith("ok, ")  # a generator gets no SampleVNF
    assert said["sut_0"].startswith("FAILED: tool_archive: Fetch the archive on the node") \
        and "checksum" in said["sut_0"], said["sut_0"]
    dist = root / DIST.lstrip("/")
    assert not dist.exists() or not any(dist.iterdir()), list(dist.iterdir())
