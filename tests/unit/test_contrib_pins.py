"""The framework adapters' extras pin exact versions, and the test install has the same pins.

The client's extras (clients/python/pyproject.toml) are what users install; the top-level
``test`` extra is what the README's test command installs (the editable install maps the client
package but not its extras), so the adapters are tested against exactly the versions users get.
"""

from __future__ import annotations

import re
import tomllib

from tests.helpers.daemon import ROOT

_REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(.*)$")


def _optional(path: str) -> dict[str, list[str]]:
    with open(ROOT / path, "rb") as f:
        extras: dict[str, list[str]] = tomllib.load(f)["project"].get("optional-dependencies", {})
    return extras


def _pins(requirements: list[str]) -> dict[str, str]:
    """name (normalised) → version specifier, extras in brackets left out."""
    pins = {}
    for requirement in requirements:
        m = _REQUIREMENT.match(requirement.strip())
        assert m, requirement
        pins[re.sub(r"[-_.]+", "-", m.group(1)).lower()] = m.group(3).replace(" ", "")
    return pins


def test_every_adapter_extra_pins_one_exact_version_that_the_test_extra_installs() -> None:
    client = _optional("clients/python/pyproject.toml")
    test = _pins(_optional("pyproject.toml")["test"])
    assert client, "the client has no adapter extras"
    for extra, requirements in client.items():
        for name, spec in _pins(requirements).items():
            assert re.fullmatch(r"==[0-9][0-9A-Za-z.+!-]*", spec), f"extra {extra}: {name}{spec} is not an exact pin"
            assert test.get(name) == spec, f"extra {extra} pins {name}{spec}; the test extra has {test.get(name)}"
