"""HTML tables of the report: summary, comparison, platform, trials, KPIs.

Every value that comes from a results file is escaped here.
"""

from __future__ import annotations

from html import escape

from nsb.report import compare, summary
from nsb.report.formats import comparison_table, diff_cell, number
from nsb.report.loading import TaskResults

SUMMARY_COLUMNS = [  # (summary column, header, digits)
    ("frame_size", "Frame (B)", None), ("throughput_pps", "Throughput (pps)", 0),
    ("throughput_mbps", "Mbps", 1), ("line_rate_pct", "% line rate", 2),
    ("loss_pct", "Loss (%)", 4), ("latency_min_us", "Lat. min (us)", 1),
    ("latency_avg_us", "Lat. avg (us)", 1), ("latency_max_us", "Lat. max (us)", 1),
    ("latency_p50_us", "p50 (us)", 1), ("latency_p90_us", "p90 (us)", 1),
    ("latency_p99_us", "p99 (us)", 1), ("latency_p99_9_us", "p99.9 (us)", 1),
    ("pdv_us", "PDV (us)", 1), ("trials", "Trials", None), ("limited_by", "Limited by", None),
]


def grid(headers: list[str], rows: list[list[tuple[str, str]]], table_id: str = "",
         css: str = "") -> str:
    """A table; cells are (already escaped HTML, css class)."""
    attrs = (f' id="{escape(table_id)}"' if table_id else "") + (
        f' class="{css}"' if css else "")
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(_td(v, c) for v, c in row) + "</tr>" for row in rows)
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _td(value: str, css: str) -> str:
    if css == "rowhead":
        return f'<th scope="row">{value}</th>'
    return f'<td class="{css}">{value}</td>' if css else f"<td>{value}</td>"


def _cell(record: dict, key: str, digits: int | None) -> tuple[str, str]:
    value = record.get(key)
    if digits is None:
        return escape("-" if value is None or value == "" else str(value)), (
            "text" if key in ("limited_by", "warnings") else "")
    return escape(number(value, digits)), ""


def summary_table(rows: list[dict], table_id: str, iteration_column: bool = False,
                  runs_column: bool = False) -> str:
    """The published reports' table: one row per frame size (and iteration)."""
    columns = list(SUMMARY_COLUMNS)
    if any("outer_frame_size" in record for record in rows):  # frames inside a tunnel
        columns[0:1] = [("frame_size", "Inner frame (B)", None),
                        ("outer_frame_size", "Outer frame (B)", None)]
    if any(record.get("latency_at_pps") for record in rows):  # latency not at the answer
        columns.insert(len(columns) - 1, ("latency_at_pps", "Latency measured at (pps)", 0))
    if any(record.get("warnings") for record in rows):  # unconfirmed answers say so
        columns.append(("warnings", "Warnings", None))
    if iteration_column:
        columns.insert(0, ("iteration", "Iteration", None))
    if runs_column:
        columns.insert(1, ("runs", "Runs", None))
        columns = [c for c in columns if c[0] != "trials"]
    cells = []
    for record in rows:
        if iteration_column:
            record = {**record, "iteration": record["iteration"] + 1}
        cells.append([_cell(record, key, digits) for key, _, digits in columns])
    return grid([h for _, h, _ in columns], cells, table_id, "summary numbers")


CHAIN_COLUMNS = [("frame_size", "Frame (B)", None), ("chain", "Chain", None),
                 ("throughput_pps", "Throughput (pps)", 0), ("loss_pct", "Loss (%)", 4),
                 ("latency_avg_us", "Avg (us)", 1), ("latency_p99_us", "p99 (us)", 1),
                 ("failed_first", "Failed first above", None),
                 ("lost_at", "Lost most at", None)]


