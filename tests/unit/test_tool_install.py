"""nsb ansible install's pieces without ansible: the archives file, the per-node
lines from recorded task results, and what a node can run from the check's output."""

from __future__ import annotations

import pytest

from nsb.errors import TaskError
from nsb.nodes import ansible_run, tool_archives, tool_check

SHA = "a" * 64


def test_the_archives_file_becomes_the_roles_variables(tmp_path):
    path = tmp_path / "archives.yaml"
    path.write_text(f"trex: {{archive: v3.08.tar.gz, version: v3.08, sha256: {SHA}}}\n"
                    f"prox: {{archive: 'https://lab/prox.tgz', version: '1', sha256: {SHA}}}\n")
    variables = tool_archives.role_variables(tool_archives.load(path))
    assert variables == {"nsb_trex_archive": str(tmp_path / "v3.08.tar.gz"),
                         "nsb_trex_version": "v3.08", "nsb_trex_sha256": SHA,
                         "nsb_prox_archive": "https://lab/prox.tgz", "nsb_prox_version": "1",
                         "nsb_prox_sha256": SHA}


@pytest.mark.parametrize("text, where", [
    (f"pktgen: {{archive: a, version: b, sha256: {SHA}}}\n", ":1: pktgen: unknown tool"),
    ("trex: {archive: a, version: b}\n", ":1: trex: give exactly archive, version, sha256"),
    ("samplevnf:\n  archive: a\n  version: b\n  sha256: xyz\n",
     ":4: samplevnf.sha256: 'xyz' is not 64 hex digits"),
    ("[]\n", "a mapping of tools"),
])
def test_a_bad_archives_file_is_one_located_line(tmp_path, text, where):
    path = tmp_path / "archives.yaml"
    path.write_text(text)
    with pytest.raises(TaskError) as error:
        tool_archives.load(path)
    assert where in str(error.value) and "\n" not in str(error.value)


def test_each_node_is_one_line_of_what_stopped_it_or_what_it_got():
    records = [
        {"status": "ok", "host": "tg_0", "task": "Unpack it", "role": "tool_archive",
         "changed": True, "msg": ""},
        {"status": "ok", "host": "tg_0", "task": ansible_run.GOT_TASK, "role": "tool_archive",
         "changed": False, "msg": "trex v3.08 (sha256 aaaaaaaaaaaa):\n /opt/nsb_bin/trex/scripts"},
        {"status": "failed", "host": "sut_0", "task": "Check the archive", "role": "tool_archive",
         "changed": False, "msg": "samplevnf archive x: no such file on the controller"},
        {"status": "unreachable", "host": "gone_0", "task": "Reach the node", "role": None,
         "changed": False, "msg": "Failed to connect to the host via ssh"},
    ]
    lines = [o.line() for o in ansible_run.outcomes_of(["tg_0", "sut_0", "gone_0", "idle_0"],
                                                        records)]
    assert lines == [
        "tg_0: ok, 1 change(s): trex v3.08 (sha256 aaaaaaaaaaaa): /opt/nsb_bin/trex/scripts",
        "sut_0: FAILED: tool_archive: Check the archive: samplevnf archive x: no such file on "
        "the controller",
        "gone_0: UNREACHABLE: Failed to connect to the host via ssh",
        "idle_0: ok, 0 change(s): nothing to install"]


def test_what_a_node_can_run_names_the_version_and_the_role_for_the_rest():
    output = ("found trex /opt/nsb_bin/trex/scripts/t-rex-64\nfound testpmd /usr/bin/dpdk-testpmd\n"
              'record {"tool": "trex", "version": "v3.08"}\nrecord not json\n')
    can, cannot = tool_check.summary("tg_0", *tool_check.what_runs(output))
    assert can == "tg_0: can run: trex (v3.08), testpmd"
    assert "vfw (no /opt/nsb_bin/vFW; the install_samplevnf role installs it" in cannot
    assert "trafgen (no trafgen; apt-get install netsniff-ng)" in cannot
    assert "trex" not in cannot.split("cannot run: ")[1].split(" (")[0]
