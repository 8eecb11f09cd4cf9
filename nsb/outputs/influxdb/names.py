"""The InfluxDB schema the dashboards query, in one place.

These names must match what the ``influxdb`` output writes (nsb/outputs/influxdb/output.py,
docs/reference/influxdb.md). Each trial, result and KPI sample is one point:

- ``nsb_task``: tags task_id, test_case, status: one point when a task starts and
  one when it ends (the list of task ids).
- ``nsb_trial``: tags task_id, scenario, test_case, frame_size, verdict; fields the
  offered (requested) rate, tx/rx rates, loss, the search interval and the latency.
- ``nsb_result``: tags task_id, scenario, test_case, frame_size, limited_by; fields
  throughput (pps, Mbps, % line rate), loss, the latency statistics and
  warning_count (warnings: the answer's warnings in words); a stateful answer's
  stateful_kind, cps, sessions, dut_sessions... (nsb.outputs.influxdb.session_points).
- ``nsb_kpi``: tags task_id, scenario, source, node, kind; fields the KPI names, e.g.
  cpu_user_pct for ``source=nfvi:<vnf>``, cpuN_util_pct for ``source=node:<name>`` and
  the VNF's own counters for ``kind=vnf`` (testpmd's portN_ipackets, PROX's
  packets_in, OVS's PMD statistics).
- ``nsb_trial_port``: tags task_id, scenario, port, direction; per generator port
  and trial the frames counted and their rate.
- ``nsb_trial_sessions``: tags as nsb_trial's plus program; per stateful trial its
  connections: intended, attempted, established, failed by reason, the rates, the
  DUT's own count (nsb.stateful_kpis.trial_fields).
- ``nsb_trend``: written by ``nsb report trend --annotate``: per test and counted run
  (tags test_case, task_args, scenario, profile, frame_size, chain) the run's group
  average and whether a regression (change -1) or a progression (change 1) began there,
  at the run's result time; the trend dashboard's annotations select change <> 0.
- ``nsb_platform``: tags task_id, node, hostname, kernel, os_release, cpu_model,
  isolated_cpus and one ``<tool>_version`` per version found; numeric facts as fields.
"""

from __future__ import annotations

from nsb.events import Verdict

TASK = "nsb_task"
PLATFORM = "nsb_platform"
TRIAL = "nsb_trial"
TRIAL_PORT = "nsb_trial_port"
RESULT = "nsb_result"
KPI = "nsb_kpi"
# a soak's intervals (nsb_soak: tags as nsb_trial's plus trial_index; fields the
# interval's counts, loss and latency) and PLRsearch's estimate after each trial (nsb_plr)
SOAK = "nsb_soak"
PLR = "nsb_plr"
# where a trial's frames died: per loss along a direction's path (tags path, hop, kind;
# field lost_packets), and per direction (hop "path", kind "total") its totals
HOP = "nsb_hop"
# service chains (nsb.chains): each chain's share of a trial and of a result (tag chain)
TRIAL_CHAIN = "nsb_trial_chain"
RESULT_CHAIN = "nsb_result_chain"
# a stateful trial's connections (nsb.sessions): counts, failed by reason, rates
TRIAL_SESSIONS = "nsb_trial_sessions"
# the trend's classification of each run (nsb.report.trend_influx), for annotations
TREND = "nsb_trend"
# what the influxdb output writes, and with nsb report trend --annotate's
MEASUREMENTS = (TASK, PLATFORM, TRIAL, TRIAL_PORT, RESULT, KPI, SOAK, PLR, HOP, TRIAL_CHAIN,
                RESULT_CHAIN, TRIAL_SESSIONS)
ALL_MEASUREMENTS = (*MEASUREMENTS, TREND)

# tags
TASK_ID = "task_id"
SCENARIO = "scenario"
TEST_CASE = "test_case"
TASK_ARGS = "task_args"  # the task's args as compact JSON (task_args_tag), when it has any
PROFILE = "profile"
FRAME_SIZE = "frame_size"
VERDICT = "verdict"
LIMITED_BY = "limited_by"
SOURCE = "source"
NODE = "node"
KIND = "kind"  # of a KPI source: vnf, nfvi or node
PORT = "port"
DIRECTION = "direction"
PATH = "path"  # of nsb_hop: a direction, "tg:xe0 -> tg:xe1"
HOP_TAG = "hop"
CHAIN = "chain"
DROP_KIND = "kind"  # of a loss: imissed, link, forwarding, ... (nsb.port_counts.WORDS)
PROGRAM = "program"  # of nsb_trial_sessions: what each connection does (tcp_cps, a file)

# nsb_trial fields
REQUESTED_RATE_PPS = "requested_rate_pps"
TX_RATE_PPS = "tx_rate_pps"
RX_RATE_PPS = "rx_rate_pps"
LOSS_PCT = "loss_pct"
SEARCH_LOWER_PCT = "search_lower_pct"
SEARCH_UPPER_PCT = "search_upper_pct"
REQUESTED_RATE_PCT = "requested_rate_pct"

