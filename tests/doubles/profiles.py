"""Build a traffic profile from keyword options, as a task file would (schema checked,
defaults filled by the same code a task goes through)."""

from nsb import plugins
from nsb.task.model import PluginSpec, Where
from nsb.task.yaml_lines import LocatedDocument


def make_profile(cls, **options):
    spec = PluginSpec(cls.__name__, options, Where(LocatedDocument(options, "t.yaml"), ()))
    return cls(spec, plugins.check_options(cls, spec), run=None)
