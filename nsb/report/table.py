"""The summary table the NFVi performance reports print, one row per frame size."""

from __future__ import annotations

from nsb import frames
from nsb.report import (
    mac_table,
    neighbour_table,
    overload_table,
    repeatability,
    reset_table,
    stateful_table,
)
from nsb.report.summary import spread_pct

HEADERS = ["Frame (B)", "Throughput (pps)", "Mbps", "% line rate", "Loss at NDR (%)",
           "Latency min / avg / max (us)", "p50 / p99 / p99.9 (us)", "Limited by"]


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def rows(results: list[dict]) -> list[list[str]]:
    """Result records (see outputs.records.result_record) as table cells."""
    out = []
    for r in results:
        lat = r.get("latency") or {}
        out.append([
            str(r["frame_size"]),
            f"{r['throughput_pps']:,.0f}",
            _num(r["throughput_mbps"]),
            _num(r["line_rate_pct"], 2),
            f"{r['loss_pct']:.4f}",
            " / ".join(_num(lat.get(k)) for k in ("min_us", "avg_us", "max_us")) if lat else "-",
            " / ".join(_num(lat.get(k)) for k in ("p50_us", "p99_us", "p99_9_us")) if lat else "-",
            r["limited_by"] + (" (unconfirmed)" if r.get("warnings") else
                               " (latency unconfirmed)" if r.get("latency_warnings") else ""),
        ])
        out += _chain_rows(r)
    return out


def _chain_rows(r: dict) -> list[list[str]]:
    """Under a result of service chains, each chain's share: its rate, the % of its own
    ports' line rate (the chains have as many ports each), its loss and latency."""
    shares = [] if r.get("isolation") else r.get("chains") or []  # isolation: its lines
    total = float(r["throughput_pps"]) or 1.0
    out = []
    for share in shares:
        lat = share.get("latency") or {}
        pps = float(share["throughput_pps"])
        out.append([
            f"chain {share['chain']}", f"{pps:,.0f}",
            _num(r["throughput_mbps"] * pps / total),
            _num(r["line_rate_pct"] * pps / total * len(shares), 2),
            f"{share['loss_pct']:.4f}",
            " / ".join(_num(lat.get(k)) for k in ("min_us", "avg_us", "max_us")) if lat else "-",
            " / ".join(_num(lat.get(k)) for k in ("p50_us", "p99_us", "p99_9_us")) if lat else "-",
            ""])
    return out


def warning_lines(results: list[dict]) -> list[str]:
    """What the answers cannot vouch for, a line each (printed under the table)."""
    lines = [f"! {frames.shown(r['frame_size'])}: {warning}"
             for r in results for warning in [*(r.get("warnings") or []),
                                              *(r.get("latency_warnings") or [])]]
    for r in results:
        first = r.get("first_failing_chain")
        if first:
            hop = next((c.get("lossy_hop") for c in r.get("chains") or []
                        if c["chain"] == first["chain"]), None)
            lines.append(f"{frames.shown(r['frame_size'])}: chain {first['chain']} failed "
                         f"first (lost {first['loss_pct']:.4g} % at "
                         f"{first['rate_pps']:,.0f} pps; chains over the tolerance there: "
                         f"{', '.join(map(str, first['chains_failed']))})"
                         + (f"; most lost at {hop['words']}" if hop else "")
                         + (f"; TRex kept {first['frames_kept_back']:,} frames back there, "
                            "so which chains lost is partly inferred"
                            if first.get("frames_kept_back") else ""))
        lines += isolation_lines(r)
        if r.get("mrr"):
            m = r["mrr"]
            lines.append(f"{frames.shown(r['frame_size'])}: MRR of {m['trials']} trial(s) of "
                         f"{m['duration_s']:g} s at {m['rate_pct']:g} % of line rate: mean "
                         f"{m['mean_pps']:,.0f} pps, stdev {m['stdev_pps']:,.0f} pps")
    return lines


def isolation_lines(r: dict) -> list[str]:
    """An isolation result in words: the chain disturbed, then per measured chain its
    loss, receive rate and latency without and with the disturbance."""
    report = r.get("isolation")
    if not report:
        return []
    how = ", ".join(part for part in (
        f"sent {report['disturbed_sent_pps']:,.0f} pps, lost "
        f"{report.get('disturbed_loss_pct', 0):.4g} %" if report.get("load_pct") else "",
        f"neighbour: {report['neighbour']}" if report.get("neighbour") else "") if part)
    verdict = "isolated" if report["isolated"] else "NOT isolated"
    lines = [f"{frames.shown(r['frame_size'])}: chain {report['disturbed_chain']} disturbed "
             f"({how}): the other chains are {verdict}"]
    for row in report["chains"]:
        before, after = row["baseline"], row["disturbed"]
        lines.append(
            f"  chain {row['chain']}: loss {before['loss_pct']:.4g} -> "
            f"{after['loss_pct']:.4g} %, rx {before['rx_pps']:,.0f} -> "
            f"{after['rx_pps']:,.0f} pps, latency avg {_num(before['latency_avg_us'])} -> "
            f"{_num(after['latency_avg_us'])} us")
    if not report["baseline_clean"]:
        lines.append("  ! the chains lost frames without the disturbance too: lower rate_pct")
    return lines


