"""The SampleVNFs' hugepages: a 1 GB page when the node can add one, else 2 MB pages,
noted for the next run to give back should this one be killed (this machine's run
registry, a remote node's ledger), and their hugetlbfs in a mount namespace of the
VNF's own."""

from __future__ import annotations

import subprocess

import pytest

from nsb import leftovers
from nsb.errors import PrerequisiteError
from nsb.executors.base import CommandResult
from nsb.executors.local import LocalExecutor
from nsb.nodes import hugepage_pool, node_ledger, node_leftovers
from nsb.vnfs.samplevnf import memory

TASK = "261126-000000-abcdef"


class RemoteLike:
    """Runs commands here as a remote node's executor would (not a LocalExecutor)."""

    name = "vnf_0"

    def run(self, argv, check=True, timeout=None, **_):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        if check and done.returncode:
            raise RuntimeError(done.stderr)
        return CommandResult(argv, done.returncode, done.stdout, done.stderr)


@pytest.fixture
def pools(tmp_path, monkeypatch):
    """Both pools as files; the 1 GB one keeps at most ``limit['1G']`` pages, as a node
    whose memory is too fragmented for more."""
    files = {"2M": tmp_path / "nr_2m", "1G": tmp_path / "nr_1g"}
    for file in files.values():
        file.write_text("0\n")
    monkeypatch.setattr(hugepage_pool, "POOL", str(files["2M"]))
    monkeypatch.setattr(hugepage_pool, "POOL_1G", str(files["1G"]))
    monkeypatch.setattr(leftovers, "STATE_DIR", tmp_path / "runs")
    monkeypatch.setattr(node_ledger, "LEDGER_DIR", str(tmp_path / "ledger"))
    limit = {"1G": 10}
    real_grow = hugepage_pool.grow

    def grow(executor, pages, size="2M"):
        if size == "1G":
            pages = min(pages, limit["1G"] - hugepage_pool.count(executor, "1G"))
        return real_grow(executor, pages, size)

    monkeypatch.setattr(hugepage_pool, "grow", grow)
    return files, limit


def test_a_1g_page_when_the_node_adds_one_noted_and_given_back(pools, tmp_path):
    files, _ = pools
    reserved = memory.reserve(LocalExecutor(), 1000, "vnf__0", TASK)
    assert (reserved.page, reserved.pages) == ("1G", 1)
    assert files["1G"].read_text().strip() == "1"
    assert (tmp_path / "runs" / f"{TASK}.hugepages-1G").read_text() == "1"
    memory.release(LocalExecutor(), reserved, TASK)
    assert files["1G"].read_text().strip() == "0" and reserved.pages == 0
    assert not (tmp_path / "runs" / f"{TASK}.hugepages-1G").exists()


def test_2m_pages_when_no_1g_page_can_be_added(pools):
    files, limit = pools
    limit["1G"] = 0
    reserved = memory.reserve(LocalExecutor(), 1000, "vnf__0", TASK)
    assert (reserved.page, reserved.pages) == ("2M", 500 + 16)
    assert files["1G"].read_text().strip() == "0"  # what it got of a 1 GB page went back
    assert files["2M"].read_text().strip() == "516"
    with pytest.raises(PrerequisiteError, match="could not add 1 1 GB hugepage.*auto takes"):
        memory.reserve(LocalExecutor(), 1000, "vnf__0", TASK, page="1G")


def test_a_killed_runs_1g_pages_go_back_to_their_own_pool(pools):
    files, _ = pools
    executor = LocalExecutor()
    memory.reserve(executor, 2000, "vnf__0", TASK)  # two 1 GB pages
    hugepage_pool.grow(executor, 64)
    leftovers.note_hugepages(TASK, 64)  # and 2 MB pages of another VNF of the run
    assert leftovers._give_back_hugepages(TASK) == 66
    assert [files[s].read_text().strip() for s in ("1G", "2M")] == ["0", "0"]


def test_a_remote_nodes_ledger_keeps_1g_pages_apart(pools):
    files, _ = pools
    executor = RemoteLike()
    memory.reserve(executor, 1000, "vnf__0", TASK)
    (record,) = node_ledger.read_all(executor)
    assert (record.kind, record.key, record.value) == ("hugepages", "1G", "1")
    hugepage_pool.grow(executor, 8)
    done = node_leftovers.give_back(executor, lambda task: False)
    assert done == ["1 hugepages of 1 GB"]
    assert [files[s].read_text().strip() for s in ("1G", "2M")] == ["0", "8"]


def test_the_hugetlbfs_is_the_programs_own():
    prefix = memory.own_mount("/tmp/nsb-t/vnf__0/hugepages", "1G")
    assert prefix[:4] == ["unshare", "--mount", "--propagation", "private"]
    assert prefix[-3:] == ["-c", "mount -t hugetlbfs -o pagesize=1G nodev "
                           "/tmp/nsb-t/vnf__0/hugepages && exec \"$@\"", "sh"]
