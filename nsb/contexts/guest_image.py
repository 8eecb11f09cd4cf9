"""The guest image of the libvirt context: a kernel and an initramfs built here.

Nothing is downloaded beyond Debian's cloud kernel package: the initramfs is
made of this host's own files (busybox-static for the shell and tools, sshd
and its sftp server, util-linux's setsid, python3 for the DPDK telemetry client,
dpdk-testpmd with the PMDs a guest needs) and the kernel's modules for virtio NICs
and for the drivers DPDK takes a NIC with (uio_pci_generic; vfio-pci, behind a
virtual IOMMU), tun and bridge, all loaded at boot: nsb binds a data NIC to one of them
for a run. It boots in seconds under TCG; each VM gets its SSH key, its management
address and its NIC names on the kernel command line and in a small cpio appended
to the initramfs (``vm_initrd``), with the host programs and files the context
puts into its guests (``guest_binaries``, ``guest_files``). Built once per set of
inputs and kept in the cache directory (NSB_GUEST_CACHE, default
/var/cache/nsb/guest).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import logging
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from nsb import host_libraries
from nsb.errors import PrerequisiteError

LOG = logging.getLogger(__name__)

RECIPE_VERSION = "9"
CACHE = Path(os.environ.get("NSB_GUEST_CACHE", "/var/cache/nsb/guest"))
KERNEL_META_PACKAGE = "linux-image-cloud-amd64"
# loaded at boot in this order, each after what it depends on (modules.dep); one built
# into the kernel (modules.builtin) is skipped. vfio_iommu_type1 is no symbol dependency
# of vfio-pci, but vfio needs it to give DPDK an IOMMU container; tun gives a bridge of
# Open vSwitch's userspace datapath its internal port (/dev/net/tun) and a VM's NIC its
# tap; bridge lets the guest be a host of VMs itself (their management NICs' bridge)
MODULES = ("virtio_net", "virtio_pci", "uio_pci_generic", "vfio_iommu_type1", "vfio-pci",
           "tun", "bridge")
# dash is the login and command shell: busybox's sh runs its own applets before
# PATH, and its setsid lacks the -w and -f the SSH executor uses
BINARIES = ("/bin/busybox", "/bin/dash", "/usr/sbin/sshd", "/usr/lib/openssh/sftp-server",
            "/usr/bin/setsid", "/usr/bin/python3.11", "/usr/bin/dpdk-testpmd")
LIB_DIR = "/lib/x86_64-linux-gnu"  # where ldd finds the libraries
DPDK_PMD_DIR = "/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0"
DPDK_PMDS = ("net_af_packet", "net_virtio", "mempool_ring", "bus_vdev", "bus_pci")
# loaded by glibc at run time, so ldd does not list it (pthread_cancel needs it)
DLOPENED = ("/lib/x86_64-linux-gnu/libgcc_s.so.1",)
PYTHON_LIB = "/usr/lib/python3.11"
PYTHON_SKIPPED = ("test", "idlelib", "tkinter", "turtledemo", "lib2to3", "ensurepip",
                  "pydoc_data", "distutils", "site-packages", "dist-packages", "unittest",
                  "config-3.11-x86_64-linux-gnu", "__pycache__")
HOST_PACKAGES = {"/bin/busybox": "busybox-static", "/usr/sbin/sshd": "openssh-server",
                 "/usr/bin/dpdk-testpmd": "dpdk", "/usr/bin/python3.11": "python3.11-minimal"}

INIT = r"""#!/bin/busybox sh
/bin/busybox --install -s /bin
ln -sf /bin/dash /bin/sh
chmod 755 /; chmod 1777 /tmp
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/hugepages /run/sshd /tmp /var/empty
mount -t devpts devpts /dev/pts; mount -t hugetlbfs nodev /dev/hugepages
for m in $(cat /etc/nsb/modules); do insmod "/lib/modules/$m"; done
for arg in $(cat /proc/cmdline); do
  case "$arg" in
    nsb.mgmt=*) MGMT="${arg#nsb.mgmt=}" ;;
    nsb.nics=*) NICS="${arg#nsb.nics=}" ;;
    nsb.hugepages=*) echo "${arg#nsb.hugepages=}" > /proc/sys/vm/nr_hugepages ;;
  esac
