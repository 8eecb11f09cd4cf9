"""ansible/: lint, syntax, and the roles run against a real sshd node (check mode, scratch root).

The node is a real sshd in a network namespace (tests/functional/sshd_node.py),
reached over SSH with an inventory that ``nsb.nodes.inventory`` makes from a
pod file. The namespace shares this machine's filesystem, so the roles either
run in check mode against / (and the test checks that nothing changed) or for
real with ``nsb_root`` pointing at a scratch directory, whose files are then
read back. Nothing reboots, nothing is bound, no real sysctl or GRUB file changes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from nsb.nodes.ansible_run import CALLBACK
from nsb.nodes.inventory import inventory_from_pod, write_inventory
from tests.conftest import ROOT

ANSIBLE = ROOT / "ansible"
PLAYBOOK = ANSIBLE / "nsb_setup.yml"
ROLES = ("packages", "hugepages", "kernel_cmdline", "nic_binding", "cpu_tuning")
BIN = Path(sys.executable).parent
SYSFS_2M = Path("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")
FAKE_PCI = "0000:ff:1f.7"  # no such device: the NIC binding role must find that out


def tool(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{name} is not installed in {BIN} (pip install ansible-core ansible-lint)")
    return str(path)


def ansible_env(work: Path) -> dict[str, str]:
    """Ansible and ansible-lint keep their files under ``work``, and use no ssh master."""
    callbacks = work / "callbacks"
    callbacks.mkdir(parents=True, exist_ok=True)
    (callbacks / "nsb_events.py").write_text(CALLBACK)  # nsb ansible install's own
    env = dict(os.environ)
    env.update({
        "PATH": f"{BIN}:{env.get('PATH', '/usr/bin:/bin')}",
        "ANSIBLE_CONFIG": str(work / "no-ansible.cfg"),
        "ANSIBLE_HOME": str(work / "home"),
        "ANSIBLE_LOCAL_TEMP": str(work / "local-tmp"),
        "ANSIBLE_REMOTE_TEMP": str(work / "remote-tmp"),
        "ANSIBLE_HOST_KEY_CHECKING": "False",
        "ANSIBLE_PIPELINING": "True",  # one ssh connection per task, no temp files
        "ANSIBLE_SSH_ARGS": "-o ControlMaster=no -o UserKnownHostsFile=/dev/null",
        # the node is this Debian machine: its python3 has python3-apt (apt check mode)
        "ANSIBLE_PYTHON_INTERPRETER": "/usr/bin/python3",
        "ANSIBLE_CALLBACK_PLUGINS": str(callbacks),
        "ANSIBLE_CALLBACKS_ENABLED": "nsb_events",
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_RETRY_FILES_ENABLED": "False",
        "NSB_ANSIBLE_EVENTS": str(work / "events.jsonl"),
        "XDG_CACHE_HOME": str(work / "cache"),
    })
    env.pop("ANSIBLE_FORCE_COLOR", None)
    return env


# ---------------------------------------------------------------- lint, syntax


def playbooks() -> list[Path]:
    found = sorted(ANSIBLE.glob("*.yml"))
    assert PLAYBOOK in found
    return found


def test_every_playbook_passes_syntax_check(tmp_path):
    for playbook in playbooks():
        run = subprocess.run([tool("ansible-playbook"), "-i", "localhost,", "--syntax-check",
                              str(playbook)], capture_output=True, text=True,
                             env=ansible_env(tmp_path), cwd=tmp_path)
        assert run.returncode == 0, f"{playbook.name}:\n{run.stdout}{run.stderr}"


def lint(path: Path, work: Path) -> tuple[int, str]:
    """ansible-lint on the ansible/ tree at ``path`` with its own config; (rc, output)."""
    run = subprocess.run([tool("ansible-lint"), "-c", str(path / ".ansible-lint"),
                          "--nocolor", "."], capture_output=True, text=True,
                         env=ansible_env(work), cwd=path)
    output = run.stdout + run.stderr
    # a target outside the project is silently skipped: make sure every YAML file was read
    processed = re.search(r"in (\d+) files processed", output)
    assert processed, output
    assert int(processed.group(1)) >= len(list(path.rglob("*.yml"))), output
    return run.returncode, output


def test_ansible_lint_production_profile_passes(tmp_path):
    config = yaml.safe_load((ANSIBLE / ".ansible-lint").read_text())
    assert config["profile"] == "production"
    assert config.get("strict") is True  # warnings fail too
    code, output = lint(ANSIBLE, tmp_path)
    assert code == 0, output
    assert "Profile 'production' was required, and it passed" in output, output
    assert "0 failure(s), 0 warning(s)" in output, output


def test_ansible_lint_fails_on_a_violation(tmp_path):
    """The lint test above is live: the same config fails a role with a sloppy task."""
    copy = tmp_path / "ansible"
    shutil.copytree(ANSIBLE, copy)
    tasks = copy / "roles" / "hugepages" / "tasks" / "main.yml"
    tasks.write_text(tasks.read_text() + "\n- shell: echo 2048 > /proc/sys/vm/nr_hugepages\n")
    code, output = lint(copy, tmp_path / "work")
    assert code != 0, output
    for rule in ("name[missing]", "fqcn[action-core]", "no-changed-when"):
        assert rule in output, output


def test_ansible_reads_the_inventory_nsb_writes(tmp_path):
    pod = ROOT / "tests/data/yardstick-samples/samples/vnf_samples/nsut/prox/prox-baremetal-2.yaml"
    path = tmp_path / "inventory.yaml"
    with open(path, "w") as out:
        write_inventory(pod, out)
    run = subprocess.run([tool("ansible-inventory"), "-i", str(path), "--list"],
                         capture_output=True, text=True, env=ansible_env(tmp_path), cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    listed = json.loads(run.stdout)
    assert listed["trafficgen"]["hosts"] == ["trafficgen_0"]
    assert listed["vnf"]["hosts"] == ["vnf_0"]
    ours = inventory_from_pod(pod)["all"]["children"]
    for group, host in (("trafficgen", "trafficgen_0"), ("vnf", "vnf_0")):
        assert listed["_meta"]["hostvars"][host] == ours[group]["hosts"][host]


def test_roles_agree_on_shared_defaults():
    """A variable several roles read (nsb_root, nsb_isolcpus, ...) has one default."""
    defaults = {role: yaml.safe_load((ANSIBLE / "roles" / role / "defaults" / "main.yml")
                                     .read_text()) for role in ROLES}
    seen: dict[str, tuple[str, object]] = {}
    shared = set()
    for role, values in defaults.items():
        assert values["nsb_root"] == "", role  # every role honours the scratch root
        for name, value in values.items():
            assert name.startswith("nsb_"), f"{role}: {name}"
            if name in seen:
                shared.add(name)
                assert seen[name][1] == value, f"{name}: {seen[name][0]} and {role} differ"
            else:
                seen[name] = (role, value)
    assert {"nsb_root", "nsb_isolcpus", "nsb_hugepages_2m", "nsb_hugepages_1g",
            "nsb_default_hugepagesz"} <= shared


# ------------------------------------------------------------ against a node


@pytest.fixture
def work(tmp_path):
    """Where ansible keeps its files (and the scratch root) for one test."""
    return tmp_path


@pytest.fixture
def inventory(node, tmp_path) -> Path:
    return node_inventory(node, tmp_path)


def node_inventory(node, tmp_path: Path, pci: str = FAKE_PCI) -> Path:
    """An inventory made by nsb from a pod file that describes the sshd node."""
    pod = tmp_path / "pod.yaml"
    pod.write_text(yaml.safe_dump({"nodes": [{
        "name": "sut_0", "role": "VNF", "ip": node.host, "user": "root", "ssh_port": 22,
        "key_filename": node.key_filename,
        "interfaces": {
            "xe0": {"vpci": pci, "local_mac": "02:00:00:00:00:01", "driver": "ixgbe",
                    "dpdk_port_num": 0},
            "xe1": {"local_mac": "02:00:00:00:00:02"},  # no vpci: not for binding
        },
    }]}))
    path = tmp_path / "inventory.yaml"
    with open(path, "w") as out:
        write_inventory(pod, out)
    return path


def play(inventory: Path, work: Path, *args: str, extra: dict | None = None):
    """Run nsb_setup.yml; (return code, output, task events)."""
    events = work / "events.jsonl"
    events.unlink(missing_ok=True)
    argv = [tool("ansible-playbook"), "-i", str(inventory), str(PLAYBOOK), *args]
    if extra is not None:
        argv += ["-e", json.dumps(extra)]
    run = subprocess.run(argv, capture_output=True, text=True, env=ansible_env(work),
                         cwd=work, timeout=600)
    records = [json.loads(line) for line in events.read_text().splitlines()] \
        if events.exists() else []
    return run.returncode, run.stdout + run.stderr, records


def event(records: list[dict], role: str, task: str) -> dict:
    found = [r for r in records if r["role"] == role and r["task"] == task]
    assert len(found) == 1, f"{role} : {task}: {len(found)} results in " + \
        repr([(r["role"], r["task"]) for r in records])
    return found[0]


def diffs(record: dict) -> list[dict]:
    """The file content diffs a task reported (one per loop item for loops)."""
    result = record["result"]
    found = []
    for item in result.get("results", [result]):
        diff = item.get("diff") or []
        found += [d for d in (diff if isinstance(diff, list) else [diff])
                  if isinstance(d.get("after"), str)]
    return found


def host_state() -> dict:
    """What the roles would change on this machine if check mode leaked."""
    files = ["/etc/default/grub.d/nsb.cfg", "/etc/sysctl.d/80-nsb-hugepages.conf",
             "/etc/fstab", "/etc/default/cpufrequtils", "/etc/modules-load.d/nsb-dpdk.conf"]
    return {
        "files": {name: Path(name).read_text() if Path(name).exists() else None
                  for name in files},
        "grub.d": Path("/etc/default/grub.d").exists(),
        "mounts": [Path(p).exists() for p in ("/mnt/huge-2M", "/mnt/huge-1G")],
        "2M": SYSFS_2M.read_text(),
        "vm.nr_hugepages": Path("/proc/sys/vm/nr_hugepages").read_text(),
    }


def test_inventory_reaches_the_node(inventory, work):
    """The inventory nsb wrote (group from the pod role, key, port) gets Ansible in."""
    inv = yaml.safe_load(inventory.read_text())
    assert list(inv["all"]["children"]) == ["vnf"]
    run = subprocess.run([tool("ansible"), "-i", str(inventory), "vnf", "-m",
                          "ansible.builtin.command", "-a", "ip -o -4 addr show"],
                         capture_output=True, text=True, env=ansible_env(work), cwd=work,
                         timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    host = inv["all"]["children"]["vnf"]["hosts"]["sut_0"]["ansible_host"]
    assert f"inet {host}/30" in run.stdout  # ran inside the node's namespace


def reboot_task_follows_check_mode() -> bool:
    """The reboot task has no check_mode override (the check-mode test relies on it)."""
    tasks = yaml.safe_load((ANSIBLE / "roles/kernel_cmdline/tasks/main.yml").read_text())

    def walk(items, inherited):
        for task in items:
            override = inherited or "check_mode" in task
            if "block" in task:
                yield from walk(task["block"], override)
            elif "ansible.builtin.reboot" in task:
                yield override
    found = list(walk(tasks, False))
    return found == [False]


def test_hugepages_kernel_cmdline_cpu_tuning_in_check_mode(inventory, work):
    """Check mode against / reports what it would write and do, and changes nothing."""
    assert reboot_task_follows_check_mode()  # else this test could reboot the machine
    before = host_state()
    wanted_2m = int(before["2M"]) + 64
    code, output, records = play(
        inventory, work, "--check", "--diff", "--tags", "hugepages,kernel_cmdline,cpu_tuning",
        extra={"nsb_hugepages_2m": wanted_2m, "nsb_hugepages_1g": 4,
               "nsb_isolcpus": "2-3", "nsb_allow_reboot": True})
    assert code == 0, output
    assert host_state() == before, "check mode changed this machine"
    assert not [r for r in records if r["status"] in ("failed", "unreachable")], output

    # hugepages: the sysfs value now and the sysctl at boot
    now = event(records, "hugepages", "Reserve the 2M hugepages now")
    assert now["result"]["changed"] is True
    [diff] = diffs(now)
    assert diff["before"] == before["2M"] and diff["after"] == f"{wanted_2m}\n"
    boot = event(records, "hugepages", "Keep the 2M hugepages at boot")
    assert boot["result"]["changed"] is True
    assert f"\nvm.nr_hugepages = {wanted_2m}\n" in diffs(boot)[0]["after"]
    fstab = event(records, "hugepages", "Mount hugetlbfs at boot")
    lines = "".join(d["after"] for d in diffs(fstab))
    assert "hugetlbfs /mnt/huge-2M hugetlbfs pagesize=2M 0 0\n" in lines
    assert "hugetlbfs /mnt/huge-1G hugetlbfs pagesize=1G 0 0\n" in lines
    mount = event(records, "hugepages", "Mount the missing ones")
    assert all(item.get("skipped") or item.get("changed") is False
               for item in mount["result"]["results"])

    # kernel_cmdline: the GRUB file it would write, the reboot it would do
    grub = event(records, "kernel_cmdline", "Add the arguments to GRUB_CMDLINE_LINUX")
    assert grub["result"]["changed"] is True
    assert diffs(grub)[0]["after"].splitlines()[-1] == (
        'GRUB_CMDLINE_LINUX="$GRUB_CMDLINE_LINUX default_hugepagesz=2M hugepagesz=1G '
        'hugepages=4 isolcpus=2-3 nohz_full=2-3 rcu_nocbs=2-3 intel_iommu=on iommu=pt"')
    update = event(records, "kernel_cmdline", "Update the GRUB configuration")
    assert update["status"] == "skipped"  # a command in check mode: notified, not run
    say = event(records, "kernel_cmdline", "Say whether the node needs a reboot")
    assert say["status"] == "ok"  # this kernel was not booted with isolcpus=2-3
    assert say["result"]["msg"].endswith(": rebooting")
    reboot = event(records, "kernel_cmdline", "Reboot into the new command line")
    assert reboot["status"] == "ok" and reboot["result"]["rebooted"] is True  # would

    # cpu_tuning: the governor at boot; no tuned or irqbalance here
    governor = event(records, "cpu_tuning", "Set the CPU governor at boot (cpufrequtils)")
    assert diffs(governor)[0]["after"].splitlines()[-1] == 'GOVERNOR="performance"'
    assert event(records, "cpu_tuning", "Select the tuned profile")["status"] == "skipped"


def test_no_reboot_without_nsb_allow_reboot(inventory, work):
    code, output, records = play(inventory, work, "--check", "--tags", "kernel_cmdline",
                                 extra={"nsb_isolcpus": "2-3"})
    assert code == 0, output
    say = event(records, "kernel_cmdline", "Say whether the node needs a reboot")
    assert say["result"]["msg"].endswith("reboot the node (or set nsb_allow_reboot: true)")
    assert event(records, "kernel_cmdline", "Reboot into the new command line")[
        "status"] == "skipped"


def scratch_root(base: Path) -> Path:
    """A root with the sysfs files the roles write: 2M hugepages, two CPU policies, tuned."""
    root = base / "scratch"
    sysfs = root / "sys/kernel/mm/hugepages/hugepages-2048kB"
    sysfs.mkdir(parents=True)
    (sysfs / "nr_hugepages").write_text("0\n")
    for policy in ("policy0", "policy1"):
        cpu = root / "sys/devices/system/cpu/cpufreq" / policy
        cpu.mkdir(parents=True)
        (cpu / "scaling_governor").write_text("powersave\n")
    (root / "usr/sbin").mkdir(parents=True)
    (root / "usr/sbin/tuned-adm").write_text("")  # tuned is there (never run: scratch root)
    return root


def grub_cmdline(cfg: Path, base: str = "ro quiet") -> str:
    """GRUB_CMDLINE_LINUX after grub-mkconfig sources the file, as it does grub.d/*.cfg."""
    return subprocess.run(["sh", "-c", f'GRUB_CMDLINE_LINUX="{base}"; . "$0"; '
                           'printf %s "$GRUB_CMDLINE_LINUX"', str(cfg)],
                          capture_output=True, text=True, check=True).stdout


@pytest.mark.slow  # over two minutes of apt in a scratch root; make test-slow
def test_roles_into_a_scratch_root(inventory, work):
    """hugepages, kernel_cmdline and cpu_tuning for real, files under nsb_root; idempotent."""
    root = scratch_root(work)
    before = host_state()
    settings = {"nsb_root": str(root), "nsb_hugepages_2m": 512, "nsb_hugepages_1g": 8,
                "nsb_isolcpus": "2-3", "nsb_rcu_nocbs": "", "nsb_intel_iommu": "",
                "nsb_kernel_cmdline_extra": ["idle=poll"]}
    tags = ["--tags", "hugepages,kernel_cmdline,cpu_tuning"]
    code, output, records = play(inventory, work, *tags, extra=settings)
    assert code == 0, output
    assert event(records, "hugepages", "Reserve the 2M hugepages now")["result"]["changed"]

    assert (root / "sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages").read_text() \
        == "512\n"
    sysctl = (root / "etc/sysctl.d/80-nsb-hugepages.conf").read_text()
    assert "\nvm.nr_hugepages = 512\n" in sysctl
    fstab = (root / "etc/fstab").read_text().splitlines()
    assert fstab == ["hugetlbfs /mnt/huge-2M hugetlbfs pagesize=2M 0 0",
                     "hugetlbfs /mnt/huge-1G hugetlbfs pagesize=1G 0 0"]
    assert (root / "mnt/huge-2M").is_dir() and (root / "mnt/huge-1G").is_dir()
    cfg = root / "etc/default/grub.d/nsb.cfg"
    assert grub_cmdline(cfg) == ("ro quiet default_hugepagesz=2M hugepagesz=1G hugepages=8 "
                                 "isolcpus=2-3 nohz_full=2-3 iommu=pt idle=poll")
    for policy in ("policy0", "policy1"):
        governor = root / "sys/devices/system/cpu/cpufreq" / policy / "scaling_governor"
        assert governor.read_text() == "performance\n"
    assert 'GOVERNOR="performance"' in (root / "etc/default/cpufrequtils").read_text()
    tuned = (root / "etc/tuned/cpu-partitioning-variables.conf").read_text()
    assert tuned.splitlines() == ["isolated_cores=2-3"]
    # nothing outside the scratch root: no update-grub, mount, reboot, tuned-adm
    for role, task in (("kernel_cmdline", "Update the GRUB configuration"),
                       ("kernel_cmdline", "Read the running kernel's command line"),
                       ("kernel_cmdline", "Reboot into the new command line"),
                       ("hugepages", "List the hugetlbfs mounts"),
                       ("cpu_tuning", "Select the tuned profile"),
                       ("cpu_tuning", "Stop and disable irqbalance")):
        assert event(records, role, task)["status"] == "skipped", (role, task)
    assert host_state() == before

    # the same settings again change nothing
    code, output, records = play(inventory, work, *tags, extra=settings)
    assert code == 0, output
    changed = [(r["role"], r["task"]) for r in records if r["result"].get("changed")]
    assert changed == [], output

    # 1G as the default size: 2M pages move from sysctl.d to the command line
    code, output, records = play(inventory, work, *tags,
                                 extra={**settings, "nsb_default_hugepagesz": "1G"})
    assert code == 0, output
    assert not (root / "etc/sysctl.d/80-nsb-hugepages.conf").exists()
    assert grub_cmdline(cfg, "") == (" default_hugepagesz=1G hugepagesz=1G hugepages=8 "
                                     "hugepagesz=2M hugepages=512 isolcpus=2-3 nohz_full=2-3 "
                                     "iommu=pt idle=poll")
    assert host_state() == before


def test_kernel_cmdline_refuses_shell_characters(inventory, work):
    code, output, records = play(inventory, work, "--check", "--tags", "kernel_cmdline",
                                 extra={"nsb_root": str(work / "scratch"),
                                        "nsb_isolcpus": '2-3"; reboot; "'})
    assert code != 0
    failed = event(records, "kernel_cmdline", "Check the kernel arguments")
    assert failed["status"] == "failed"
    assert "cannot go on the kernel command line" in output
    assert not (work / "scratch/etc/default/grub.d").exists()


def installed(package: str) -> bool:
    status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package],
                            capture_output=True, text=True).stdout
    return status == "install ok installed"


def test_packages_in_check_mode(inventory, work):
    defaults = yaml.safe_load((ANSIBLE / "roles/packages/defaults/main.yml").read_text())
    assert {"dpdk", "dpdk-dev", "openvswitch-switch", "netsniff-ng"} <= \
        set(defaults["nsb_packages"])
    available = [name for name in defaults["nsb_packages_optional"]
                 if subprocess.run(["apt-cache", "show", "--no-all-versions", name],
                                   capture_output=True).returncode == 0]
    wanted = defaults["nsb_packages"] + available
    missing = [name for name in wanted if not installed(name)]

    code, output, records = play(inventory, work, "--check", "--diff", "--tags", "packages")
    assert code == 0, output
    result = event(records, "packages", "Install the packages")["result"]
    assert result["changed"] is bool(missing), output
    would_install = {line.split()[1] for line in result.get("stdout", "").splitlines()
                     if line.startswith("Inst ")}
    assert set(missing) <= would_install, result.get("stdout")
    assert not would_install & (set(wanted) - set(missing))
    assert [name for name in wanted if not installed(name)] == missing  # nothing installed


def test_nic_binding_does_nothing_unless_asked(inventory, work):
    """nsb_bind_nics defaults to false: a real run skips every task of the role."""
    code, output, records = play(inventory, work, "--tags", "nic_binding",
                                 extra={"nsb_root": str(work / "scratch")})
    assert code == 0, output
    role = [r for r in records if r["role"] == "nic_binding"]
    assert role and all(r["status"] == "skipped" for r in role), output
    assert not (work / "scratch").exists()


def test_nic_binding_stops_at_a_missing_nic(inventory, work):
    """Asked to bind (check mode), it looks for the pod's vpci first and names what is missing."""
    code, output, records = play(inventory, work, "--check", "--tags", "nic_binding",
                                 extra={"nsb_root": str(work / "scratch"),
                                        "nsb_bind_nics": True})
    assert code != 0
    looked = event(records, "nic_binding", "Look for the NICs")["result"]["results"]
    assert [item["item"]["key"] for item in looked] == ["xe0"]  # xe1 has no vpci
    failed = event(records, "nic_binding", "Check the node has them all")
    assert failed["status"] == "failed"
    assert f"xe0: no PCI device {FAKE_PCI} on sut_0" in output
    assert not [r for r in records if r["task"] in ("Load the DPDK driver",
                                                     "Bind them with dpdk-devbind")]


def test_nic_binding_takes_uio_pci_generic_without_an_iommu(node, work):
    """Like nsb at run time: vfio-pci asked on a machine with no IOMMU and no vfio
    no-IOMMU mode (this one) binds to uio_pci_generic, with a warning (check mode: a
    real device of this machine is found and nothing is bound)."""
    if any(Path("/sys/kernel/iommu_groups").iterdir()) or \
            Path("/sys/module/vfio/parameters/enable_unsafe_noiommu_mode").exists():
        pytest.skip("this machine has an IOMMU or vfio's no-IOMMU mode")
    device = next(d for d in sorted(Path("/sys/bus/pci/devices").iterdir())
                  if (d / "driver").exists() and not (d / "net").exists())
    inventory = node_inventory(node, work, pci=device.name)
    code, output, records = play(inventory, work, "--check", "--tags", "nic_binding",
                                 extra={"nsb_root": str(work / "scratch"),
                                        "nsb_bind_nics": True})
    assert code == 0, output
    chosen = event(records, "nic_binding", "Choose the driver")["result"]["ansible_facts"]
    assert chosen["nsb_nic_binding_driver"] == "uio_pci_generic"
    assert "uio_pci_generic instead of vfio-pci" in output
    bind = event(records, "nic_binding", "Bind them with dpdk-devbind")
    assert "uio_pci_generic" in json.dumps(bind), bind
    assert (device / "driver").resolve().name != "uio_pci_generic"
