"""The terminal as users see it: the summary at 80 columns in a real pty, and log
lines printed above the live progress line instead of into it."""

import fcntl
import io
import logging
import os
import pty
import re
import struct
import subprocess
import sys
import termios

from rich.console import Console

from nsb.cli.console_log import setup_logging
from nsb.progress import Progress
from tests.unit.test_history import _run

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _in_pty(argv: list[str], columns: int) -> str:
    """Run ``argv`` on a pseudo-terminal of ``columns`` x 50; its output without colours."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen(argv, stdin=follower, stdout=follower, stderr=follower, env=env,
                            close_fds=True)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the child closed the pty
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(leader)
    return ANSI.sub("", b"".join(chunks).decode(errors="replace")).replace("\r", "")


def test_summary_fits_80_columns_with_every_value_uncut(tmp_path):
    task_id = _run(tmp_path, "gen9", 100_000.0, 1_795_000_000)
    doc_results = __import__("json").loads(
        (tmp_path / task_id / "results.json").read_text())["results"]
    shown = _in_pty([sys.executable, "-m", "nsb", "task", "show", task_id, "--results-dir",
                     str(tmp_path)], columns=80)
    table_lines = [line for line in shown.splitlines() if set(line) & set("┃│┏┡└")]
    assert len(table_lines) >= 8 and max(len(line) for line in table_lines) <= 80, shown
    for result in doc_results:
        lat = result["latency"]
        for value in (f"{result['throughput_pps']:,.0f}", f"{result['throughput_mbps']:,.1f}",
                      f"{result['line_rate_pct']:,.2f}",
                      f"{lat['min_us']:,.1f} / {lat['avg_us']:,.1f} / {lat['max_us']:,.1f}"):
            assert value in shown, (value, shown)
    assert "…" not in shown


def test_log_lines_go_above_the_live_line(monkeypatch):
    stream = io.StringIO()
    console = Console(file=stream, force_terminal=True, width=120)
    setup_logging(False)
    with Progress(console):
        logging.getLogger("nsb.test").warning("the lab is on fire")
    text = ANSI.sub("", stream.getvalue()).replace("\r", "")
    lines = text.splitlines()
    assert "WARNING nsb.test: the lab is on fire" in lines, text
