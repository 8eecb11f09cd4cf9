"""`nsb ansible inventory`: an Ansible inventory from a pod file, for ansible/."""

from __future__ import annotations

from pathlib import Path

from nsb.cli.options import command_group


def register(subparsers) -> None:
    actions = command_group(subparsers, "ansible", help="prepare lab nodes with ansible/")
    inventory = actions.add_parser("inventory", help="an Ansible inventory from a pod file")
    inventory.add_argument("pod", help="NSB pod file")
    inventory.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    inventory.set_defaults(handler=cmd_ansible_inventory)


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
