"""TRex's DPDK keeps its hugepages as files in a hugetlbfs, named after its file
prefix; a TRex stopped by SIGKILL leaves them, and they stay taken until removed.
The server's stop removes its own, in every hugetlbfs mounted, and no other's."""

from __future__ import annotations

import subprocess

from nsb.vnfs.trex.server import REMOVE_PAGE_FILES
from tests.conftest import requires_root


def test_stop_removes_the_page_files_of_its_prefix_only(tmp_path):
    requires_root()
    mine, other = tmp_path / "a", tmp_path / "b"
    mine.mkdir(), other.mkdir()
    # two hugetlbfs mounts in a mount namespace of the test's own; files made, no pages
    script = (f"mount -t hugetlbfs nodev {mine} && mount -t hugetlbfs nodev {other} && "
              f"touch {mine}/nsb-t1-tg__0map_0 {mine}/nsb-t1-tg__0map_17 "
              f"{other}/nsb-t1-tg__0map_3 {mine}/nsb-t2-tg__0map_0 {mine}/rtemap_0 && "
              f'sh -c "$1" sh nsb-t1-tg__0 && ls -1 {mine} {other}')
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                           script, "sh", REMOVE_PAGE_FILES],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    left = [line for line in done.stdout.splitlines() if line and not line.endswith(":")]
    assert left == ["nsb-t2-tg__0map_0", "rtemap_0"]
