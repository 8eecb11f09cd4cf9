"""NICs a run's DPDK programs take: what pre-flight says about each, and the node's
ledger of what a run changed (NIC bindings, hugepages) that the next run gives back
when this one was killed. Real binding is exercised on the hardware-like pod
(tests/functional/test_hw_pod_nsb.py); here the sysfs answers are scripted."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nsb.executors.base import CommandResult
from nsb.nodes import hugepage_pool, nic_binding, node_ledger, node_leftovers
from nsb.nodes.nic_binding import NicState
from nsb.nodes.node import Interface, Node, SshAccess
from nsb.task.pod_file import load_pod


class ShellExecutor:
    """Runs commands on this machine like a remote node's executor would (it is not a
    LocalExecutor: the run registry is not its ledger)."""

    name = "sut"

    def run(self, argv, check=True, timeout=None, **_):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        if check and done.returncode:
            raise RuntimeError(done.stderr)
        return CommandResult(argv, done.returncode, done.stdout, done.stderr)


class ScriptedExecutor:
    name = "sut"

    def __init__(self, stdout):
        self.stdout = stdout
        self.argv = None

    def run(self, argv, **_):
        self.argv = argv
        return CommandResult(argv, 0, self.stdout, "")


@pytest.fixture
def ledger(tmp_path, monkeypatch):
    monkeypatch.setattr(node_ledger, "LEDGER_DIR", str(tmp_path / "ledger"))
    return tmp_path / "ledger"


def node(**iface):
    xe0 = Interface("xe0", pci="0000:05:00.0", **iface)
    return Node("sut", "vnf", {"xe0": xe0}, ssh=SshAccess("10.0.0.5")), xe0


def test_states_of_present_absent_and_kernel_nics_are_read_in_one_command():
    executor = ScriptedExecutor("0000:05:00.0 present vfio-pci - -\n0000:05:00.1 absent\n"
                                "0000:06:00.0 present i40e ens1f0 10.0.0.5/24,\n")
    states = nic_binding.read_states(executor, ["0000:06:00.0", "0000:05:00.0",
                                                "0000:05:00.1"])
    assert states["0000:05:00.0"] == NicState("0000:05:00.0", True, "vfio-pci")
    assert not states["0000:05:00.1"].present
    assert states["0000:06:00.0"].netdev == "ens1f0"
    assert states["0000:06:00.0"].addresses == ("10.0.0.5/24",)
    assert executor.argv[-3:] == ["0000:05:00.0", "0000:05:00.1", "0000:06:00.0"]


def test_a_nic_on_a_dpdk_driver_is_used_as_it_is():
    sut, xe0 = node()
    assert nic_binding.problem(sut, xe0, NicState(xe0.pci, True, "uio_pci_generic")) == ""


def test_a_missing_device_is_one_line_naming_the_pod_key():
    sut, xe0 = node()
    line = nic_binding.problem(sut, xe0, NicState(xe0.pci, False))
    assert "no PCI device 0000:05:00.0 on sut" in line and "vpci" in line


def test_a_kernel_nic_without_permission_says_how_to_bind_or_permit():
    sut, xe0 = node()
    line = nic_binding.problem(sut, xe0, NicState(xe0.pci, True, "i40e", "ens1f0"))
    assert "bound to i40e" in line and "dpdk-devbind.py -b vfio-pci 0000:05:00.0" in line
    assert "dpdk_driver: vfio-pci" in line and "\n" not in line


def test_a_kernel_nic_the_pod_lets_nsb_bind_passes():
    sut, xe0 = node(dpdk_driver="uio_pci_generic")
    assert nic_binding.problem(sut, xe0, NicState(xe0.pci, True, "virtio-pci", "eth1")) == ""


def test_the_nic_nsb_reaches_the_node_by_is_never_rebound():
    sut, xe0 = node(dpdk_driver="auto")
    line = nic_binding.problem(sut, xe0, NicState(xe0.pci, True, "i40e", "eno1",
                                                  ("10.0.0.5/24",)))
    assert "carries 10.0.0.5" in line


def test_pods_give_permission_per_interface_per_node_or_by_naming_a_dpdk_driver(tmp_path):
    pod = tmp_path / "pod.yaml"
    pod.write_text(textwrap.dedent("""\
        nodes:
        - name: tg
          ip: 10.0.0.4
          dpdk_driver: auto
          interfaces:
            xe0: {vpci: "0000:05:00.0", driver: i40e}
            xe1: {vpci: "0000:05:00.1", driver: i40e, dpdk_driver: uio_pci_generic}
        - name: sut
          ip: 10.0.0.5
          interfaces:
            xe0: {vpci: "0000:05:00.0", driver: vfio-pci}
            xe1: {vpci: "0000:05:00.1", driver: i40e}
        """))
    nodes = load_pod(pod)
    assert [i.dpdk_driver for i in nodes["tg"].interfaces.values()] == ["auto",
                                                                        "uio_pci_generic"]
    assert [i.dpdk_driver for i in nodes["sut"].interfaces.values()] == ["vfio-pci", ""]
    assert all(i.is_dpdk_port for n in nodes.values() for i in n.interfaces.values())


def test_ledger_records_round_trip_with_pci_addresses_as_keys(ledger):
    executor = ShellExecutor()
    record = node_ledger.Record("261126-000000-abcdef", "nic", "0000:00:04.0", "virtio-pci",
                                node_ledger.controller())
    node_ledger.write(executor, record)
    assert node_ledger.read_all(executor) == [record]
    node_ledger.remove(executor, record)
    assert node_ledger.read_all(executor) == []


def test_hugepages_a_remote_node_got_are_in_its_ledger_until_given_back(ledger, monkeypatch):
    from nsb.vnfs import hugepages

    executor = ShellExecutor()
    hugepages._note(executor, "261126-000000-abcdef", 64)
    hugepages._note(executor, "261126-000000-abcdef", 16)
    [record] = node_ledger.read_all(executor)
    assert (record.kind, record.value) == ("hugepages", "80")
    hugepages._note(executor, "261126-000000-abcdef", -80)
    assert node_ledger.read_all(executor) == []


def test_the_next_run_gives_back_what_a_dead_run_of_this_controller_left(ledger, tmp_path,
                                                                         monkeypatch):
    pool = tmp_path / "nr_hugepages"
    pool.write_text("100\n")
    monkeypatch.setattr(hugepage_pool, "POOL", str(pool))
    executor = ShellExecutor()
    me = node_ledger.controller()
    dead = node_ledger.Record("261126-000000-dead00", "hugepages", "2M", "64", me)
    alive = node_ledger.Record("261126-000000-a11ve0", "hugepages", "2M", "8", me)
    foreign = node_ledger.Record("261126-000000-f0re16", "hugepages", "2M", "4", "elsewhere")
    for record in (dead, alive, foreign):
        node_ledger.write(executor, record)
    done = node_leftovers.give_back(executor, lambda task: task == alive.task_id)
    assert done == ["64 hugepages"]
    assert pool.read_text().strip() == "36"
    assert sorted(r.task_id for r in node_ledger.read_all(executor)) == sorted(
        [alive.task_id, foreign.task_id])


def test_the_docs_pod_lets_nsb_bind_every_nic(tmp_path):
    from tests.doc_examples import examples

    [block] = [e for e in examples("checked-by")
               if e.file.name == "dpdk-nics.md" and "test_nic_binding.py" in e.note]
    pod = tmp_path / "pod.yaml"
    pod.write_text(block.text)
    sut = load_pod(pod)["sut"]
    assert {i.name: (i.pci, i.dpdk_driver) for i in sut.interfaces.values()} == {
        "xe0": ("0000:af:00.0", "auto"), "xe1": ("0000:af:00.1", "auto")}


def test_a_dead_runs_processes_and_files_go_first(ledger, tmp_path):
    """A run signs in on each node; killed, it leaves its record, and the next run stops
    what is named after it there (processes, DPDK runtime dirs, work dirs)."""
    executor = ShellExecutor()
    dead_id = "261126-000000-dead01"
    node_leftovers.sign_in(executor, dead_id)
    node_leftovers.sign_in(executor, "261126-000000-a11ve1")
    work = Path(f"/tmp/nsb-{dead_id}")
    work.mkdir()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", str(work)])
    try:
        done = node_leftovers.give_back(executor, lambda task: task != dead_id)
        assert sleeper.wait(10) == -9
    finally:
        sleeper.kill()
    assert done == [f"what run {dead_id} started"]
    assert not work.exists()
    assert [r.task_id for r in node_ledger.read_all(executor)] == ["261126-000000-a11ve1"]
    node_leftovers.sign_off(executor, "261126-000000-a11ve1")
    assert node_ledger.read_all(executor) == []
