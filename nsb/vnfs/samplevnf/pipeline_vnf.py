"""The SampleVNFs with a pipeline config and a start script (vFW, vACL, vCGNAPT),
started as NSB starts them: ``<binary> -p <port mask> -f <config> -s <script>``."""

from __future__ import annotations

from nsb.errors import TaskError
from nsb.task import input_file
from nsb.task.documents import Where
from nsb.vnfs.samplevnf import core_map, eal, pipeline_config, rules, script, vnf_config
from nsb.vnfs.samplevnf.templates import TEMPLATES
from nsb.vnfs.samplevnf.vnf import SampleVnf

TRAFFIC_TYPES = (4, 6)


class PipelineVnf(SampleVnf):
    """A SampleVNF whose pipelines nsb lays out as NSB does."""

    VNF_TYPE = ""  # the template's pipeline type (VFW, ACL, CGNAPT)

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        where = spec.options_where
        self.vnf_config = vnf_config.read(options.get("vnf_config"), where)
        if not self.layout.pairs:
            raise spec.where.error(
                f"{self.APP_NAME} on node {node.name} needs a port pair: a port on an "
                f"uplink_N link and one on its downlink_N (ports: "
                f"{', '.join(p.name for p in self.layout.ports)})")
        self.traffic_type = _traffic_type(spec, where)
        self.own_config = ""
        if self.vnf_config.file:
            self.own_config = _read_file(run.task_relative(self.vnf_config.file),
                                         Where(where.doc, where.path + ("vnf_config", "file")))
        self.sections = pipeline_config.generate(self.template(), self.VNF_TYPE, self.layout,
                                                 self.vnf_config, self.traffic_type)
        self.sections = pipeline_config.place_cores(self.sections, options.get("cores") or [])
        self.core_names: dict[str, str] = {}  # CPU -> the core map's name, once on the node

    def template(self) -> dict:
        return TEMPLATES[self.VNF_TYPE]

    @property
    def config_name(self) -> str:
        return f"{self.VNF_TYPE.lower()}_config"  # NSB's /tmp/vfw_config, ...

    @property
    def script_name(self) -> str:
        return f"{self.VNF_TYPE.lower()}_script"

    def flows(self) -> str:
        """The script's actions and rules (vFW, vACL); none by default (NSB's)."""
        return ""

    def config_text(self) -> str:
        queues = pipeline_config.queues_per_port(self.sections)
        section = eal.config_section(self.layout, self.memory, queues)
        sections = pipeline_config.named_cores(self.sections, self.core_names) \
            if self.core_names else self.sections
        return section + (self.own_config or pipeline_config.render(sections))

    def instantiate(self) -> None:
        if self.options.get("cores"):  # CPU numbers: named as the node's core map has them
            self.core_names = core_map.names(self.cores(), core_map.read(self.executor))
        super().instantiate()

    def script_text(self) -> str:
        return script.script(self.layout, self.flows(), self.vnf_config.lb_config == "HW")

    def files(self) -> dict[str, str]:
        return {self.config_name: self.config_text(), self.script_name: self.script_text()}

    def command(self) -> list[str]:
        return [self.binary, "-p", self.layout.mask, "-f", f"{self.work_dir}/{self.config_name}",
                "-s", f"{self.work_dir}/{self.script_name}", *self.vnf_config.hwlb()]

    def cores(self) -> list[int]:
        return sorted({int(c.rstrip("h")) for c in pipeline_config.cores_used(self.sections)})


class FirewallVnf(PipelineVnf):
    """vFW and vACL: NSB's rules file and default flows in the start script."""

    RULE_WORD = ""
    FORWARD_ACTIONS: tuple[str, ...] = ("accept", "count")

    def __init__(self, spec, options, node, context, run):
        super().__init__(spec, options, node, context, run)
        self.rules = None
        if options.get("rules"):
            where = spec.options_where
            self.rules = rules.read(run.task_relative(options["rules"]),
                                    Where(where.doc, where.path + ("rules",)))

    def flows(self) -> str:
        return script.flows_text(self.RULE_WORD, self.layout, self.rules,
                                 self.FORWARD_ACTIONS)


def _traffic_type(spec, where: Where) -> int:
    """The scenario's ``traffic_type`` (NSB's IP version of these VNFs, 4 by default)."""
    value = spec.scenario_options.get("traffic_type", 4)
    if value not in TRAFFIC_TYPES or isinstance(value, bool):
        raise Where(where.doc, where.path[:-1] + ("traffic_type",)).error(
            f"expected 4 or 6 (the IP version of NSB's SampleVNFs), got {value!r}")
    return int(value)


def _read_file(path, where: Where) -> str:
    try:
        return input_file.read_text(path)
    except TaskError as exc:
        raise where.error(f"cannot read the pipeline config {exc}") from None
