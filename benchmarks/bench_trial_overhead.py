"""Framework overhead per trial: wall time outside the traffic itself; prints the numbers.

1. pipeline only: engine, events, file output and binsearch around a simulated
   generator whose trials take no time (pure framework cost);
2. embedded lab: the real sample (netns, testpmd, trafgen, latency probe) with
   1 s trials; overhead = (first trial start .. last trial end) / trials - 1 s.
   Needs root.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def pipeline_only() -> None:
    from nsb import engine
    from nsb.outputs.file import FileOutput
    from nsb.runinfo import RunInfo
    from nsb.task import loader
    from tests.doubles.null_context import NullContext
    from tests.doubles.simulated_dut import SimulatedDutGenerator

    with tempfile.TemporaryDirectory() as tmp:
        task = loader.load(ROOT / "samples/tc_testpmd_netns_rfc2544.yaml",
                           {"duration_s": 0.001, "packet_sizes": [64, 128, 256, 512, 1024, 1280,
                                                                  1518]})
        run = RunInfo("bench001", task, Path(tmp) / "bench001")
        plan = engine.plan(task, run)
        generator = SimulatedDutGenerator(50_000.0)
        plan.scenarios[0].vnfs = []
        plan.scenarios[0].generator = generator
        plan = engine.Plan(task, run, NullContext(task.context, {}, run), plan.scenarios,
                           [FileOutput(task.outputs[0], {}, run)])
        start = time.perf_counter()
        engine.execute(plan)
        wall = time.perf_counter() - start
    trials = len(generator.trials)
    print(f"pipeline only: {trials} trials, {1000 * wall / trials:.2f} ms framework time "
          f"per trial (results file rewritten after each trial)")


def embedded_lab() -> None:
    if os.geteuid() != 0:
        print("embedded lab: skipped (needs root)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        conf = Path(tmp) / "nsb.conf"
        conf.write_text(f"[DEFAULT]\nresults_dir = {tmp}/results\nlog_dir = {tmp}/logs\n")
        subprocess.run([sys.executable, "-m", "nsb", "--config-file", str(conf), "task", "start",
                        str(ROOT / "samples/tc_testpmd_netns_rfc2544.yaml"), "--task-args",
                        json.dumps({"duration_s": 1, "packet_sizes": [64]})],
                       check=True, capture_output=True)
        (events_file,) = Path(tmp, "results").glob("*/events.jsonl")
        events = [json.loads(line) for line in events_file.read_text().splitlines()]
    starts = [e["timestamp"] for e in events if e["event"] == "TrialStarted"]
    dones = [e for e in events if e["event"] == "TrialDone"]
    walls = [d["timestamp"] - s for s, d in zip(starts, dones, strict=True)]
    outside = [w - d["elapsed_s"] for w, d in zip(walls, dones, strict=True)]
    span = dones[-1]["timestamp"] - starts[0]
    between = (span - sum(walls)) / max(1, len(dones) - 1)
    limited = sum(d["generator_limited"] for d in dones)
    late = [d["elapsed_s"] - d["duration_s"] for d in dones]
    print(f"embedded lab: {len(dones)} trials of 1 s ({limited} generator-limited)")
    print(f"  framework time outside the traffic per trial: median "
          f"{statistics.median(outside):.3f} s, max {max(outside):.3f} s (shaper, counters, "
          f"drain, probe) + {between:.3f} s between trials (KPIs, events) (goal < 0.300 s)")
    print(f"  traffic phase beyond the trial duration: median {statistics.median(late):.3f} s "
          f"(trafgen start-up; a generator-limited trafgen is stopped 0.1 s after its time)")


if __name__ == "__main__":
    pipeline_only()
    embedded_lab()
