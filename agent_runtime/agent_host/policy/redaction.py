"""Redaction of secrets from outbound prompts (seed 000 §8.7).

Every built-in pattern is an RE2 expression, and so is every pattern a bundle adds: RE2 matches in
time linear in the text whatever the pattern (no backtracking), so a megabyte of adversarial input
or an administrator's careless pattern cannot stall the agent. The built-ins are one alternation,
scanned in one pass; a match is replaced by ``[REDACTED:<kind>]`` — for assignments and URLs only the
secret part, so the model still sees which setting it was.

Kinds: ``private_key`` (PEM and PGP private key blocks, also cut off ones), ``aws_access_key``
(AKIA…, ASIA…), ``aws_secret_key`` (40 characters assigned to an ``aws…secret…`` name),
``bearer_token`` and ``basic_auth`` (``Authorization`` values), ``url_password``
(``scheme://user:password@``), ``github_token`` (``ghp_``, ``gho_``, ``ghu_``, ``ghs_``, ``ghr_``,
``github_pat_``), ``slack_token`` (``xox?-``, ``xapp-``), ``stripe_key`` (``sk_``/``rk_`` live and
test), ``google_api_key`` (``AIza…``), ``anthropic_key`` (``sk-ant-…``), ``openai_key`` (``sk-…``),
``jwt`` and ``secret_assignment`` (``password=``, ``api_key:``, ``client_secret=`` … with a value).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

from contracts.events import RedactionAppliedPayload
from contracts.messages import ConversationMessage
from contracts.policy import RedactionPolicy

__all__ = ["BUILTIN_KINDS", "RedactionResult", "Redactor", "RedactorError", "redact"]

_SECRET_NAME = (
    r"(?:password|passwd|pwd|passphrase|secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token"
    r"|refresh[_-]?token|client[_-]?secret|private[_-]?key|secret[_-]?key)"
)

# (kind, pattern). A pattern's groups named ``v…`` hold the secret; without one the whole match is.
# Order matters where two could match at the same place: the first listed wins.
_BUILTINS: tuple[tuple[str, str], ...] = (
    (
        "private_key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s:,.-]*)",
    ),
    ("aws_access_key", r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}\b"),
    (
        "aws_secret_key",
        r"(?i:aws[A-Za-z0-9_.-]*secret[A-Za-z0-9_.-]*)[\"']?\s*[:=]\s*[\"']?(?P<v_aws>[A-Za-z0-9/+=]{40})\b",
    ),
    ("bearer_token", r"(?i:\bbearer)\s+(?P<v_bearer>[A-Za-z0-9\-._~+/]{12,}=*)"),
    ("basic_auth", r"(?i:\bauthorization\s*:\s*basic)\s+(?P<v_basic>[A-Za-z0-9+/]{8,}=*)"),
    ("url_password", r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@\[\]]+:(?P<v_url>[^\s/?#@\[\]]+)@"),
    ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b"),
    ("slack_token", r"\b(?:xox[abposr]|xapp)-[A-Za-z0-9-]{10,}"),
    ("stripe_key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
    (
        "secret_assignment",
        r"(?i:[A-Za-z0-9_.-]*" + _SECRET_NAME + r"[A-Za-z0-9_]*)[\"']?\s*[:=]\s*"
        r"(?:\"(?P<v_dq>[^\"\r\n]{4,})\"|'(?P<v_sq>[^'\r\n]{4,})'|(?P<v_bare>[^\s\"'`,;()\[\]{}<>]{6,}))",
    ),
)

BUILTIN_KINDS: tuple[str, ...] = tuple(kind for kind, _ in _BUILTINS)

_PLACEHOLDERS = frozenset(
    {"none", "null", "true", "false", "undefined", "nil", "empty", "changeme", "redacted"}
)


class RedactorError(ValueError):
    """A redaction pattern from the bundle does not compile as RE2."""

    def __init__(self, kind: str, problem: str) -> None:
        super().__init__(f"redaction pattern {kind!r} is not valid RE2: {problem}")
        self.kind = kind


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 would print parse errors to stderr; they are raised instead
    options.max_mem = 64 << 20
    return options


def _compile(pattern: str, kind: str) -> Any:
    try:
        return re2.compile(pattern, options=_options())
    except re2.error as exc:
        raise RedactorError(kind, str(exc.args[0] if exc.args else exc)) from exc


@dataclass(frozen=True, slots=True)
class RedactionResult:
    text: str
    counts: Mapping[str, int]
    """Matches replaced, by kind."""

    @property
    def count(self) -> int:
        return sum(self.counts.values())

    @property
    def kinds(self) -> list[str]:
        return sorted(self.counts)

    def event_payload(self) -> RedactionAppliedPayload | None:
        """The ``redaction_applied`` event's payload, or None when nothing was redacted."""
        if not self.counts:
            return None
        return RedactionAppliedPayload(count=self.count, kinds=self.kinds)


