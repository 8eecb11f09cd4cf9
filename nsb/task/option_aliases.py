"""Options whose name carries their unit, and the names they were given before.

A loss tolerance in percent is ``tolerated_loss_pct`` (binsearch, fastndr,
fixed, ramp, acl); one as a ratio is ``loss_ratio`` (mlrsearch's goals). NSB's
and earlier nsb's ``tolerated_loss`` (also in percent) is read as
``tolerated_loss_pct``, so task files written for them keep running.
"""

from __future__ import annotations

from nsb.errors import TaskError

# earlier or NSB name -> the name with its unit
ALIASES = {"tolerated_loss": "tolerated_loss_pct"}


def accepting(options_schema: dict, options: dict) -> dict:
    """``options_schema`` that also accepts the aliases ``options`` uses, with the
    rules of the names they stand for: a bad value is reported at the key the user
    wrote."""
    properties = options_schema.get("properties", {})
    extra = {alias: properties[name] for alias, name in ALIASES.items()
             if alias in options and alias not in properties and name in properties}
    if not extra:
        return options_schema
    return {**options_schema, "properties": {**properties, **extra}}


def canonical(options: dict, options_schema: dict, where) -> dict:
    """``options`` with each alias renamed to the name the schema declares; giving
    both is an error located at the alias."""
    properties = options_schema.get("properties", {})
    renamed = dict(options)
    for alias, name in ALIASES.items():
        if alias not in renamed or alias in properties or name not in properties:
            continue
        if name in renamed:
            raise _error(where, alias, f"'{alias}' is another name of '{name}': give one")
        renamed[name] = renamed.pop(alias)
    return renamed


def _error(where, key: str, message: str) -> TaskError:
    if where is not None and hasattr(where, "error"):
        return where.error(message, key)
    return TaskError(message, key_path=key)
