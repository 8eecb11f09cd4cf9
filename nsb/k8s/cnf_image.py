"""A CNF image from this machine's files, for a cluster without a registry: the
programs a task names (DPDK apps, PROX, ...) at their host paths with their
libraries, Debian DPDK's drivers (PMDs), a shell and tools (busybox), and python3 (for
the DPDK telemetry client and the node facts nsb reads). Imported into the node's
containerd (``ctr -n k8s.io images import``), as an image pulled from a registry would
be; pods then run it with ``imagePullPolicy: Never``.
"""

from __future__ import annotations

import glob
import hashlib
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

from nsb.errors import PrerequisiteError, RunError
from nsb.k8s import image_archive
from nsb.k8s.image_archive import ImageFiles

LOG = logging.getLogger(__name__)

CACHE = Path(os.environ.get("NSB_IMAGE_CACHE", "/var/cache/nsb/images"))
BUSYBOX = "/bin/busybox"
PMD_DIRS = sorted(glob.glob("/usr/lib/x86_64-linux-gnu/dpdk/pmds-*"))
# the drivers a CNF takes its ports with: vdevs (memif, af_packet, virtio-user, vhost,
# tap, null, ring) and the common NICs handed to pods
PMDS = ("bus_pci", "bus_vdev", "mempool_ring", "mempool_stack", "net_memif",
        "net_af_packet", "net_virtio", "net_vhost", "net_null", "net_ring", "net_tap",
        "net_e1000", "net_ixgbe", "net_i40e", "net_iavf", "net_ice", "net_vmxnet3")
PYTHON_SKIP = ("test", "tests", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3",
               "pydoc_data", "distutils", "site-packages", "dist-packages", "__pycache__",
               "config-3.11-x86_64-linux-gnu", "config-3.12-x86_64-linux-gnu")


def host_program(program: str) -> str:
    """The host file of ``program`` (a name on PATH or a path)."""
    path = program if "/" in program else shutil.which(program)
    if not path or not os.path.isfile(path):
        raise PrerequisiteError(f"image program {program!r} is not on this machine "
                                "(a name on PATH or a file's path)")
    return os.path.abspath(path)


def _add_python(image: ImageFiles) -> None:
    """The running interpreter's python3 and its standard library (the big unused parts
    left out)."""
    exe = os.path.realpath(sys.executable if sys.base_prefix == sys.prefix
                           else shutil.which("python3") or sys.executable)
    if sys.prefix != sys.base_prefix:  # a virtualenv: the system interpreter it wraps
        exe = os.path.realpath(os.path.join(sys.base_prefix, "bin", os.path.basename(exe)))
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    image.add_program(exe, f"/usr/bin/{version}")
    image.links["usr/bin/python3"] = version
    image.add_tree(os.path.join(sys.base_prefix, "lib", version), f"/usr/lib/{version}",
                   skip=PYTHON_SKIP)


def _add_busybox(image: ImageFiles) -> None:
    if not os.path.isfile(BUSYBOX):
        raise PrerequisiteError("building a CNF image needs busybox (apt-get install "
                                "busybox-static)")
    image.add_file(BUSYBOX, "/bin/busybox")
    applets = subprocess.run([BUSYBOX, "--list-full"], capture_output=True, text=True).stdout
    for applet in applets.split():
        path = image_archive.canonical("/" + applet.strip("/")).lstrip("/")
        if path not in image.files:
            image.links.setdefault(path, "/bin/busybox")


def _add_pmds(image: ImageFiles) -> None:
    """Debian DPDK loads its drivers from the PMD directory (names ending .so)."""
    for pmd_dir in PMD_DIRS:
        for pmd in PMDS:
            host = os.path.join(pmd_dir, f"librte_{pmd}.so")
            if not os.path.exists(host):
                continue
            # the same file the program may link to already (a copy would be a second
            # library to the loader: DPDK then registers its drivers twice and aborts)
            real = os.path.realpath(host)
            image.add_program(real)
            image.links[host.lstrip("/")] = real


def _add_library_links(image: ImageFiles) -> None:
    """Debian links the drivers' libraries (bus, common) from the library directory into
    the PMD directory: a driver the EAL loads finds the ones it needs there."""
    for pmd_dir in PMD_DIRS:
        libdir = os.path.dirname(os.path.dirname(pmd_dir))
        for link in glob.glob(os.path.join(libdir, "librte_*.so*")):
            target = os.path.realpath(link)
            if os.path.islink(link) and target.startswith(pmd_dir) and \
                    target.lstrip("/") in image.files:
                image.links.setdefault(link.lstrip("/"), os.readlink(link))


def cnf_files(programs: list[str]) -> ImageFiles:
    image = ImageFiles()
    image.merged_usr()
    _add_busybox(image)
    _add_python(image)
    paths = [host_program(p) for p in programs]
    for path in paths:
        image.add_program(path)
    # glibc loads it for thread cancellation and unwinding (a DPDK program's exit)
    for lib in glob.glob("/usr/lib/x86_64-linux-gnu/libgcc_s.so.1")[:1]:
        image.add_library(lib)
    if any("/librte_" in name for name in image.files):  # a DPDK program's libraries
        _add_pmds(image)
        _add_library_links(image)
    return image


def content_key(ref: str, image: ImageFiles) -> str:
    """What the image is made of: the same files give the same key (and archive)."""
    digest = hashlib.sha256(ref.encode())
    for name, host in sorted(image.files.items()):
        stat = os.stat(host)
        digest.update(f"{name}\0{host}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    for name, target in sorted(image.links.items()):
        digest.update(f"{name}\0->{target}\n".encode())
    return digest.hexdigest()[:16]


def build(ref: str, programs: list[str]) -> Path:
    """The image's archive, written once per content into the cache."""
    image = cnf_files(programs)
    CACHE.mkdir(parents=True, exist_ok=True)
    archive = CACHE / f"{content_key(ref, image)}.tar"
    if not archive.exists():
        partial = archive.with_suffix(".partial")
        image_archive.write_archive(str(partial), ref, image)
        partial.rename(archive)
        LOG.info("image %s: %s (%d files)", ref, archive, len(image.files))
    return archive


def import_into(archive: Path, containerd_socket: str) -> None:
    """Into the node's containerd, where kubelet finds it (namespace k8s.io)."""
    if not shutil.which("ctr"):
        raise PrerequisiteError("importing an image needs containerd's ctr (apt-get install "
                                "containerd)")
    done = subprocess.run(["ctr", "-a", containerd_socket, "-n", "k8s.io", "images", "import",
                           str(archive)],
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RunError(f"importing {archive} into containerd at {containerd_socket} failed: "
                       f"{done.stderr.strip()[-300:]}")