def chains_table(results: list[dict], table_id: str) -> str:
    """Each service chain's share of each answer, and the chain that failed first above
    it ('' when the results have no chains)."""
    cells = []
    for result in results:
        first = result.get("first_failing_chain") or {}
        for share in result.get("chains") or []:
            latency = share.get("latency") or {}
            failed = (f"yes: lost {first['loss_pct']:.4g} % at {first['rate_pps']:,.0f} pps"
                      if first.get("chain") == share["chain"] else "")
            record = {"frame_size": result["frame_size"], "chain": share["chain"],
                      "throughput_pps": share["throughput_pps"], "loss_pct": share["loss_pct"],
                      "latency_avg_us": latency.get("avg_us"),
                      "latency_p99_us": latency.get("p99_us"), "failed_first": failed,
                      "lost_at": (share.get("lossy_hop") or {}).get("words", "")}
            cells.append([_cell(record, key, digits) for key, _, digits in CHAIN_COLUMNS])
    if not cells:
        return ""
    return grid([h for _, h, _ in CHAIN_COLUMNS], cells, table_id, "summary numbers")


ISOLATION_COLUMNS = [("frame_size", "Frame (B)", None), ("chain", "Chain", None),
                     ("loss_before", "Loss baseline (%)", 4),
                     ("loss_after", "Loss disturbed (%)", 4),
                     ("rx_before", "Rx baseline (pps)", 0), ("rx_after", "Rx disturbed (pps)", 0),
                     ("lat_before", "Avg baseline (us)", 1),
                     ("lat_after", "Avg disturbed (us)", 1), ("note", "", None)]


def isolation_table(results: list[dict], table_id: str) -> str:
    """The isolation profile's rows: each measured chain without and with the disturbance
    ('' when the results have none)."""
    cells = []
    for result in results:
        report = result.get("isolation")
        for row in (report or {}).get("chains", []):
            before, after = row["baseline"], row["disturbed"]
            record = {"frame_size": result["frame_size"], "chain": row["chain"],
                      "loss_before": before["loss_pct"], "loss_after": after["loss_pct"],
                      "rx_before": before["rx_pps"], "rx_after": after["rx_pps"],
                      "lat_before": before["latency_avg_us"],
                      "lat_after": after["latency_avg_us"],
                      "note": f"chain {report['disturbed_chain']} disturbed: "
                              + ("isolated" if report["isolated"] else "NOT isolated")}
            cells.append([_cell(record, key, digits) for key, _, digits in ISOLATION_COLUMNS])
    if not cells:
        return ""
    return grid([h for _, h, _ in ISOLATION_COLUMNS], cells, table_id, "summary numbers")


def comparison_tables(labels: list[str], rows: list[compare.ComparisonRow],
                      table_id: str) -> str:
    """Throughput as the HPE/Intel report prints it, then latency, each with the
    % difference of every later task from the first (green: better)."""
    headers, cells = comparison_table(labels, rows)
    out = [grid(headers, [[(escape(t), v) for t, v in row] for row in cells],
                f"{table_id}-throughput-table", "comparison numbers")]
    lat_headers = ["Frame (B)"]
    metrics = [compare.BY_KEY["latency_avg_us"], compare.BY_KEY["latency_p99_us"]]
    for metric in metrics:
        lat_headers += [f"{label} {metric.label}" for label in labels]
        lat_headers += [f"{label} vs {labels[0]} (%)" for label in labels[1:]]
    lat_cells = []
    for row in rows:
        line = [(str(row.frame_size), "")]
        for metric in metrics:
            line += [(escape(number(v, metric.digits)), "") for v in row.values[metric.key]]
            line += [(escape(text), v) for text, v in (
                diff_cell(row, metric, other, d)
                for other, d in enumerate(row.diff_pct[metric.key], start=1))]
        lat_cells.append(line)
    if any(v is not None for row in rows for m in metrics for v in row.values[m.key]):
        out.append(grid(lat_headers, lat_cells, f"{table_id}-latency-table",
                        "comparison numbers"))
    if apart := compare.not_comparable_lines(labels, rows):
        out.append(f'<ul class="note not-comparable" id="{escape(table_id)}-not-comparable">'
                   + "".join(f"<li>{escape(line)}</li>" for line in apart) + "</ul>")
    return "\n".join(out)


