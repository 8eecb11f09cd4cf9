"""Secrets stay out of error lines, logs and results.

A password, token or credentials in a URL may be given in the wrong place or
with the wrong type; what nsb prints or stores about it is masked either way.
"""

from __future__ import annotations

import re

MASK = "***"
SECRET_KEYS = frozenset({"password", "passwd", "token", "secret", "api_key", "apikey",
                         "private_key", "passphrase", "auth", "authorization"})
_URL_CREDENTIALS = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)[^/\s@'\"]+@")


def is_secret_key(key: object) -> bool:
    name = str(key).lower().replace("-", "_")
    return name in SECRET_KEYS or name.endswith(("_password", "_token", "_secret"))


def text(value: str) -> str:
    """``value`` with the credentials of any URL in it masked."""
    return _URL_CREDENTIALS.sub(rf"\1{MASK}@", value)


def values(obj):
    """A copy of ``obj`` with the values of secret keys and URL credentials masked."""
    if isinstance(obj, dict):
        return {k: MASK if is_secret_key(k) and v not in (None, "") else values(v)
                for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [values(v) for v in obj]
    if isinstance(obj, str):
        return text(obj)
    return obj
