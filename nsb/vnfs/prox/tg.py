"""PROX as the traffic generator: ``mode=gen`` tasks send, ``mode=lat`` tasks receive.

PROX answers every stats command from a snapshot that its master loop refreshes
periodically (every second by default; nsb starts it with ``-r 0.1``), and the
snapshot's ``last_tsc`` says when it was taken. So a trial trusts a reading's
TSC, never the moment it was read:

- between trials the gen tasks run at speed 0 and the lat tasks keep running, so
  a trial is one round trip to start (reset stats, frame size, speed) and one to
  stop (speed 0): no blocking start/stop, no frames parked in rings while a lat
  task is stopped;
- the send rate is measured between two snapshots both taken while sending
  (TSC-timed); when the refresh period is too long for two, it is the count over
  the time between the two confirmed commands;
- the final counts come from a snapshot taken after the generator stopped (its
  TSC is newer than that of a reading made after the stop), read again until the
  lat tasks' count stops moving from one snapshot to the next; frames still
  arriving when ``drain_timeout_s`` ran out are stated as ``in_flight_packets``.

Loss compares every frame the gen tasks sent with every frame the lat tasks
received.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from dataclasses import dataclass, replace

from nsb import frames, units
from nsb.errors import RunError, TaskError
from nsb.frames import Frame, FrameMix
from nsb.trial import Trial, TrialResult
from nsb.vnfs.base import TrafficGen
from nsb.vnfs.prox import gen_cores, port_pairs
from nsb.vnfs.prox import latency as prox_latency
from nsb.vnfs.prox.vnf import PROX_OPTIONS, ProxVnf

LOG = logging.getLogger(__name__)

BYTES_PER_PCT = 12_500_000  # PROX's speed unit: 1% of 10 Gbit/s, in bytes per second
POLL_S = 0.05  # between readings while waiting for PROX's next snapshot


def speed_pct(rate_pps: float, frame_size: Frame) -> float:
    """PROX ``speed`` for ``rate_pps`` frames of ``frame_size`` (with FCS; a mix by its
    mean size) per second."""
    size = max(frames.avg_size(frame_size), 64)
    return rate_pps * (size + units.WIRE_OVERHEAD_B) / BYTES_PER_PCT


@dataclass(frozen=True)
class Reading:
    """The gen and lat tasks' counters, each from PROX's snapshot of that task.

    Each task keeps its own (count, tsc) pair: a refresh can fall between two
    queries of one reading, so each task's rate is timed by its own snapshot.
    """

    hz: int
    gen_counts: tuple[tuple[int, int], ...]  # (tx, tsc) per gen task
    lat_counts: tuple[tuple[int, int], ...]  # (rx, tsc) per lat task

    @property
    def tsc(self) -> int:
        """The oldest of the tasks' snapshots."""
        return min(tsc for _, tsc in self.gen_counts + self.lat_counts)

    @property
    def tx(self) -> int:
        return sum(count for count, _ in self.gen_counts)

    @property
    def rx(self) -> int:
        return sum(count for count, _ in self.lat_counts)

    @property
    def rx_per_lat_task(self) -> tuple[int, ...]:
        return tuple(count for count, _ in self.lat_counts)

    def newer_than(self, other: Reading) -> bool:
        """Every task's snapshot here was taken after that task's in ``other``."""
        return all(a > b for (_, a), (_, b) in zip(self.gen_counts + self.lat_counts,
                                                   other.gen_counts + other.lat_counts,
                                                   strict=True))


