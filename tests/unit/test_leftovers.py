"""The run registry: a live run is never touched, a gone one is cleaned and marked."""

import json

from nsb import leftovers


def test_a_live_run_is_left_alone_and_a_gone_one_is_marked_killed(tmp_path, monkeypatch):
    monkeypatch.setattr(leftovers, "STATE_DIR", tmp_path / "runs")
    results = tmp_path / "results" / "261122-000000-abcdef"
    results.mkdir(parents=True)
    (results / "results.json").write_text(json.dumps({"task": {"status": "running"}}))
    with leftovers.registered("261122-000000-abcdef", results, "tc.yaml"):
        entry = tmp_path / "runs" / "261122-000000-abcdef.json"
        assert json.loads(entry.read_text())["results_dir"] == str(results)
        assert leftovers.clean_killed_runs() == []  # its lock is held: alive
        assert entry.exists()
    assert not entry.exists()  # a run that ends takes its entry with it
    # a run killed with SIGKILL leaves its entry, unlocked
    entry.write_text(json.dumps({"task_id": "261122-000000-abcdef",
                                 "results_dir": str(results)}))
    (removed,) = leftovers.clean_killed_runs()
    assert removed.task_id == "261122-000000-abcdef" and not entry.exists()
    doc = json.loads((results / "results.json").read_text())
    assert doc["task"]["status"] == "killed" and "killed" in doc["task"]["error"]


def test_summary_counts_what_was_removed():
    removed = leftovers.Removed("x", ["process 1", "process 2", "namespace nsb-x-tg",
                                      "path /tmp/nsb-x"])
    assert removed.summary() == "2 processes, 1 namespace, 1 path"
    removed.hugepages = 256
    assert removed.summary() == "2 processes, 1 namespace, 1 path, 256 hugepages given back"


def test_the_pages_a_run_adds_are_noted_until_it_gives_them_back(tmp_path, monkeypatch):
    monkeypatch.setattr(leftovers, "STATE_DIR", tmp_path / "runs")
    ledger = tmp_path / "runs" / "261122-000000-abcdef.hugepages"
    leftovers.note_hugepages("261122-000000-abcdef", 128)  # OVS-DPDK
    leftovers.note_hugepages("261122-000000-abcdef", 264)  # testpmd on vhost-user
    assert ledger.read_text() == "392"
    leftovers.note_hugepages("261122-000000-abcdef", -264)
    assert ledger.read_text() == "128"
    leftovers.note_hugepages("261122-000000-abcdef", -128)
    assert not ledger.exists()  # nothing to give back: no file left either


def test_pages_of_a_remote_node_are_not_noted_in_this_machines_registry(tmp_path,
                                                                          monkeypatch):
    """This machine's registry repairs this machine's pool; a remote node's pages are
    written in that node's ledger (tests/unit/test_nic_binding.py)."""
    from nsb.executors.local import LocalExecutor
    from nsb.nodes import node_ledger
    from nsb.vnfs import hugepages

    monkeypatch.setattr(leftovers, "STATE_DIR", tmp_path / "runs")
    written = []
    monkeypatch.setattr(node_ledger, "read_all", lambda executor: [])
    monkeypatch.setattr(node_ledger, "write", lambda executor, record: written.append(record))
    hugepages._note(object(), "261122-000000-abcdef", 64)
    assert not (tmp_path / "runs").exists()
    assert [(r.kind, r.value) for r in written] == [("hugepages", "64")]
    hugepages._note(LocalExecutor(), "261122-000000-abcdef", 64)
    assert (tmp_path / "runs" / "261122-000000-abcdef.hugepages").read_text() == "64"
