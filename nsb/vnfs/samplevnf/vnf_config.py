"""NSB's ``vnf_config`` of a SampleVNF: load balancing and worker threads.

``{lb_config: SW|HW, lb_count, worker_config: '<cores>C/<threads>T',
worker_threads, file}`` as NSB reads it: without ``vnf_config`` one software
load balancer and one worker; keys left out of a given ``vnf_config`` take
NSB's other defaults (3 load balancers, 3 workers). ``file`` is a pipeline
config of the user's own, used instead of the generated one. What NSB cannot
turn into a working pipeline config is refused, at the key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nsb.task.documents import Where

# NSB's ScenarioHelper.DEFAULT_VNF_CFG: a task without vnf_config
WITHOUT = {"lb_config": "SW", "lb_count": 1, "worker_config": "1C/1T", "worker_threads": 1}
# DpdkVnfSetupEnvHelper.build_config's defaults for keys a vnf_config leaves out
DEFAULTS = {"lb_config": "SW", "lb_count": 3, "worker_config": "1C/1T", "worker_threads": 3}
KEYS = (*DEFAULTS, "file")
WORKER_CONFIG = re.compile(r"^[1-9][0-9]*C/([12])T$", re.IGNORECASE)


@dataclass(frozen=True)
class VnfConfig:
    lb_config: str  # SW: load balancer and TXRX pipelines; HW: run to completion
    lb_count: int
    worker_config: str
    worker_threads: int  # as asked
    file: str = ""

    @property
    def hyperthreads(self) -> bool:
        """Workers on both threads of a core (``xC/2T``)."""
        return self.worker_config.upper().endswith("/2T")

    @property
    def workers(self) -> int:
        """Workers per load balancer: NSB rounds down to even with 2T."""
        if self.hyperthreads:
            return self.worker_threads - self.worker_threads % 2
        return self.worker_threads

    def hwlb(self) -> list[str]:
        """The command-line switch of hardware load balancing (NSB's ``--hwlb N``)."""
        return ["--hwlb", str(self.worker_threads)] if self.lb_config == "HW" else []


def read(raw, where: Where) -> VnfConfig:
    """``options.vnf_config`` checked (``where``: the VNF's options)."""
    if raw is None:
        return VnfConfig(**WITHOUT)
    if not isinstance(raw, dict):
        raise where.error(f"expected a mapping of {', '.join(KEYS)}, got "
                          f"{type(raw).__name__}", "vnf_config")
    for key in raw:
        if key not in KEYS:
            raise where.error(f"unknown key '{key}'; NSB's vnf_config has "
                              f"{', '.join(KEYS)}", "vnf_config", key)
    values = {**DEFAULTS, **raw}
    if values["lb_config"] not in ("SW", "HW"):
        raise where.error(f"expected SW (a load-balancer pipeline) or HW (the NIC "
                          f"spreads the traffic), got {values['lb_config']!r}",
                          "vnf_config", "lb_config")
    for key in ("lb_count", "worker_threads"):
        value = values[key]
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 64:
            raise where.error(f"expected a whole number 1-64, got {value!r}",
                              "vnf_config", key)
    if not isinstance(values["worker_config"], str) or \
            not WORKER_CONFIG.match(values["worker_config"]):
        raise where.error(f"expected '<cores>C/<threads>T' with 1 or 2 threads (e.g. "
                          f"'1C/1T'), got {values['worker_config']!r}",
                          "vnf_config", "worker_config")
    if not isinstance(values.get("file", ""), str):
        raise where.error("expected the path of a pipeline config file",
                          "vnf_config", "file")
    config = VnfConfig(**values)
    if config.workers < 1:
        raise where.error("with 2 threads per core NSB rounds worker_threads down to an "
                          "even number: 1 leaves no worker (use 2, or worker_config "
                          "'1C/1T')", "vnf_config", "worker_threads")
    return config