# nsb_result fields (and LOSS_PCT)
THROUGHPUT_PPS = "throughput_pps"
THROUGHPUT_MBPS = "throughput_mbps"
LINE_RATE_PCT = "line_rate_pct"
FRAME_BYTES = "frame_bytes"  # the mean frame size: orders rows, IMIX among sizes
WARNING_COUNT = "warning_count"  # what the answer cannot vouch for: 0 when confirmed
WARNINGS = "warnings"  # the warnings in words, "; " between them (only when there are)
RECEIVE_RATES = "mrr_receive_rates_pps"  # MRR's trial receive rates, "," between them
# a stateful answer's (nsb.stateful_kpis): its kind (a string field: cps,
# concurrent_sessions, stateful_throughput), the connection rate offered, asked and
# established, the sessions held, the DUT's own count and the generator's ceiling
STATEFUL_KIND = "stateful_kind"
CPS = "cps"
CPS_ASKED = "cps_asked"
ESTABLISHED_CPS = "established_cps"
SESSIONS = "sessions"
DUT_SESSIONS = "dut_sessions"
GENERATOR_CEILING_CPS = "generator_ceiling_cps"
# the answers of tests under change, as the result's extra is flattened (``reset`` and
# its ``reset_time_s``: reset_reset_time_s): reset and blocked time, overload recovery,
# a noisy neighbour's drop reported, a switch's MAC capacity and learning rate
RESET_TIME_S = "reset_reset_time_s"
BLOCKED_TIME_S = "reset_blocked_time_s"
OVERLOAD_RECOVERY_S = "overload_overload_recovery_s"
NEIGHBOUR_DROP_PCT = "neighbour_reported_drop_pct"
MAC_CAPACITY = "mac_learning_mac_capacity"
MAC_LEARNING_RATE_PPS = "mac_learning_learning_rate_pps"

# nsb_trial_sessions fields (and CPS, CPS_ASKED, DUT_SESSIONS, LOSS_PCT, DURATION_S)
INTENDED = "intended"
ATTEMPTED = "attempted"
ESTABLISHED = "established"
NEVER_ATTEMPTED = "never_attempted"
FAILED_TOTAL = "failed_total"
FAILED_FIELD_REGEX = "^failed_"  # failed_total and one failed_<reason> per reason
RETRANSMITTED = "retransmitted"
OFFERED_CPS = "offered_cps"

# nsb_soak fields (and LOSS_PCT, TX/RX_RATE_PPS, REQUESTED_RATE_PPS, the latency)
INTERVAL = "interval"
START_S = "start_s"
END_S = "end_s"
LOST_PACKETS = "lost_packets"
UNACCOUNTED = "unaccounted_packets"
# nsb_plr fields (and LOST_PACKETS)
ESTIMATE_PPS = "estimate_pps"
STDEV_PPS = "stdev_pps"
LOAD_PPS = "load_pps"
DURATION_S = "duration_s"
TARGET_LOSS_RATIO = "target_loss_ratio"

# nsb_trend fields (a stateful test's: group_avg_cps or group_avg_sessions, and its
# answer under CPS or SESSIONS, in place of group_avg_pps and throughput_pps)
CHANGE = "change"  # -1 a regression began at this run, 1 a progression, 0 neither
CHANGE_PCT = "change_pct"  # the new group's average against the group before, at a change
GROUP_AVG_PPS = "group_avg_pps"  # the average of the run's group
GROUP_AVG_CPS = "group_avg_cps"  # a cps test's
GROUP_AVG_SESSIONS = "group_avg_sessions"  # a concurrent_sessions test's
TREND_TEXT = "text"  # the annotation's words (a string field)

# verdict tag values (nsb.events.TrialDone.verdict)
VERDICT_PASS = Verdict.PASS.value
VERDICT_FAIL = Verdict.FAIL.value

# KPI sources: "nfvi:<vnf name>" for a VNF process, "node:<node name>" for a node
NFVI_SOURCE_PREFIX = "nfvi:"
NODE_SOURCE_PREFIX = "node:"

# nsb_kpi fields of a VNF process (nsb.nodes.nfvi.process_kpis)
CPU_USER_PCT = "cpu_user_pct"
CPU_SYSTEM_PCT = "cpu_system_pct"
RSS_KB = "rss_kb"
CTX_VOLUNTARY_PER_S = "ctx_switches_voluntary_per_s"
CTX_NONVOLUNTARY_PER_S = "ctx_switches_nonvoluntary_per_s"
# nsb_kpi fields of a node (nsb.nodes.nfvi.core_kpis): cpu0_util_pct, cpu1_util_pct, ...
CORE_UTIL_FIELD_REGEX = "^cpu[0-9]+_util_pct$"
# nsb_trial_port fields
PORT_RATE_PPS = "rate_pps"
# nsb_kpi fields of VNFs (kind=vnf): packet counters since the VNF started
VNF_PACKET_FIELD_REGEX = "^(port[0-9]+_[io]packets|packets_in|packets_fwd|packets_dropped)$"
OVS_CYCLES_PER_PACKET = "cycles_per_packet"
OVS_CACHE_FIELDS = ("emc_hits", "smc_hits", "megaflow_hits", "upcalls")
OVS_DATAPATH_FLOWS = "datapath_flows"
# nsb_platform fields
NICS = "nics"  # how many NICs the node has
PLATFORM_FIELDS = ("cpus", "sockets", "numa_nodes", "memory_gib", "hugepages_total", NICS)


def latency_field(stat: str) -> str:
    """A latency statistic's field: ``avg`` -> latency_avg_us, ``p99.9`` -> latency_p99_9_us
    (one name per KPI: nsb.kpi_names)."""
    from nsb import kpi_names

    return f"latency_{kpi_names.stat(stat)}_us"


def task_args_tag(args) -> str:
    """A task's args as one tag value: compact JSON with sorted keys (trends tell runs
    with other args apart by it, in InfluxDB as in the results directory)."""
    import json

    return json.dumps(args, sort_keys=True, separators=(",", ":"), default=str)
