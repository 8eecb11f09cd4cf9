"""The live progress line of `nsb task start` (frame, interval, rate, loss, time)."""

from __future__ import annotations

import time

from nsb import frames, units
from nsb.events import Event, ResultReady, TrialDone, TrialStarted


def _load(trial) -> str:
    """What a trial sends: its frame size, or a stateful trial's program."""
    if trial.sessions is not None:
        return trial.sessions.program.rsplit("/", 1)[-1]
    return frames.shown(frames.json_value(trial.frame_size))


def _rate(trial) -> str:
    if trial.sessions is not None and trial.sessions.data_pps_per_session > 0:
        return (f"{trial.rate_pps / 1000:,.1f} kpps of data over "
                f"{round(trial.sessions.cps * trial.duration_s):,} sessions")
    if trial.sessions is not None:
        return f"{trial.sessions.cps:,.0f} connections/s"
    return (f"{trial.rate_pps / 1000:,.1f} kpps, "
            f"{units.pps_to_mbps(trial.rate_pps, trial.frame_size):,.0f} Mbps")


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class Progress:
    """Listens to events; renders one line, live on a terminal, else one line per trial."""

    def __init__(self, console):
        self.console = console
        self.started = time.monotonic()
        self.current: TrialStarted | None = None
        self.trial_started = 0.0
        self.last: TrialDone | None = None
        self.trial_walls: list[float] = []
        self.traffic_s = 0.0
        self.results: list[ResultReady] = []
        self.live = None
        if console.is_terminal:
            from rich.live import Live
            from rich.text import Text

            self.live = Live(get_renderable=lambda: Text(self.line()), console=console,
                             refresh_per_second=4, transient=True)

    def __enter__(self):
        if self.live:
            self.live.start()
        return self

    def __exit__(self, *exc):
        if self.live:
            self.live.stop()

    def handle(self, event: Event) -> None:
        if isinstance(event, TrialStarted):
            self.current = event
            self.trial_started = time.monotonic()
        elif isinstance(event, TrialDone):
            self.last = event
            self.trial_walls.append(time.monotonic() - self.trial_started)
            self.traffic_s += event.result.trial.duration_s
            if not self.live:
                self.console.print(self.line(), highlight=False, markup=False, soft_wrap=True)
        elif isinstance(event, ResultReady):
            self.results.append(event)

    def eta_s(self) -> float | None:
        if not self.current or not self.trial_walls:
            return None
        done_in_current = time.monotonic() - self.trial_started
        if self.current.seconds_left is not None:
            # the profile's traffic seconds left, stretched by the control time per trial
            overhead = max(1.0, sum(self.trial_walls) / max(self.traffic_s, 1e-9))
            return max(0.0, (self.current.seconds_left - done_in_current) * overhead)
        per_trial = sum(self.trial_walls) / len(self.trial_walls)
        return max(0.0, self.current.trials_left * per_trial - done_in_current)

    def line(self) -> str:
        now = time.monotonic()
        if self.current is None:
            return f"starting ... elapsed {_clock(now - self.started)}"
        c = self.current
        parts = [f"[{c.scenario}] {_load(c.trial)}",
                 f"interval {c.lower_pct:.2f}-{c.upper_pct:.2f} %",
                 f"trial {c.trial_index} at {c.rate_pct:.2f} % ({_rate(c.trial)})"]
        if self.last is not None:
            sessions = self.last.result.sessions
            lost = self.last.result.loss_pct if sessions is None or sessions.data \
                else sessions.loss_pct  # a stream's loss is its data's
            parts.append(f"last: {self.last.verdict} loss {lost:.3f} %")
        eta = self.eta_s()
        parts.append(f"elapsed {_clock(now - self.started)}")
        parts.append(f"left ~{_clock(eta)}" if eta is not None else "left ?")
        return " | ".join(parts)
