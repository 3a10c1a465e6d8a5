"""The ``WWW-Authenticate`` challenge of a 401 or 403 (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9728 §5.1)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import httpx

__all__ = ["BearerChallenge", "bearer_challenge", "parse_challenges"]

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_PARAM = re.compile(rf'\s*({_TOKEN})\s*=\s*(?:"((?:[^"\\]|\\.)*)"|({_TOKEN}))\s*(?:,|$)')
_SCHEME = re.compile(rf"\s*({_TOKEN})(?:\s+|\s*,|$)")
_TOKEN68 = re.compile(r"\s*[A-Za-z0-9\-._~+/]+=*\s*(?:,|$)")
_ESCAPE = re.compile(r"\\(.)")


@dataclass(frozen=True)
class BearerChallenge:
    """The parameters of a ``Bearer`` challenge that steer authorization; all optional."""

    error: str | None = None
    error_description: str | None = None
    scope: str | None = None
    resource_metadata: str | None = None


def parse_challenges(values: list[str]) -> list[tuple[str, dict[str, str]]]:
    """Every challenge in the header values as (lower-case scheme, {lower-case name: value}).

    Parsing stops at the first thing that is neither a scheme nor an auth-param: what came before
    is kept, since a server's typo in one challenge should not hide the others.
    """
    challenges: list[tuple[str, dict[str, str]]] = []
    for value in values:
        params: dict[str, str] | None = None
        position = 0
        while position < len(value):
            if value[position] in " \t,":
                position += 1
                continue
            param = _PARAM.match(value, position)
            if param and params is not None:
                quoted, plain = param.group(2), param.group(3)
                params[param.group(1).lower()] = _ESCAPE.sub(r"\1", quoted) if quoted is not None else plain
                position = param.end()
                continue
            scheme = _SCHEME.match(value, position)
            if scheme is None:
                break
            params = {}
            challenges.append((scheme.group(1).lower(), params))
            position = scheme.end()
            token68 = _TOKEN68.match(value, position)
            if token68 and not _PARAM.match(value, position):
                position = token68.end()
    return challenges


def bearer_challenge(response: httpx.Response) -> BearerChallenge:
    """The ``Bearer`` challenge of ``response``, or an empty one when it sent none."""
    for scheme, params in parse_challenges(response.headers.get_list("www-authenticate")):
        if scheme == "bearer":
            return BearerChallenge(
                error=params.get("error") or None,
                error_description=params.get("error_description") or None,
                scope=" ".join(params["scope"].split()) if params.get("scope", "").strip() else None,
                resource_metadata=params.get("resource_metadata") or None,
            )
    return BearerChallenge()
