"""`nsb plugin list|show`: the installed plugins, and one plugin's options."""

from __future__ import annotations

from nsb.cli.options import command_group
from nsb.errors import NsbError


def register(subparsers) -> None:
    actions = command_group(subparsers, "plugin", help="installed plugins")
    listing = actions.add_parser("list", help="list plugins with their descriptions")
    listing.add_argument("namespace", nargs="?",
                         help="e.g. nsb.vnfs or vnfs (default: all namespaces)")
    listing.add_argument("--markdown", action="store_true",
                         help="all plugins as one markdown table (the site's plugin list)")
    listing.set_defaults(handler=cmd_plugin_list)
    show = actions.add_parser("show", help="a plugin's options: type, default, allowed "
                              "values, description (NSB's names resolve)")
    show.add_argument("name", help="a plugin name, e.g. testpmd, trex or TrexTrafficGenRFC")
    show.set_defaults(handler=cmd_plugin_show)


def cmd_plugin_list(args) -> int:
    """`vnfs` means `nsb.vnfs`; an unknown namespace names the known ones."""
    from nsb import plugins

    if getattr(args, "markdown", False):
        from nsb import plugin_table

        print(plugin_table.markdown())
        return 0
    namespace = args.namespace
    if namespace and not namespace.startswith("nsb."):
        namespace = f"nsb.{namespace}"
    if namespace and namespace not in plugins.NAMESPACES:
        if any(args.namespace in plugins.available(ns) for ns in plugins.NAMESPACES):
            raise NsbError(f"'{args.namespace}' is a plugin, not a namespace: its options are "
                           f"`nsb plugin show {args.namespace}`")
        raise NsbError(f"unknown plugin namespace '{args.namespace}'; namespaces: "
                       f"{', '.join(plugins.NAMESPACES)}")
    current = None
    for info in plugins.describe_all(namespace):
        if info.namespace != current:
            current = info.namespace
            print(f"{current}:")
        print(f"  {info.name:<24} {info.summary}")
    return 0


def cmd_plugin_show(args) -> int:
    """Each plugin the name stands for, with every option its schema accepts."""
    from nsb import plugin_options, plugins

    for index, found in enumerate(plugin_options.resolve(args.name)):
        plugin_class = plugin_options.load(found)
        kind = plugins.NAMESPACES[found.namespace]
        if index:
            print()
        if found.nsb_name:
            print(f"{found.nsb_name}: NSB's name for the {kind} plugin '{found.name}'")
        doc = (plugin_class.__doc__ or "").strip().splitlines()
        print(f"{found.name} ({kind}, {found.target}): "
              f"{doc[0] if doc else '(no description)'}")
        if found.aliases:
            print(f"also named: {', '.join(found.aliases)}")
        _print_options(plugin_options.options(plugin_class))
    return 0


def _print_options(options) -> None:
    if not options:
        print("options: none")
        return
    print("options:")
    for option in options:
        facts = [option.type]
        if option.required:
            facts.append("required")
        if option.default:
            facts.append(f"default {option.default}")
        if option.allowed:
            facts.append(option.allowed)
        print(f"  {option.name}: {', '.join(facts)}")
        if option.description:
            print(f"      {option.description}")
