"""A third-party plugin package: one plugin of each kind, declared as entry points.

Each module is one plugin, shown whole in docs/development/plugins.md: a class with a
docstring, an OPTIONS_SCHEMA, and the base class's methods. Nothing here is
imported by nsb itself; nsb finds the classes by their entry points.
"""