done
# data NICs carry test traffic only: no IPv6 autoconfiguration frames on them
echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6
echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6
ip link set lo up
for dev in /sys/class/net/*; do
  name=$(basename "$dev"); mac=$(cat "$dev/address")
  for pair in $(echo "$NICS" | tr ',' ' '); do
    if [ "${pair%%=*}" = "$mac" ]; then
      ip link set "$name" name "${pair#*=}"; ip link set "${pair#*=}" up
    fi
  done
done
ip addr add "$MGMT" dev mgmt
echo nsb-guest-ready > /dev/console
/usr/sbin/sshd -e -f /etc/ssh/sshd_config
while true; do sleep 3600; done
"""

SSHD_CONFIG = """Port 22
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
AuthorizedKeysFile /etc/nsb/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile /run/sshd.pid
Subsystem sftp /usr/lib/openssh/sftp-server
"""


@dataclass(frozen=True)
class GuestImage:
    kernel: Path
    initrd: Path
    version: str  # the kernel's, e.g. 6.1.0-56-cloud-amd64


def missing_tools() -> list[str]:
    """Host files the recipe needs, with the Debian package that has them."""
    needed = [*BINARIES, "/usr/bin/ssh-keygen", "/usr/bin/cpio", "/usr/bin/apt-get",
              "/sbin/depmod"]
    return [f"{path} ({HOST_PACKAGES.get(path, 'see the README')})" for path in needed
            if not Path(path).exists()]


def ensure(cache: Path = CACHE) -> GuestImage:
    """The cached image for this host's inputs, built first if it is not there."""
    missing = missing_tools()
    if missing:
        raise PrerequisiteError("the libvirt guest image needs: " + ", ".join(missing))
    kernel_package = _kernel_package()
    key = _inputs_key(kernel_package)
    target = cache / key
    image = GuestImage(target / "vmlinuz", target / "initrd.gz", kernel_package.removeprefix(
        "linux-image-"))
    if image.kernel.is_file() and image.initrd.is_file():
        return image
    LOG.info("building the guest image in %s", target)
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix="build-") as work:
        work_dir = Path(work)
        kernel_tree = _kernel_tree(kernel_package, work_dir)
        root = work_dir / "root"
        _fill_root(root, kernel_tree, image.version)
        building = work_dir / "out"
        building.mkdir()
        shutil.copy(kernel_tree / "boot" / f"vmlinuz-{image.version}", building / "vmlinuz")
        (building / "initrd.gz").write_bytes(gzip.compress(_cpio(root), compresslevel=6))
        building.rename(target) if not target.exists() else None
    return image


def vm_initrd(image: GuestImage, authorized_key: str, out: Path,
              binaries: tuple[str, ...] = (), files: tuple[str, ...] = ()) -> Path:
    """The image's initramfs with this VM's authorized key appended (a second cpio),
    ``binaries`` of this host with their shared libraries and ``files`` (files or
    whole directories: what programs read besides libraries), at the same paths."""
    with tempfile.TemporaryDirectory() as work:
        root = Path(work)
        (root / "etc" / "nsb").mkdir(parents=True)
        (root / "etc" / "nsb" / "authorized_keys").write_text(authorized_key.strip() + "\n")
        for binary in binaries:
            for path in [binary, *sorted(set(host_libraries.of(binary)))]:
                _copy(path, root)
        for path in files:
            if Path(path).is_dir():  # its contents, symlinks followed; may be empty
                shutil.copytree(os.path.realpath(path), root / path.lstrip("/"),
                                dirs_exist_ok=True)
            else:
                _copy(path, root)
        extra = gzip.compress(_cpio(root), compresslevel=1)
    out.write_bytes(image.initrd.read_bytes() + extra)
    return out


def host_binaries(paths: list[str], run, where) -> tuple[str, ...]:
    """A context's ``guest_binaries``, absolute (relative ones from the task file); one
    that is not an executable file is one located line."""
    found = []
    for index, path in enumerate(paths):
        resolved = _host_path(path, run)
        if not (resolved.is_file() and os.access(resolved, os.X_OK)):
            raise where.error(f"{path}: no executable file there ({resolved})",
                              "guest_binaries", index)
        found.append(str(resolved))
    return tuple(found)


def host_files(paths: list[str], run, where) -> tuple[str, ...]:
    """A context's ``guest_files``, absolute (relative ones from the task file); one
    that is neither a file nor a directory is one located line."""
    found = []
    for index, path in enumerate(paths):
        resolved = _host_path(path, run)
        if not (resolved.is_file() or resolved.is_dir()):
            raise where.error(f"{path}: no file or directory there ({resolved})",
                              "guest_files", index)
        found.append(str(resolved))
    return tuple(found)


def _host_path(path: str, run) -> Path:
    return Path(path) if Path(path).is_absolute() else run.task_relative(path)


def _kernel_package() -> str:
    shown = subprocess.run(["apt-cache", "depends", KERNEL_META_PACKAGE], capture_output=True,
                           text=True).stdout
    match = re.search(r"Depends: (linux-image-\S+)", shown)
    if not match:
        raise PrerequisiteError(f"apt-cache knows no {KERNEL_META_PACKAGE} (run apt-get update)")
    return match.group(1)


def _inputs_key(kernel_package: str) -> str:
    digest = hashlib.sha256(f"{RECIPE_VERSION} {kernel_package}".encode())
    for path in [*BINARIES, DPDK_PMD_DIR, PYTHON_LIB]:
        stat = Path(path).stat()
        digest.update(f"{path} {stat.st_size} {stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def _kernel_tree(package: str, work: Path) -> Path:
    done = subprocess.run(["apt-get", "download", "-qq", package], cwd=work,
                          capture_output=True, text=True)
    debs = list(work.glob("linux-image-*.deb"))
    if not debs:
        raise PrerequisiteError(f"apt-get download {package} failed: {done.stderr.strip()}")
    tree = work / "kernel"
    subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(tree)], check=True)
    debs[0].unlink()
    version = package.removeprefix("linux-image-")
    subprocess.run(["depmod", "-b", str(tree), version], check=True)  # modules.dep
    return tree


def _fill_root(root: Path, kernel_tree: Path, version: str) -> None:
    for directory in ("bin", "sbin", "etc/ssh", "etc/nsb", "proc", "sys", "dev", "run",
                      "tmp", "root", "lib/modules", "usr/bin", "usr/sbin", "var"):
        (root / directory).mkdir(parents=True, exist_ok=True)
    (root / "var" / "run").symlink_to("../run")
    (root / "usr" / "bin" / "python3").symlink_to("python3.11")
    libraries: set[str] = set()
    for binary in BINARIES:
        _copy(binary, root)
        libraries |= set(host_libraries.of(binary))
    for name in DPDK_PMDS:  # EAL loads the plugin directory's *.so: these and no others
        _add_pmd(name, root)
        libraries |= set(host_libraries.of(f"{DPDK_PMD_DIR}/librte_{name}.so.23"))
    for library in [*libraries, *DLOPENED]:
        _copy(library, root)
    _copy_python(root)
    modules = _module_closure(kernel_tree / "lib" / "modules" / version)
    for relative in modules:
        target = root / "lib" / "modules" / Path(relative).name
        shutil.copy(kernel_tree / "lib" / "modules" / version / relative, target)
    (root / "etc" / "nsb" / "modules").write_text(
        "\n".join(Path(m).name for m in modules) + "\n")
    (root / "init").write_text(INIT)
    (root / "init").chmod(0o755)
    (root / "etc" / "passwd").write_text("root:x:0:0:root:/root:/bin/dash\n"
                                         "sshd:x:100:65534::/run/sshd:/bin/false\n")
    (root / "etc" / "group").write_text("root:x:0:\nnogroup:x:65534:\n")
    (root / "etc" / "shadow").write_text("root:*:19000:0:99999:7:::\n")
    (root / "etc" / "ssh" / "sshd_config").write_text(SSHD_CONFIG)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                    str(root / "etc" / "ssh" / "ssh_host_ed25519_key")], check=True)


def _copy(path: str, root: Path) -> None:
    """``path`` into ``root`` at the same place; symlinks are followed, names kept."""
    target = root / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        shutil.copy2(os.path.realpath(path), target)


def _add_pmd(name: str, root: Path) -> None:
    """A PMD in EAL's plugin directory. One that programs also link by name (bus_pci,
    bus_vdev: PROX does) is a link to that copy, so the loader maps it once; two
    copies register their tailqs twice and EAL panics."""
    plugin = root / DPDK_PMD_DIR.lstrip("/") / f"librte_{name}.so.23"
    linked = f"{LIB_DIR}/librte_{name}.so.23"
    if Path(linked).exists():
        _copy(linked, root)
        plugin.parent.mkdir(parents=True, exist_ok=True)
        plugin.symlink_to(linked)
    else:
        _copy(f"{DPDK_PMD_DIR}/librte_{name}.so.23", root)
    plugin.with_name(f"librte_{name}.so").symlink_to(plugin.name)


def _copy_python(root: Path) -> None:
    def skipped(directory, names):
        return [n for n in names if n in PYTHON_SKIPPED]

    shutil.copytree(PYTHON_LIB, root / PYTHON_LIB.lstrip("/"), ignore=skipped, symlinks=False)


def _module_closure(modules_dir: Path, wanted: tuple[str, ...] = MODULES) -> list[str]:
    """The modules to load, dependencies first (paths relative to ``modules_dir``); a
    module built into the kernel is not loaded."""
    deps = {}
    for line in (modules_dir / "modules.dep").read_text().splitlines():
        module, _, needs = line.partition(":")
        deps[Path(module).name.removesuffix(".ko")] = (module, needs.split())
    listed = modules_dir / "modules.builtin"
    builtin = {Path(line).name.removesuffix(".ko") for line in
               (listed.read_text().splitlines() if listed.is_file() else [])}
    ordered: list[str] = []

    def visit(name: str) -> None:
        if name not in deps and name in builtin:
            return
        module, needs = deps[name]
        for need in needs:
            visit(Path(need).name.removesuffix(".ko"))
        if module not in ordered:
            ordered.append(module)

    for name in wanted:
        visit(name)
    return ordered


def _cpio(root: Path) -> bytes:
    """``root`` as a newc cpio archive (owned by root)."""
    names = subprocess.run(["find", ".", "-mindepth", "1"], cwd=root, capture_output=True,
                           text=True, check=True).stdout
    done = subprocess.run(["cpio", "-o", "-H", "newc", "-R", "0:0", "--quiet"], cwd=root,
                          input=names.encode(), capture_output=True, check=True)
    return io.BytesIO(done.stdout).getvalue()
