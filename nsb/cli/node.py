"""`nsb node check`: a pre-flight report of the lab nodes of a pod file."""

from __future__ import annotations

from nsb.cli.options import command_group
from nsb.errors import NsbError


def register(subparsers) -> None:
    actions = command_group(subparsers, "node", help="lab nodes of a pod file")
    check = actions.add_parser("check", help="pre-flight report of every node of a pod: "
                               "reachable, binaries, hugepages, isolated CPUs, NIC drivers, "
                               "and which generators and VNFs each node can run")
    check.add_argument("pod", help="NSB pod file")
    check.add_argument("--binary", action="append", metavar="NAME",
                       help="a binary that must be present (repeatable; default: "
                            "dpdk-testpmd, trafgen)")
    check.set_defaults(handler=cmd_node_check)


def cmd_node_check(args) -> int:
    """One line per check and node; exit 1 when a check failed."""
    from nsb.contexts import baremetal
    from nsb.errors import TaskError
    from nsb.nodes import preflight, tool_check
    from nsb.task import input_file, pod_file

    nodes = pod_file.load_pod(input_file.resolve(args.pod))
    binaries = args.binary or ["dpdk-testpmd", "trafgen"]
    failed = 0
    try:
        for node in nodes.values():
            if node.ssh is None:
                raise TaskError(f"node '{node.name}' has no 'ip' to reach it over SSH", args.pod)
            try:
                baremetal.connect([node])
            except NsbError as exc:
                print(f"{node.name}: reachable: FAILED: {exc}")
                failed += 1
                continue
            for result in preflight.check_node(node, binaries):
                print(result.line())
                failed += not result.ok
            run = node.executor.run(["sh", "-c", tool_check.script()], check=False)
            for line in tool_check.summary(node.name, *tool_check.what_runs(run.stdout)):
                print(line)
    finally:
        baremetal.disconnect(nodes.values())
    return 1 if failed else 0