# at narrower terminals the table is split in two, so no value is cut or wrapped
WIDE_COLUMNS = 132
_NARROW = [("Frame", "Throughput (pps)", "Mbps", "% line", "Loss %", "Limited by"),
           ("Frame", "Latency min / avg / max (us)", "p50 / p99 / p99.9 (us)")]
_NARROW_CELLS = [(0, 1, 2, 3, 4, 7), (0, 5, 6)]


# answers that are no throughput, each in a table of its own: (module, its predicate)
OWN_TABLES = ((reset_table, reset_table.is_reset),
              (neighbour_table, neighbour_table.is_neighbour),
              (mac_table, mac_table.is_mac_learning),
              (overload_table, overload_table.is_overload))


def render(results: list[dict], title: str = "") -> object:
    """A rich renderable (printed by the CLI): one table, or two where the terminal
    is narrower than WIDE_COLUMNS; stateful answers in a table of their own."""
    stateful = [r for r in results if stateful_table.is_stateful(r)]
    others = [(table, [r for r in results if mine(r)]) for table, mine in OWN_TABLES]
    frames_only = [r for r in results if not stateful_table.is_stateful(r)
                   and not any(mine(r) for _, mine in OWN_TABLES)]
    return _Summary(rows(frames_only), title,
                    warning_lines(frames_only) + warning_lines(stateful)
                    + stateful_table.lines(stateful), stateful_table.rows(stateful),
                    [(table.HEADERS, table.rows(mine)) for table, mine in others])


class _Summary:
    def __init__(self, cells: list[list[str]], title: str, warnings: list[str],
                 stateful: list[list[str]] | None = None,
                 others: list[tuple[list[str], list[list[str]]]] | None = None):
        self.cells, self.title, self.warnings = cells, title, warnings
        self.stateful, self.others = stateful or [], others or []  # (headers, rows)

    def __rich_console__(self, console, options):
        from rich.text import Text

        if self.stateful:
            yield _table(stateful_table.HEADERS, self.stateful, self.title)
        for headers, cells in self.others:
            if cells:
                yield _table(headers, cells, self.title)
        if self.cells and options.max_width >= WIDE_COLUMNS:
            yield _table(HEADERS, self.cells, self.title)
        elif self.cells:
            for index, (headers, picks) in enumerate(zip(_NARROW, _NARROW_CELLS,
                                                         strict=True)):
                yield _table(headers, [[row[i] for i in picks] for row in self.cells],
                             self.title if index == 0 else "")
        for line in self.warnings:
            yield Text(line, style="yellow")


def _table(headers, cells: list[list[str]], title: str):
    from rich.table import Table

    table = Table(title=title or None, show_lines=False)
    for index, header in enumerate(headers):
        last = index == len(headers) - 1 and header == "Limited by"
        table.add_column(header, justify="left" if last else "right", no_wrap=True)
    for row in cells:
        table.add_row(*row)
    return table


MEAN_HEADERS = ["Frame", "Runs", "Mean (pps)", "Spread %", "Min (pps)", "Max (pps)",
                "% line"]  # narrow enough for 80 columns


def mean_rows(results: list[dict]) -> list[list[str]]:
    """Per frame size over the iterations: mean, spread (sample standard deviation in %
    of the mean), lowest and highest throughput, mean % of line rate."""
    by_frame: dict[int, list[dict]] = {}
    for record in results:
        by_frame.setdefault(record["frame_size"], []).append(record)
    out = []
    for frame, group in sorted(by_frame.items(), key=lambda item: frames.sort_key(item[0])):
        rates = [float(r["throughput_pps"]) for r in group]
        mean = sum(rates) / len(rates)
        line = sum(float(r["line_rate_pct"]) for r in group) / len(group)
        out.append([str(frame), str(len(group)), f"{mean:,.0f}", _num(spread_pct(rates), 2),
                    f"{min(rates):,.0f}", f"{max(rates):,.0f}", _num(line, 2)])
    return out


def render_means(results: list[dict], title: str = "") -> object:
    """The mean over iterations per frame size, as the published reports print it, and
    a line per frame size on how the answer repeats (its median and the farthest run)."""
    return _Means(_table(MEAN_HEADERS, mean_rows(results), title),
                  [r.line() for r in repeatability.per_frame(results)])


class _Means:
    def __init__(self, table, lines: list[str]):
        self.table, self.lines = table, lines

    def __rich_console__(self, console, options):
        from rich.text import Text

        yield self.table
        for line in self.lines:
            yield Text(line)

