"""`nsb ansible inventory`: an Ansible inventory from a pod file, for ansible/;
`nsb ansible install`: the tools nsb drives, from archives, onto a pod's nodes."""

from __future__ import annotations

from pathlib import Path

from nsb.cli.options import command_group


def register(subparsers) -> None:
    actions = command_group(subparsers, "ansible", help="prepare lab nodes with ansible/")
    inventory = actions.add_parser("inventory", help="an Ansible inventory from a pod file")
    inventory.add_argument("pod", help="NSB pod file")
    inventory.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    inventory.set_defaults(handler=cmd_ansible_inventory)

    install = actions.add_parser(
        "install", help="install TRex, PROX, the SampleVNFs and DPDK's l3fwd/l2fwd from "
        "archives onto a pod's nodes (ansible/nsb_tools.yml), one line per node")
    install.add_argument("pod", help="NSB pod file")
    install.add_argument("--archives", required=True, metavar="FILE",
                         help="YAML: per tool (trex, prox, samplevnf, dpdk_apps) its archive "
                              "(a file here or a URL the nodes reach), version and sha256")
    install.add_argument("--check", action="store_true",
                         help="say what would change (ansible's check mode), change nothing")
    install.add_argument("--root", metavar="DIR",
                         help="write under DIR on the nodes instead of / and install no "
                              "packages (the roles' nsb_root: an image, or a dry try)")
    install.add_argument("--playbook", metavar="FILE",
                         help="the playbook (default: ansible/nsb_tools.yml of this checkout)")
    install.set_defaults(handler=cmd_ansible_install)


def cmd_ansible_inventory(args) -> int:
    """Rendered in memory first, so a bad pod never truncates an existing file."""
    import io

    from nsb.nodes.inventory import write_inventory

    text = io.StringIO()
    write_inventory(Path(args.pod), text)
    if args.output:
        from nsb.task import input_file

        input_file.write_text(args.output, text.getvalue())
    else:
        print(text.getvalue(), end="")
    return 0


def cmd_ansible_install(args) -> int:
    """Exit 0 when every node got its tools, 3 when one failed or was unreachable."""
    from nsb.errors import NsbError
    from nsb.nodes import ansible_run, tool_archives
    from nsb.task import input_file

    archives = tool_archives.load(input_file.resolve(args.archives))
    playbook = Path(args.playbook) if args.playbook else \
        Path(__file__).resolve().parents[2] / "ansible" / "nsb_tools.yml"
    if not playbook.is_file():
        raise NsbError(f"no playbook {playbook}: give --playbook (ansible/nsb_tools.yml of "
                       "the nsb source)")
    variables = tool_archives.role_variables(archives)
    if args.root:
        variables["nsb_root"] = args.root
    outcomes = ansible_run.run(input_file.resolve(args.pod), playbook, variables,
                               check=args.check)
    for outcome in outcomes:
        print(outcome.line())
    return 0 if all(o.ok for o in outcomes) else 3
