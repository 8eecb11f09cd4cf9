"""JSON schema of nsb task files and validation with located, readable errors."""

from __future__ import annotations

import difflib
import re

import jsonschema

from nsb import redact
from nsb.errors import raise_all
from nsb.task import chain_template, values
from nsb.task.yaml_lines import LocatedDocument

_PLUGIN_REF = {
    "type": "object",
    "required": ["type"],
    "properties": {"type": {"type": "string", "minLength": 1}},
}

_VNF = {
    "type": "object",
    "required": ["name", "type", "node"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "pattern": "^[A-Za-z0-9_.-]+$"},
        "type": {"type": "string", "minLength": 1},
        "node": {"type": "string", "minLength": 1},
        "options": {"type": "object"},
        # its lcores from these CPUs, as its type lists them (a chain template's pool)
        "pool_cores": {
            "type": "object",
            "required": ["cpus"],
            "additionalProperties": False,
            "properties": {"cpus": {"type": "string", "pattern": r"^[0-9,\-]+$"},
                           "main": {"type": "integer", "minimum": 0}},
        },
    },
}

_CONTEXT = {
    "type": "object",
    "required": ["type"],
    "properties": {
        "type": {"type": "string", "minLength": 1},
    },
}

TASK_SCHEMA = {
    "type": "object",
    "required": ["schema", "scenarios"],
    # one context, or several (e.g. netns for the generator, libvirt for the VNF)
    "oneOf": [{"required": ["context"], "not": {"required": ["contexts"]}},
              {"required": ["contexts"], "not": {"required": ["context"]}}],
    "additionalProperties": False,
    "properties": {
        "schema": {"const": "nsb:task:0.1"},
        "description": {"type": "string"},
        # a line printed before the task runs (e.g. why a sample chose its generator)
        "notice": {"type": "string", "minLength": 1},
        # task args -> their values: the task runs once per combination (nsb.task.sweep)
        "sweep": {"type": "object"},
        "context": _CONTEXT,
        "contexts": {"type": "array", "minItems": 1, "items": _CONTEXT},
        "scenarios": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["traffic_generator", "traffic_profile"],
                "additionalProperties": False,
                "properties": {
                    "name": {"type": "string", "pattern": "^[A-Za-z0-9_.-]+$"},
                    "vnfs": {"type": "array", "items": _VNF},
                    "traffic_generator": _VNF,
                    "traffic_profile": {"anyOf": [{"type": "string"}, _PLUGIN_REF]},
                    "runner": _PLUGIN_REF,
                    # service chains over the generator's port pairs (nsb.chains)
                    "chains": {"type": "integer", "minimum": 1, "maximum": 64},
                    "service_chain_count": {"type": "integer", "minimum": 1,
                                            "maximum": 64},
                    # NFVbench's: one network shared by the chains (nsb: each its own)
                    "service_chain_shared_net": {"type": "boolean"},
                    # one chain's NFs, laid out chains times (nsb.task.chain_template)
                    "chain": chain_template.SCHEMA,
                },
            },
        },
        "outputs": {"type": "array", "items": _PLUGIN_REF},
    },
}


def validate(data, schema: dict, doc: LocatedDocument, base_path: tuple = ()) -> None:
    """Raise every schema violation in ``data`` as located TaskErrors, one line each
    (the most specific reading of each), so that a file's mistakes show at once.

    ``data`` sits at ``base_path`` inside ``doc``; that is where errors point.
    """
    raise_all(violations(data, schema, doc, base_path))


def violations(data, schema: dict, doc: LocatedDocument, base_path: tuple = ()) -> list:
    """Every schema violation in ``data`` as a located TaskError (none: [])."""
    validator = jsonschema.Draft202012Validator(schema, format_checker=values.FORMATS)
    found, seen = [], set()
    for error in (e for top in validator.iter_errors(data) for e in _specific(top)):
        path = base_path + tuple(error.absolute_path)
        if "propertyNames" in error.schema_path:  # the name itself, at its line
            path += (error.instance,)
        keys = [None]
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            keys = _extra_keys(error.instance, error.schema)  # one line per unknown key
        for key in keys:
            at = path + ((key,) if key is not None else ())
            message = describe(error, key=key)
            if any(redact.is_secret_key(part) for part in at):
                message = describe(error, shown=lambda value: redact.MASK, key=key)
            if (at, message) not in seen:
                seen.add((at, message))
                found.append(doc.error(at, redact.text(message)))
    return found


