"""`nsb plugin list`: the installed plugins of each namespace, with their descriptions."""

from __future__ import annotations

from nsb.cli.options import command_group
from nsb.errors import NsbError


def register(subparsers) -> None:
    actions = command_group(subparsers, "plugin", help="installed plugins")
    listing = actions.add_parser("list", help="list plugins with their descriptions")
    listing.add_argument("namespace", nargs="?",
                         help="e.g. nsb.vnfs or vnfs (default: all namespaces)")
    listing.set_defaults(handler=cmd_plugin_list)


def cmd_plugin_list(args) -> int:
    """`vnfs` means `nsb.vnfs`; an unknown namespace names the known ones."""
    from nsb import plugins

    namespace = args.namespace
    if namespace and not namespace.startswith("nsb."):
        namespace = f"nsb.{namespace}"
    if namespace and namespace not in plugins.NAMESPACES:
        raise NsbError(f"unknown plugin namespace '{args.namespace}'; namespaces: "
                       f"{', '.join(plugins.NAMESPACES)}")
    current = None
    for info in plugins.describe_all(namespace):
        if info.namespace != current:
            current = info.namespace
            print(f"{current}:")
        print(f"  {info.name:<24} {info.summary}")
    return 0
