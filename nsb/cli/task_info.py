"""`nsb task args|samples`: what a task file takes and which task files ship,
answered without running anything."""

from __future__ import annotations

from pathlib import Path

from nsb.errors import NsbError


def register(actions) -> None:
    """Add `args` and `samples` to the `task` command group."""
    args = actions.add_parser("args", help="the arguments a task's templates read "
                              "(--task-args), with their defaults")
    args.add_argument("file", help="task file (YAML, may use Jinja2)")
    args.set_defaults(handler=cmd_task_args)
    listing = actions.add_parser("samples", help="the sample task files that ship, "
                                 "each with its description")
    listing.set_defaults(handler=cmd_task_samples)


def cmd_task_args(args) -> int:
    """One line per argument: name, default (or required/optional), files reading it."""
    from nsb.task import template_args

    found = template_args.task_args(args.file)
    if not found:
        print(f"{args.file}: takes no task arguments")
        return 0
    width = max(len(a.name) for a in found)
    shown = max(len(a.shown_default) for a in found)
    print(f"{'ARGUMENT':<{width}}  {'DEFAULT':<{shown}}  READ BY")
    for arg in found:
        print(f"{arg.name:<{width}}  {arg.shown_default:<{shown}}  {', '.join(arg.files)}")
    return 0


def cmd_task_samples(args) -> int:
    """The samples directory, then each task file in it with its description."""
    from nsb.task import samples

    root = samples.directory()
    if root is None:
        raise NsbError(f"no samples directory: set {samples.ENV} to one (the source "
                       "checkout's samples/)")
    found = samples.find(root)
    print(f"samples in {_shown(root)}:")
    width = max((len(str(s.path)) for s in found), default=0)
    for sample in found:
        print(f"  {str(sample.path):<{width}}  {sample.description}")
    return 0


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd())) or "."
    except ValueError:
        return str(path)