class ProxTrafficGen(ProxVnf, TrafficGen):
    """PROX generator: RFC 2544 trials over its gen/lat tasks, TSC-timed, with latency."""

    SENDS_FRAME_MIX = True  # PROX's imix command
    # PROX's generator tasks send by time and rate (speed, start/stop), never a set count
    no_burst_reason = "sends by time and rate and cannot stop after an exact count of frames"

    OPTIONS_SCHEMA = {
        "type": "object",
        "required": ["prox_config"],
        "additionalProperties": False,
        "properties": {
            **PROX_OPTIONS,
            "drain_timeout_s": {"description": "two snapshot periods at PROX's default refresh (1 "
                                               "s), with room to spare",
                                "type": "number", "minimum": 0, "default": 3.0},
            "drain_quiet_s": {"description": "how long the received count must rest before a trial"
                                             " is over (0: one unchanged snapshot); a VM under TCG"
                                             " delivers what it holds with pauses",
                              "type": "number", "minimum": 0, "default": 0.0},
            "generator_tolerance_pct": {"type": "number", "minimum": 0, "maximum": 100,
                                        "default": 5.0},
            "port_pairs": {"description": "its ports in pairs [tx, rx] (interface names): each "
                                          "pair's frames sent by the gen tasks of its tx port "
                                          "and counted by the lat tasks of its rx port, at its "
                                          "own rate; what service chains are made of",
                           "type": "array", "minItems": 1,
                           "items": {"type": "array", "minItems": 2, "maxItems": 2,
                                     "items": {"type": "string", "minLength": 1}}},
        },
    }

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        gen_cores.check_one_gen_task_per_core(self.config)
        tasks = self.config.tasks()
        self.gen_tasks = [t for t in tasks if t.mode == "gen"]
        self.lat_tasks = [t for t in tasks if t.mode == "lat"]
        source = self.config.source
        if not self.gen_tasks:
            raise TaskError("the prox_tg generator needs at least one mode=gen task; this "
                            "config has none", source)
        missing = [f"core {t.core} task {t.task}" for t in self.gen_tasks if t.tx_port is None]
        if missing:
            raise TaskError(f"mode=gen task without 'tx port': {', '.join(missing)}", source)
        if not self.lat_tasks:
            raise TaskError("the prox_tg generator counts received frames on mode=lat tasks; "
                            "this config has none", source)
        self.pairs = port_pairs.checked(self.options.get("port_pairs", []), self.gen_tasks,
                                        self.lat_tasks, self.interface_names(),
                                        self.spec.options_where)
        self._zero_latency_warned = False
        self._frame_set: dict[tuple[int, int], Frame] = {}  # per gen task, as last sent

    def _render_config(self):
        config = super()._render_config()
        config.use_latency_bucket_size()
        return config

    @property
    def tx_port_count(self) -> int:
        """Its pairs' tx ports where it has pairs (the others' gen tasks stay idle)."""
        return len(self.pairs) or len({t.tx_port for t in self.gen_tasks})

    def port_pairs(self) -> list[tuple[str, str]]:
        return [(pair.tx_name, pair.rx_name) for pair in self.pairs]

    def _pairs(self, tasks) -> list[tuple[int, int]]:
        return [(t.core, t.task) for t in tasks]

    def _idle(self) -> list[str]:
        return [f"speed {c} {t} 0" for c, t in self._pairs(self.gen_tasks)]

    def on_ready(self) -> None:
        # gen tasks idle at speed 0, lat tasks always receiving: a trial is a speed change
        self._frame_set.clear()  # a fresh PROX sends what its config says
        self.client.send(*self._idle())
        self.client.start(self._pairs(self.lat_tasks + self.gen_tasks))

    def describe(self) -> dict:
        described = super().describe()
        described["generator"] = {
            "gen_tasks": [f"core {t.core} task {t.task} -> port {t.tx_port}"
                          for t in self.gen_tasks],
            "lat_tasks": [f"core {t.core} task {t.task} <- port {t.rx_port}"
                          for t in self.lat_tasks],
            "flows": "as the PROX config generates them ('random=' masks)",
        }
        return described

    # --- one trial ------------------------------------------------------------

    def _settings(self, trial: Trial) -> list[str]:
        """pkt_size and speed for every gen task: the rate split over the tx ports, or
        over the port pairs (each its own rate where the trial gives them)."""
        by_port = defaultdict(list)
        for task in self.gen_tasks:
            by_port[task.tx_port].append(task)
        if self.pairs:
            rates = port_pairs.rates(trial, len(self.pairs))
            share = {pair.tx: rate for pair, rate in zip(self.pairs, rates, strict=True)}
        else:
            share = {port: trial.rate_pps / len(by_port) for port in by_port}
        commands = []
        for port, tasks in by_port.items():
            if port not in share:
                continue  # a gen task on no pair's port stays idle
            pct = speed_pct(share[port] / len(tasks), trial.frame_size)
            for task in tasks:
                commands += [*self._size_commands(task, trial.frame_size),
                             self.client.speed_command(task.core, task.task, pct)]
        return commands

    def _size_commands(self, task, frame: Frame) -> list[str]:
        """What sets ``frame`` on a gen task; nothing when the task has it already."""
        if self._frame_set.get((task.core, task.task)) == frame:
            return []
        self._frame_set[(task.core, task.task)] = frame
        if isinstance(frame, FrameMix):
            # a running gen task takes a new mix on its next burst and then clears the
            # flag the imix command set, unlocked: a mix set in between is lost (PROX
            # 22.12, handle_gen.c task_gen_update_config; seen as a whole IMIX trial
            # of 60 B frames). A stopped task takes it when it starts again.
            where = f"{task.core} {task.task}"
            return [f"stop {where}", self.client.imix_command(task.core, task.task,
                                                              frame.sequence),
                    f"start {where}"]
        return [self.client.pkt_size_command(task.core, task.task, frame)]

    def run_trial(self, trial: Trial) -> TrialResult:
        settings = self._settings(trial)
        self.client.send("reset stats", *settings)  # traffic starts
        on = time.monotonic()
        sending = self._watch(on + trial.duration_s)
        self.client.send(*self._idle())  # traffic stops
        window_s = time.monotonic() - on
        final, in_flight = self._final()
        tx_pps, rx_pps, timed_by = _rates(sending, final, window_s)
        latency = prox_latency.trial_latency(self.client, self.lat_tasks,
                                             final.rx_per_lat_task, final.hz)
        if latency is None and final.rx and not self._zero_latency_warned:
            LOG.warning("%s: PROX reports no latency; add 'accuracy limit nsec=1000000' to "
                        "the mode=lat sections of %s", self.name, self.config.source)
            self._zero_latency_warned = True
        limited = tx_pps < trial.rate_pps * (1 - self.options["generator_tolerance_pct"] / 100.0)
        if limited:
            LOG.info("%s: PROX sent %.0f pps of %.0f asked: generator-limited", self.name,
                     tx_pps, trial.rate_pps)
        result = TrialResult(trial=trial, tx_packets=final.tx, rx_packets=final.rx,
                             elapsed_s=window_s, latency=latency, generator_limited=limited,
                             ports=self._ports(final), measured_tx_pps=tx_pps,
                             measured_rx_pps=rx_pps, pair_latency=self._pair_latency(final))
        extra = {**nsb_named_kpis(result), "in_flight_packets": in_flight,
                 "rate_timed_by": timed_by}
        if final.rx > final.tx:  # PROX's lat tasks count any frame with the signature
            extra["frames_of_earlier_trials"] = final.rx - final.tx
            LOG.warning("%s: received %d frames more than sent: the DUT released frames of an "
                        "earlier trial late, and this trial's loss is understated by as many",
                        self.name, final.rx - final.tx)
        return replace(result, extra=extra)

    def _pair_latency(self, final: Reading) -> dict[int, object]:
        """Each port pair's latency, from the lat tasks of its rx port (pair index ->
        LatencyStats, where they received frames with latency)."""
        measured = {}
        for index, pair in enumerate(self.pairs):
            picked = [n for n, t in enumerate(self.lat_tasks) if t.rx_port == pair.rx]
            latency = prox_latency.trial_latency(
                self.client, [self.lat_tasks[n] for n in picked],
                tuple(final.rx_per_lat_task[n] for n in picked), final.hz)
            if latency is not None:
                measured[index] = latency
        return measured

    def _read(self) -> Reading:
        gen = [self.client.core_stats(t.core, t.task) for t in self.gen_tasks]
        lat = [self.client.core_stats(t.core, t.task) for t in self.lat_tasks]
        return Reading(hz=lat[0].hz, gen_counts=tuple((s.tx, s.tsc) for s in gen),
                       lat_counts=tuple((s.rx, s.tsc) for s in lat))

    def _watch(self, until: float) -> list[Reading]:
        """Every new snapshot PROX takes until ``until`` (while the traffic runs)."""
        seen: list[Reading] = []
        while (left := until - time.monotonic()) > 0:
            time.sleep(min(POLL_S, left))
            reading = self._read()
            if not seen or reading.tsc != seen[-1].tsc:
                seen.append(reading)
        return seen

    def _final(self) -> tuple[Reading, int]:
        """Counters from snapshots taken after the stop, once the lat tasks' count rests.

        Returns the last reading and the frames that were still arriving between
        the last two snapshots (0 when drained).
        """
        deadline = time.monotonic() + self.options["drain_timeout_s"]
        after_stop = self._read()  # this snapshot may predate the stop; any newer one not
        fresh: list[Reading] = []
        moved_at = time.monotonic()  # when the received count last changed
        while time.monotonic() < deadline:
            time.sleep(POLL_S)
            reading = self._read()
            if not reading.newer_than(fresh[-1] if fresh else after_stop):
                continue
            if reading.rx >= reading.tx:
                return reading, 0
            if fresh and reading.rx == fresh[-1].rx:
                if time.monotonic() - moved_at >= self.options["drain_quiet_s"]:
                    return reading, 0
            else:
                moved_at = time.monotonic()
            fresh.append(reading)
        if not fresh:
            raise RunError(f"{self.name}: PROX took no new stats snapshot within "
                           f"drain_timeout_s={self.options['drain_timeout_s']:g} s after the "
                           "generator stopped (its refresh period, -r, is longer?)")
        previous = fresh[-2].rx if len(fresh) > 1 else after_stop.rx
        in_flight = max(0, fresh[-1].rx - previous)
        LOG.warning("%s: frames still arriving %g s after the generator stopped (%d between "
                    "the last two snapshots)", self.name, self.options["drain_timeout_s"],
                    in_flight)
        return fresh[-1], in_flight

    def _ports(self, final: Reading) -> dict[str, dict[str, int]]:
        """Per port (interface name) what its gen tasks sent and its lat tasks received
        in the trial, from the final reading that gives the trial's totals. Not PROX's
        port counters: their "reset stats" does not always take (seen: an af_packet
        port's rx carrying two earlier trials' frames while its tasks' counts reset)."""
        names = self.interface_names()
        ports: dict[str, dict[str, int]] = {}
        sides = ((self.gen_tasks, final.gen_counts, "tx_packets", "tx_port"),
                 (self.lat_tasks, final.lat_counts, "rx_packets", "rx_port"))
        for tasks, counts, key, side in sides:
            for task, (count, _) in zip(tasks, counts, strict=True):
                number = getattr(task, side)
                port = ports.setdefault(names.get(number, f"port{number}"),
                                        {"tx_packets": 0, "rx_packets": 0})
                port[key] += count
        return ports