def _specific(error: jsonschema.ValidationError) -> list:
    """The errors that say what is wrong: for anyOf/oneOf, every error of the branch
    that got furthest (a mapping with two bad values has two lines)."""
    if not error.context:
        return [error]
    best = jsonschema.exceptions.best_match([error])  # deep down: its branch is wanted
    if best is error:  # no branch is closer (a value of a type no branch takes)
        return [error]
    while best.parent is not None and best.parent is not error:
        best = best.parent
    branch = best.relative_schema_path[0]
    return [found for e in error.context if e.relative_schema_path[0] == branch
            for found in _specific(e)]


def _most_specific(errors: list[jsonschema.ValidationError]) -> jsonschema.ValidationError:
    best = jsonschema.exceptions.best_match(errors)
    # anyOf/oneOf: report the branch that got furthest
    while best.context:
        best = jsonschema.exceptions.best_match(best.context)
    return best


def describe(error: jsonschema.ValidationError, shown=None, key=None) -> str:
    """Turn a jsonschema error into what is wrong and what is allowed; ``shown``
    prints the offending value (a secret's is masked)."""
    _show = shown or _show_value
    kind = error.validator
    schema = error.schema
    instance = error.instance
    if kind == "additionalProperties" and isinstance(instance, dict):
        allowed = sorted(schema.get("properties", {}))
        extra = _extra_keys(instance, schema)
        key = key if key is not None else (extra[0] if extra else "?")
        hint = difflib.get_close_matches(key, allowed, n=1)
        did_you_mean = f" (did you mean '{hint[0]}'?)" if hint else ""
        return f"unknown key '{key}'{did_you_mean}; allowed: {', '.join(allowed)}"
    if kind == "required":
        missing = [k for k in schema["required"] if k not in instance]
        return f"missing required key '{missing[0]}'"
    if kind == "type":
        expected = schema["type"]
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return f"expected {_article(expected)}, got {_show(instance)}"
    if kind == "const":
        return f"must be {_show(schema['const'])}, got {_show(instance)}"
    if kind == "enum":
        allowed = ", ".join(_show(v) for v in schema["enum"])
        return f"{_show(instance)} is not allowed; allowed: {allowed}"
    if kind == "minimum":
        return f"{_show(instance)} is below the minimum {schema['minimum']}"
    if kind == "maximum":
        return f"{_show(instance)} is above the maximum {schema['maximum']}"
    if kind == "exclusiveMinimum":
        return f"{_show(instance)} must be greater than {schema['exclusiveMinimum']}"
    if kind == "pattern":
        return f"{_show(instance)} does not match the pattern {schema['pattern']}"
    if kind in ("minItems", "maxItems", "minProperties", "minLength"):
        return f"{_show(instance)} is too short or too long ({kind} {schema[kind]})"
    if kind == "format" and isinstance(error.cause, values.ValueProblem):
        return str(error.cause)
    if kind in ("anyOf", "oneOf") and all(list(branch) == ["required"]
                                          for branch in schema[kind]):
        keys = ", ".join(k for branch in schema[kind] for k in branch["required"])
        one = "exactly one" if kind == "oneOf" else "one"
        return f"needs {one} of {keys}"
    if kind in ("anyOf", "oneOf") and all("type" in branch for branch in schema[kind]):
        kinds = [t for branch in schema[kind] for t in (
            branch["type"] if isinstance(branch["type"], list) else [branch["type"]])]
        return f"expected {' or '.join(_article(t) for t in kinds)}, got {_show(instance)}"
    if kind == "propertyNames":
        return f"invalid name: {error.message}"
    return error.message


def _extra_keys(instance: dict, schema: dict) -> list:
    """The keys neither ``properties`` nor ``patternProperties`` allow, sorted."""
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    return sorted(key for key in instance if key not in schema.get("properties", {})
                  and not any(p.search(str(key)) for p in patterns))


def _article(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


def _show_value(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