_FACTS = [  # (key, label); NICs and versions follow
    ("hostname", "Host name"), ("cpu_model", "CPU model"), ("architecture", "Architecture"),
    ("sockets", "Sockets"), ("cores_per_socket", "Cores per socket"),
    ("threads_per_core", "Threads per core"), ("cpus", "CPUs"), ("numa_nodes", "NUMA nodes"),
    ("memory_gib", "Memory (GiB)"), ("hugepagesize", "Huge page size (kB)"),
    ("hugepages_total", "Huge pages total"), ("hugepages_free", "Huge pages free"),
    ("isolated_cpus", "Isolated CPUs"), ("os_release", "OS"), ("kernel", "Kernel"),
    ("kernel_cmdline", "Kernel command line"),
]


def _fact_rows(facts: dict) -> dict[str, str]:
    """Fact label -> text, in the order reports list them; unknown keys at the end."""
    flat = {k.replace("__", "_"): v for k, v in facts.items()}
    out = {}
    for key, label in _FACTS:
        if key in flat:
            out[label] = "-" if flat[key] in ("", None) else str(flat[key])
    for name, nic in sorted((facts.get("nics") or {}).items()):
        parts = [f"driver {nic.get('driver') or '-'}", f"PCI {nic.get('pci') or '-'}",
                 f"NUMA {nic.get('numa_node', '-')}", f"MAC {nic.get('mac') or '-'}"]
        if nic.get("firmware"):
            parts.append(f"firmware {nic['firmware']}")
        out[f"NIC {name}"] = ", ".join(parts)
    for name, version in sorted((facts.get("versions") or {}).items()):
        out[f"Version: {name}"] = str(version)
    known = {k for k, _ in _FACTS} | {"nics", "versions"}
    for key, value in sorted(flat.items()):
        if key not in known:
            out[key] = str(value)
    return out


def platform_table(columns: list[tuple[str, dict]], table_id: str) -> str:
    """Facts as rows, one column per node (and task); rows that differ are marked."""
    per_column = [_fact_rows(facts) for _, facts in columns]
    labels = list(dict.fromkeys(label for rows in per_column for label in rows))
    cells = []
    for label in labels:
        values = [rows.get(label, "-") for rows in per_column]
        differs = len(set(values)) > 1
        cells.append([(escape(label), "rowhead")] + [
            (escape(v), "differs" if differs else "") for v in values])
    return grid(["Fact", *(name for name, _ in columns)], cells, table_id, "platform")


def trials_table(trials: list[dict], table_id: str) -> str:
    """Every trial, numbered as results.json numbers them (trial_index, from 0)."""
    headers = ["Trial", "Iter.", "Frame (B)", "Offered (%)", "Offered (pps)", "Sent (pps)",
               "Received (pps)", "Loss (%)", "Verdict", "Interval after (%)", "Reason"]
    cells = []
    for t in trials:
        interval = (f"{number(t.get('search_lower_pct'), 2)} - "
                    f"{number(t.get('search_upper_pct'), 2)}")
        verdict = str(t.get("verdict", ""))
        cells.append([
            (str(t.get("trial_index", "-")), ""), (str(t.get("iteration", 0) + 1), ""),
            (str(t.get("frame_size")), ""), (number(t.get("requested_rate_pct"), 2), ""),
            (number(t.get("requested_rate_pps"), 0), ""), (number(t.get("tx_rate_pps"), 0), ""),
            (number(t.get("rx_rate_pps"), 0), ""), (number(t.get("loss_pct"), 4), ""),
            (escape(verdict), f"verdict {escape(verdict)}"), (interval, ""),
            (escape(str(t.get("reason", ""))), "text")])
    return grid(headers, cells, table_id, "trials numbers")


def process_table(kpis: list[dict], table_id: str) -> str:
    """Per VNF process over the whole scenario: mean CPU, peak RSS, context switches."""
    by_source: dict[str, list[dict]] = {}
    for sample in kpis:
        if sample.get("source", "").startswith("nfvi:"):
            by_source.setdefault(sample["source"], []).append(sample.get("kpis", {}))
    headers = ["Process", "Node", "Samples", "CPU user (%)", "CPU system (%)",
               "Peak RSS (MiB)", "Voluntary ctx sw/s", "Non-voluntary ctx sw/s"]
    nodes = {k["source"]: k.get("node", "") for k in kpis}
    cells = []
    for source, samples in sorted(by_source.items()):
        def mean(key, samples=samples):
            values = [s[key] for s in samples if s.get(key) is not None]
            return sum(values) / len(values) if values else None
        rss = [s["rss_kb"] for s in samples if s.get("rss_kb") is not None]
        cells.append([(escape(source.removeprefix("nfvi:")), "text"),
                      (escape(nodes.get(source, "")), "text"), (str(len(samples)), ""),
                      (number(mean("cpu_user_pct"), 1), ""),
                      (number(mean("cpu_system_pct"), 1), ""),
                      (number(max(rss) / 1024 if rss else None, 1), ""),
                      (number(mean("ctx_switches_voluntary_per_s"), 1), ""),
                      (number(mean("ctx_switches_nonvoluntary_per_s"), 1), "")])
    return grid(headers, cells, table_id, "numbers")


