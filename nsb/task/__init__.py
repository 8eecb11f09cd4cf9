"""Task files: load (Jinja2 + YAML), validate (JSON schema), model (dataclasses)."""
