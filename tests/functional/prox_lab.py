"""The PROX sample in the embedded lab, driven in-process: the real binary, trial by trial.

Used by the real-PROX tests and the control-overhead benchmark. ``PROX`` is
NSB_PROX_PATH, else ../shared/tools/prox/prox beside the checkout.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path

from nsb import engine
from nsb.runinfo import RunInfo
from nsb.task import loader
from nsb.vnfs.readiness import wait_all_ready

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "prox" / "tc_prox_l3fwd.yaml"
PROX = Path(os.environ.get("NSB_PROX_PATH") or ROOT.parent / "shared" / "tools" / "prox" / "prox")


def lab_args(**more) -> dict:
    return {"context": "netns", "prox_path": str(PROX), **more}


@contextlib.contextmanager
def running_sample(results_dir: Path, **task_args):
    """The sample's context deployed and its PROX SUT and generator ready; yields the
    scenario plan (``.generator``, ``.vnfs``). Everything is torn down afterwards."""
    with deployed(results_dir, SAMPLE, lab_args(**task_args), ready_s=30.0) as scenario:
        yield scenario


@contextlib.contextmanager
def deployed(results_dir: Path, task_file: Path, task_args: dict, ready_s: float,
             with_context: bool = False):
    """A task's first scenario in-process: context deployed, its VNFs and generator
    ready within ``ready_s``; torn down in reverse afterwards. Yields the scenario, or
    (scenario, context) ``with_context``."""
    task = loader.load(task_file, task_args)
    task_id = uuid.uuid4().hex[:8]
    run = RunInfo(task_id=task_id, task=task, results_dir=results_dir / task_id,
                  nfvi_interval_s=0.0)
    plan = engine.plan(task, run)
    scenario = plan.scenarios[0]
    with contextlib.ExitStack() as teardown:
        teardown.callback(plan.context.undeploy)
        plan.context.deploy()
        for vnf in [*scenario.vnfs, scenario.generator]:
            teardown.callback(vnf.terminate)
            vnf.instantiate()
        wait_all_ready([*scenario.vnfs, scenario.generator], ready_s)
        yield (scenario, plan.context) if with_context else scenario