def _rates(sending: list[Reading], final: Reading, window_s: float) -> tuple[float, float, str]:
    """(tx pps, rx pps, how they were timed). The first snapshot seen after the start
    may predate the reset, and a snapshot without a frame sent by every gen task may
    predate the speed change; the others were taken while sending. Each task's rate
    is timed by its own snapshots, and the tasks' rates are summed."""
    timed = [r for r in sending[1:] if all(count > 0 for count, _ in r.gen_counts)]
    if len(timed) >= 2:
        tx = _per_task_rate(timed[0].gen_counts, timed[-1].gen_counts, final.hz)
        rx = _per_task_rate(timed[0].lat_counts, timed[-1].lat_counts, final.hz)
        if tx is not None and rx is not None:
            return tx, rx, "prox_tsc"
    if window_s <= 0:
        return 0.0, 0.0, "none"
    return final.tx / window_s, final.rx / window_s, "wall_clock"


def _per_task_rate(first: tuple[tuple[int, int], ...], last: tuple[tuple[int, int], ...],
                   hz: int) -> float | None:
    """Sum of each task's (count, tsc) difference rate, or None if one did not move."""
    rate = 0.0
    for (count_a, tsc_a), (count_b, tsc_b) in zip(first, last, strict=True):
        if tsc_b <= tsc_a:
            return None  # this task's snapshot did not move: no interval to time
        rate += (count_b - count_a) / ((tsc_b - tsc_a) / hz)
    return rate


def nsb_named_kpis(result: TrialResult) -> dict[str, float]:
    """The names NSB's PROX generator reported, so existing dashboards keep working."""
    rx_mpps = result.rx_rate_pps / 1e6
    kpis = {"Throughput": rx_mpps, "RxThroughput": rx_mpps,
            "TxThroughput": result.trial.rate_pps / 1e6, "DropPackets": result.loss_pct,
            "CurrentDropPackets": result.loss_pct,
            "PktSize": frames.avg_size(result.trial.frame_size)}
    if result.latency is not None:
        kpis.update(LatencyMin=result.latency.min_us, LatencyMax=result.latency.max_us,
                    LatencyAvg=result.latency.avg_us)
    return kpis