class Redactor:
    """The built-in patterns plus a bundle's own; ``enabled=False`` returns every text unchanged."""

    __slots__ = ("_builtin", "_enabled", "_extra", "_groups", "_seen")

    def __init__(self, policy: RedactionPolicy | None = None) -> None:
        policy = policy or RedactionPolicy()
        self._enabled = policy.enabled
        combined = "|".join(f"(?P<k_{kind}>{pattern})" for kind, pattern in _BUILTINS)
        self._builtin = _compile(combined, "built-in")
        self._groups = [(kind, f"k_{kind}") for kind in BUILTIN_KINDS]
        self._extra = [(extra.kind, _compile(extra.pattern, extra.kind)) for extra in policy.extra_patterns]
        # Thread messages never change once added, and every LLM call sends them again: each one is
        # redacted once, remembered by identity for as long as it is still being sent.
        self._seen: dict[int, tuple[ConversationMessage, ConversationMessage, dict[str, int]]] = {}

    @property
    def enabled(self) -> bool:
        return self._enabled

    def redact(self, text: str) -> RedactionResult:
        if not self._enabled or not text:
            return RedactionResult(text, {})
        counts: Counter[str] = Counter()

        def replace(match: Any) -> str:
            kind = next(kind for kind, group in self._groups if match.group(group) is not None)
            whole = match.group(0)
            value_group = next(
                (name for name in ("v_aws", "v_bearer", "v_basic", "v_url", "v_dq", "v_sq", "v_bare")
                 if match.group(name) is not None),
                None,
            )  # fmt: skip
            if value_group is None:
                counts[kind] += 1
                return f"[REDACTED:{kind}]"
            value = match.group(value_group)
            if kind == "secret_assignment" and _looks_like_code(value, match, text, value_group):
                return str(whole)
            start, end = match.span(self._builtin.groupindex[value_group])
            offset = match.start()
            counts[kind] += 1
            return f"{whole[: start - offset]}[REDACTED:{kind}]{whole[end - offset :]}"

        redacted: str = self._builtin.sub(replace, text)
        for kind, pattern in self._extra:

            def replace_extra(match: Any, kind: str = kind) -> str:
                if not match.group(0):
                    return ""
                counts[kind] += 1
                return f"[REDACTED:{kind}]"

            redacted = pattern.sub(replace_extra, redacted)
        return RedactionResult(redacted, dict(counts))

    def redact_messages(
        self, messages: Sequence[ConversationMessage]
    ) -> tuple[list[ConversationMessage], RedactionResult]:
        """The messages as they should be sent: changed ones are copies, the thread is untouched.
        Tool-call arguments are redacted too (they are sent back to the model with its messages).
        The result's ``text`` is empty; its counts cover every message."""
        counts: Counter[str] = Counter()
        out: list[ConversationMessage] = []
        seen: dict[int, tuple[ConversationMessage, ConversationMessage, dict[str, int]]] = {}
        for message in messages:
            known = self._seen.get(id(message))
            if known is not None and known[0] is message:
                seen[id(message)] = known
                out.append(known[1])
                if known[2]:  # most messages hold nothing to redact: skip Counter's slow update
                    counts.update(known[2])
                continue
            before = Counter(counts)
            content = self.redact(message.content)
            counts.update(content.counts)
            update: dict[str, Any] = {}
            if content.counts:
                update["content"] = content.text
            if message.tool_calls:
                calls = []
                changed = False
                for call in message.tool_calls:
                    arguments, call_counts = self._redact_value(call.arguments)
                    if call_counts:
                        counts.update(call_counts)
                        changed = True
                        calls.append(call.model_copy(update={"arguments": arguments}))
                    else:
                        calls.append(call)
                if changed:
                    update["tool_calls"] = calls
            sent = message.model_copy(update=update) if update else message
            out.append(sent)
            seen[id(message)] = (message, sent, dict(counts - before))
        self._seen = seen
        return out, RedactionResult("", dict(counts))

    def _redact_value(self, value: Any) -> tuple[Any, Counter[str]]:
        counts: Counter[str] = Counter()
        if isinstance(value, str):
            result = self.redact(value)
            counts.update(result.counts)
            return result.text, counts
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                out[key], item_counts = self._redact_value(item)
                counts.update(item_counts)
            return out, counts
        if isinstance(value, list):
            items = []
            for item in value:
                redacted, item_counts = self._redact_value(item)
                items.append(redacted)
                counts.update(item_counts)
            return items, counts
        return value, counts


def _looks_like_code(value: str, match: Any, text: str, group: str) -> bool:
    """An assignment whose value is a placeholder or code (``api_key: Optional[str]``,
    ``password = os.environ["X"]``, ``secret=${SECRET}``) rather than a secret."""
    if value.casefold() in _PLACEHOLDERS or value[0] in "$%<{*[" or value.startswith("REDACTED"):
        return True
    if group == "v_bare":
        following = text[match.end() : match.end() + 1]
        if following in ("(", "[", "."):
            return True
    return False


@functools.cache
def _default_redactor() -> Redactor:
    return Redactor()


def redact(text: str) -> tuple[str, dict[str, int]]:
    """``text`` with the built-in kinds of secret replaced, and how many of each."""
    result = _default_redactor().redact(text)
    return result.text, dict(result.counts)
