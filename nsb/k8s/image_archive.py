"""A one-layer container image as a docker-archive tar, written from host files.

Where there is no image registry, containerd imports such a tar (``ctr -n k8s.io
images import``): nsb packs its CNF images this way. Standard library only, so the
cluster's own scripts can write the sandbox (pause) image without nsb installed:

    python3 -m nsb.k8s.image_archive OUT.tar NAME:TAG --file HOST:PATH... --link TARGET:PATH...
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import tarfile
from dataclasses import dataclass, field

from nsb import host_libraries  # standard library only, like this module

_ETC = {"etc/passwd": b"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n",
        "etc/group": b"root:x:0:\nnobody:x:65534:\n"}
_DIRS = {"tmp", "etc", "proc", "sys", "dev", "run", "var", "var/run", "root"}
MTIME = 1767225600  # 2026-01-01: the same files give the same image digest


@dataclass
class ImageFiles:
    """What goes into the image: paths in the image -> host files, symlinks, data."""

    files: dict[str, str] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)  # path -> target
    data: dict[str, bytes] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=set)

    def add_file(self, host: str, path: str | None = None) -> None:
        self.files[canonical(path or host).lstrip("/")] = os.path.realpath(host)

    def add_program(self, host: str, path: str | None = None) -> None:
        """An executable and every shared library its loader resolves (``ldd``), each
        at the path the loader asks for."""
        self.add_file(host, path)
        for lib in host_libraries.of(host):
            self.add_library(lib)

    def add_library(self, lib: str) -> None:
        """A library at the path the loader asks for; a symlink stays a symlink to the one
        real file (two copies would be two libraries to the loader)."""
        lib = canonical(lib)
        while os.path.islink(lib) and lib.lstrip("/") not in self.links:
            target = os.readlink(lib)
            self.links[lib.lstrip("/")] = target
            lib = canonical(os.path.join(os.path.dirname(lib), target))
        if not os.path.islink(lib):
            self.files.setdefault(lib.lstrip("/"), os.path.realpath(lib))

    def merged_usr(self) -> None:
        """/bin, /sbin, /lib, /lib64 as this machine has them (links into /usr): each
        file is in the image once, at its canonical path."""
        for top in ("bin", "sbin", "lib", "lib64"):
            if os.path.islink(f"/{top}"):
                self.links[top] = os.readlink(f"/{top}")

    def add_tree(self, host_dir: str, path: str | None = None,
                 skip: tuple[str, ...] = ()) -> None:
        """A directory's files (symlinks as they are), leaving out names in ``skip``."""
        base = (path or host_dir).strip("/")
        for root, dirnames, filenames in os.walk(host_dir):
            dirnames[:] = [d for d in dirnames if d not in skip]
            rel = os.path.relpath(root, host_dir)
            inside = base if rel == "." else f"{base}/{rel}"
            self.dirs.add(inside)
            for name in filenames:
                if name in skip or name.endswith(".pyc"):
                    continue
                host = os.path.join(root, name)
                if os.path.islink(host):
                    self.links[f"{inside}/{name}"] = os.readlink(host)
                else:
                    self.files[f"{inside}/{name}"] = host


def canonical(path: str) -> str:
    """``path`` with its directory resolved (/lib/x.so -> /usr/lib/x.so where /lib links
    to /usr/lib): the loader must not find one library under two names."""
    return os.path.join(os.path.realpath(os.path.dirname(path) or "/"), os.path.basename(path))


def _parents(paths) -> set[str]:
    dirs = set()
    for path in paths:
        parts = path.split("/")[:-1]
        dirs.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    return dirs


def layer(image: ImageFiles) -> bytes:
    """The layer's tar: directories, files, symlinks, a minimal /etc."""
    buf = io.BytesIO()
    entries = set(image.files) | set(image.links) | set(image.data)
    dirs = (_DIRS | image.dirs | _parents(entries)) - set(image.links) - {""}
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(dirs):
            info = tarfile.TarInfo(name)
            info.type, info.mtime = tarfile.DIRTYPE, MTIME
            info.mode = 0o1777 if name == "tmp" else 0o755
            tar.addfile(info)
        for name, host in sorted(image.files.items()):
            info = tarfile.TarInfo(name)
            stat = os.stat(host)
            info.size, info.mode, info.mtime = stat.st_size, stat.st_mode & 0o7777, MTIME
            with open(host, "rb") as handle:
                tar.addfile(info, handle)
        for name, target in sorted(image.links.items()):
            info = tarfile.TarInfo(name)
            info.type, info.linkname, info.mtime = tarfile.SYMTYPE, target, MTIME
            tar.addfile(info)
        extra = {**{k: v for k, v in _ETC.items() if k not in entries}, **image.data}
        for name, data in sorted(extra.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o755 if name.endswith(".sh") \
                else 0o644, MTIME
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def full_reference(ref: str) -> str:
    """The name containerd stores ``ref`` under (docker.io/library/ for short names)."""
    name, _, tag = ref.partition(":")
    tag = tag or "latest"
    first = name.split("/")[0]
    if "/" not in name:
        name = f"docker.io/library/{name}"
    elif "." not in first and ":" not in first and first != "localhost":
        name = f"docker.io/{name}"
    return f"{name}:{tag}"


def write_archive(out: str, ref: str, image: ImageFiles, cmd: list[str] | None = None) -> str:
    """Write the docker-archive; returns the image's config digest (its ID)."""
    data = layer(image)
    layer_digest = hashlib.sha256(data).hexdigest()
    config = {"architecture": "amd64", "os": "linux", "created": "2026-01-01T00:00:00Z",
              "config": {"Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:"
                                 "/sbin:/bin"], "WorkingDir": "/"},
              "rootfs": {"type": "layers", "diff_ids": [f"sha256:{layer_digest}"]},
              "history": [{"created_by": "nsb"}]}
    if cmd:
        config["config"]["Cmd"] = cmd
    config_bytes = json.dumps(config, separators=(",", ":"), sort_keys=True).encode()
    config_digest = hashlib.sha256(config_bytes).hexdigest()
    manifest = [{"Config": f"{config_digest}.json", "RepoTags": [full_reference(ref)],
                 "Layers": [f"{layer_digest}/layer.tar"]}]
    with tarfile.open(out, "w") as tar:
        for name, content in ((f"{layer_digest}/layer.tar", data),
                              (f"{config_digest}.json", config_bytes),
                              ("manifest.json", json.dumps(manifest).encode())):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(content), 0o644, MTIME
            tar.addfile(info, io.BytesIO(content))
    return f"sha256:{config_digest}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("ref")
    parser.add_argument("--file", action="append", default=[], help="HOST:PATH")
    parser.add_argument("--program", action="append", default=[], help="HOST:PATH (+ libraries)")
    parser.add_argument("--link", action="append", default=[], help="TARGET:PATH")
    parser.add_argument("--cmd", help="the image's command, as JSON")
    args = parser.parse_args(argv)
    image = ImageFiles()
    for spec in args.file:
        image.add_file(*spec.split(":", 1))
    for spec in args.program:
        image.add_program(*spec.split(":", 1))
    for spec in args.link:
        target, path = spec.split(":", 1)
        image.links[path.lstrip("/")] = target
    digest = write_archive(args.out, args.ref, image, json.loads(args.cmd) if args.cmd else None)
    print(f"{args.out}: {full_reference(args.ref)} {digest}")


if __name__ == "__main__":
    main()