def vnf_counters_table(kpis: list[dict], table_id: str) -> str:
    """The counters each VNF reported after every trial (one row per trial)."""
    samples = [k for k in kpis if not k.get("source", "").startswith(("nfvi:", "node:"))]
    keys = list(dict.fromkeys(key for s in samples for key in s.get("kpis", {})))
    headers = ["VNF", "Trial", *keys]
    cells = [[(escape(s.get("source", "")), "text"),
              (str(s.get("trial_index", "-")), "")]
             + [(number(s.get("kpis", {}).get(key), 0), "") for key in keys]
             for s in samples]
    return grid(headers, cells, table_id, "numbers")


def task_facts(task: TaskResults) -> list[tuple[str, str]]:
    """Label and escaped value of what identifies a run."""
    from datetime import datetime

    def when(stamp):
        if not stamp:
            return "-"
        return datetime.fromtimestamp(float(stamp)).astimezone().isoformat(timespec="seconds")

    info = task.task
    args = ", ".join(f"{k}={v}" for k, v in (info.get("args") or {}).items()) or "-"
    duration = info.get("duration_s")
    return [("Task id", escape(task.id)), ("Task file", escape(str(info.get("file", "-")))),
            ("Arguments", escape(args)), ("Status", escape(task.status)),
            ("Started", when(info.get("started"))), ("Finished", when(info.get("finished"))),
            ("Duration", "-" if duration is None else f"{float(duration):.1f} s"),
            ("Results file", escape(str(task.path)))]


def key_values(pairs: list[tuple[str, str]], css: str = "facts") -> str:
    body = "".join(f"<tr><th>{escape(k)}</th><td>{v}</td></tr>" for k, v in pairs)
    return f'<table class="{css}"><tbody>{body}</tbody></table>'


def summary_rows(task: TaskResults, scenario: str) -> list[dict]:
    return [summary.row(task.id, r) for r in task.results_of(scenario)]


def dut_configuration(plan: dict, table_id: str) -> str:
    """What the published tables print beside their numbers: per scenario each VNF
    and the generator with its node and options (cores, queues, masks, flows,
    configs), as the run's plan recorded them; '' when the plan has none."""
    rows = []
    for scenario in plan.get("scenarios") or []:
        if not isinstance(scenario, dict):
            continue
        parts = [(name, "VNF", vnf) for name, vnf in (scenario.get("vnfs") or {}).items()]
        parts += [(name, "generator", gen)
                  for name, gen in (scenario.get("traffic_generator") or {}).items()]
        for name, role, described in parts:
            if not isinstance(described, dict):
                continue
            options = described.get("options") or {}
            shown = "; ".join(f"{key}={_short(value)}" for key, value in sorted(options.items())
                              if not isinstance(value, str) or "\n" not in value)
            rows.append("<tr>" + "".join(f"<td>{escape(str(cell))}</td>" for cell in (
                scenario.get("name", ""), name, role, described.get("type", ""),
                described.get("node", ""), shown)) + "</tr>")
    if not rows:
        return ""
    head = "".join(f"<th>{h}</th>" for h in ("Scenario", "Name", "Role", "Type", "Node",
                                              "Options"))
    return (f'<table id="{table_id}" class="dut"><thead><tr>{head}</tr></thead><tbody>'
            + "".join(rows) + "</tbody></table>")


def _short(value) -> str:
    text = str(value)
    return text if len(text) <= 120 else text[:117] + "..."
