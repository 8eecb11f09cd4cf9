"""The guest image's file layout, built from this host's files (no VM)."""

from __future__ import annotations

import gzip
import os
import subprocess

from nsb.contexts import guest_image

PMD = "bus_pci"  # a PMD that programs also link by name (PROX does)


def test_a_pmd_that_is_also_linked_is_one_file_under_two_names(tmp_path):
    """Two copies are two mappings, whose tailqs EAL registers twice (PROX panicked
    in tailqinitfn_rte_uio_tailq in the VM before this)."""
    guest_image._add_pmd(PMD, tmp_path)
    linked = tmp_path / guest_image.LIB_DIR.lstrip("/") / f"librte_{PMD}.so.23"
    plugin = tmp_path / guest_image.DPDK_PMD_DIR.lstrip("/") / f"librte_{PMD}.so.23"
    assert linked.is_file() and not linked.is_symlink()
    assert os.readlink(plugin) == f"{guest_image.LIB_DIR}/librte_{PMD}.so.23"
    assert os.readlink(plugin.with_name(f"librte_{PMD}.so")) == plugin.name


def test_a_vm_s_initrd_carries_its_key_and_the_guest_binaries_with_their_libraries(tmp_path):
    base = tmp_path / "initrd.gz"
    base.write_bytes(b"")
    image = guest_image.GuestImage(tmp_path / "vmlinuz", base, "6.1.0-x-cloud-amd64")
    out = guest_image.vm_initrd(image, "ssh-ed25519 AAAA test", tmp_path / "vm.gz",
                                ("/usr/bin/cpio",))
    listed = subprocess.run(["cpio", "-t", "--quiet"], input=gzip.decompress(out.read_bytes()),
                            capture_output=True, check=True).stdout.decode().split()
    assert "etc/nsb/authorized_keys" in listed
    assert "usr/bin/cpio" in listed
    assert any(name.endswith("/libc.so.6") for name in listed)


def test_a_vm_s_initrd_carries_the_guest_files_at_their_paths(tmp_path):
    """A file as it is, a directory with what is in it (an empty one too)."""
    base = tmp_path / "initrd.gz"
    base.write_bytes(b"")
    image = guest_image.GuestImage(tmp_path / "vmlinuz", base, "6.1.0-x-cloud-amd64")
    data = tmp_path / "share"
    (data / "empty").mkdir(parents=True)
    (data / "schema.json").write_text("{}")
    out = guest_image.vm_initrd(image, "ssh-ed25519 AAAA test", tmp_path / "vm.gz",
                                files=("/etc/hostname", str(data)))
    listed = subprocess.run(["cpio", "-t", "--quiet"], input=gzip.decompress(out.read_bytes()),
                            capture_output=True, check=True).stdout.decode().split()
    inside = str(data).lstrip("/")
    assert {"etc/hostname", f"{inside}/schema.json", f"{inside}/empty"} <= set(listed)
