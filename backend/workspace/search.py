"""Full-text search over a workspace: what is indexed, how a query reads, and ranking where the store
has no search engine of its own.

What is indexed (:func:`history_documents`, :func:`artifact_documents`) is decided here, once, for every
store: a ``session_history`` snapshot gives one document per message (user, assistant — with the tool
calls it made — and tool; not the system prompt), a text artifact (``text/*``, JSON, XML, YAML…, valid
UTF-8) one per part of its text. Long texts are split into parts of at most :data:`PART_CHARS`
characters, at most :data:`MAX_PARTS` per message or artifact; text past that is not searchable. A hit
names the message or artifact (the best part of it), never a part.

Words are what SQLite FTS5's ``unicode61`` tokenizer (``remove_diacritics 2``) calls tokens: runs of
letters and digits, lowercased, accents removed. :func:`tokens` follows the same rule, so the local store
(FTS5, :mod:`backend.storage.local.search`) and the stores ranked here (memory; AWS) match the same
documents. A query's words match any document holding any of them (quoted words: all of them, in that
order); documents are ranked by BM25 — more of the query's rarer words, in a shorter text, rank higher.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from backend.common.ids import parse_timestamp, timestamp
from contracts.enums import Role
from contracts.messages import SessionHistory

__all__ = [
    "MAX_PARTS",
    "MAX_QUERY_TERMS",
    "PART_CHARS",
    "SNIPPET_TOKENS",
    "SearchDocument",
    "SearchHit",
    "SearchPage",
    "SearchQuery",
    "artifact_documents",
    "best_per_source",
    "history_documents",
    "is_text_type",
    "parse_query",
    "rank",
    "snippet",
    "tokens",
]

PART_CHARS = 8_000
"""A document's text is at most this long: long texts are split, so a hit's snippet comes from the
passage that matched and one huge tool output does not outweigh every message by its length alone."""
MAX_PARTS = 32
"""Parts indexed per message or artifact: its first 256 000 characters are searchable."""
MAX_QUERY_TERMS = 16
SNIPPET_TOKENS = 24
_TOOL_CALL_CHARS = 2_000
_K1, _B = 1.2, 0.75
"""BM25's usual constants, as FTS5's ``bm25()`` uses them."""

_TOKEN = re.compile(r"[^\W_]+")
_QUOTED = re.compile(r'"([^"]*)"')
_TEXT_TYPES = re.compile(
    r"^(text/.+|application/(json|xml|yaml|x-yaml|toml|x-toml|javascript|x-ndjson|sql|x-sh|x-python"
    r"|[a-z0-9.+-]+\+(json|xml)))$"
)

Kind = Literal["message", "artifact"]


@dataclass(frozen=True, slots=True)
class SearchDocument:
    """One searchable text: a message (or part of one) or part of an artifact."""

    kind: Kind
    ref_id: str
    """The message's ``messageId``, or the artifact's ``artifactId``."""
    part: int
    session_id: str
    task_id: str | None
    role: Role | None
    name: str | None
    """An artifact's name."""
    at: datetime
    text: str

    @property
    def key(self) -> str:
        """Unique within one artifact's documents."""
        return f"{self.kind}:{self.ref_id}:{self.part}"

    def metadata(self) -> dict[str, Any]:
        """Everything but the text, as plain JSON (what stores keep beside their text index)."""
        return {
            "kind": self.kind,
            "refId": self.ref_id,
            "part": self.part,
            "sessionId": self.session_id,
            "taskId": self.task_id,
            "role": None if self.role is None else self.role.value,
            "name": self.name,
            "at": timestamp(self.at),
        }

    def to_document(self) -> dict[str, Any]:
        return {**self.metadata(), "text": self.text}

    @classmethod
    def from_document(cls, document: dict[str, Any], text: str | None = None) -> SearchDocument:
        role = document.get("role")
        kind: Kind = "message" if document["kind"] == "message" else "artifact"
        return cls(
            kind=kind,
            ref_id=document["refId"],
            part=int(document["part"]),
            session_id=document["sessionId"],
            task_id=document.get("taskId"),
            role=None if role is None else Role(role),
            name=document.get("name"),
            at=parse_timestamp(document["at"]),
            text=document.get("text", "") if text is None else text,
        )


@dataclass(frozen=True, slots=True)
class SearchQuery:
    text: str
    terms: tuple[tuple[str, ...], ...]
    """Each term is a word, or the words of a quoted phrase, as :func:`tokens` makes them."""
    limit: int = 10
    session_id: str | None = None

    def fts5(self) -> str:
        """The query as an FTS5 MATCH expression: every term a quoted phrase, joined by OR, so no word
        of the user's is read as FTS5 syntax (``AND``, ``NEAR``, ``*``, ``:``, ``^``)."""
        return " OR ".join('"' + " ".join(term).replace('"', '""') + '"' for term in self.terms)


@dataclass(frozen=True, slots=True)
class SearchHit:
    document: SearchDocument
    """The matching document; its ``text`` may be empty where the store returns a snippet only."""
    artifact_id: str
    """The artifact the document came from (a message's: its session's ``session_history``)."""
    snippet: str
    score: float
    """Higher is better."""


@dataclass(frozen=True, slots=True)
class SearchPage:
    hits: list[SearchHit] = field(default_factory=list)
    truncated: bool = False


def _fold(text: str) -> str:
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()


def tokens(text: str) -> list[str]:
    """The words of ``text``, as FTS5's ``unicode61 remove_diacritics 2`` tokenizer makes them."""
    return _TOKEN.findall(_fold(text))


def parse_query(text: str, *, limit: int = 10, session_id: str | None = None) -> SearchQuery:
    """``text`` as search terms: quoted phrases and single words, at most :data:`MAX_QUERY_TERMS`,
    duplicates dropped. A query with no word in it has no terms (the caller refuses it)."""
    terms: list[tuple[str, ...]] = []
    rest = _QUOTED.sub(" ", text)
    for phrase in _QUOTED.findall(text):
        words = tuple(tokens(phrase))
        if words:
            terms.append(words)
    terms.extend((word,) for word in tokens(rest))
    unique = tuple(dict.fromkeys(terms))[:MAX_QUERY_TERMS]
    return SearchQuery(text=text, terms=unique, limit=limit, session_id=session_id)


def is_text_type(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return bool(_TEXT_TYPES.match(media))


def _parts(text: str) -> list[str]:
    """``text`` cut into parts of at most :data:`PART_CHARS`: at a line break in the part's last fifth,
    else at a space there, else anywhere."""
    parts: list[str] = []
    start = 0
    while start < len(text) and len(parts) < MAX_PARTS:
        end = start + PART_CHARS
        if end < len(text):
            window = text[start + PART_CHARS * 4 // 5 : end]
            cut = window.rfind("\n")
            if cut < 0:
                cut = window.rfind(" ")
            if cut >= 0:
                end = start + PART_CHARS * 4 // 5 + cut + 1
        piece = text[start:end]
        if piece.strip():
            parts.append(piece)
        start = end
    return parts


def _tool_calls_text(calls: Iterable[Any]) -> str:
    lines = []
    for call in calls:
        arguments = json.dumps(call.arguments, ensure_ascii=False)
        lines.append(f"{call.tool_name} {arguments[:_TOOL_CALL_CHARS]}")
    return "\n".join(lines)


def history_documents(history: SessionHistory) -> list[SearchDocument]:
    """The searchable documents of a ``session_history`` snapshot: its messages but the system's."""
    documents: list[SearchDocument] = []
    for message in history.messages:
        if message.role is Role.SYSTEM:
            continue
        text = message.content
        if message.tool_calls:
            text = (
                f"{text}\n{_tool_calls_text(message.tool_calls)}"
                if text
                else _tool_calls_text(message.tool_calls)
            )
        if message.role is Role.TOOL and message.tool_name:
            text = f"{message.tool_name}: {text}"
        for part, piece in enumerate(_parts(text)):
            documents.append(
                SearchDocument(
                    kind="message",
                    ref_id=message.message_id,
                    part=part,
                    session_id=history.session_id,
                    task_id=message.task_id,
                    role=message.role,
                    name=None,
                    at=message.timestamp,
                    text=piece,
                )
            )
    return documents


def artifact_documents(
    *,
    artifact_id: str,
    session_id: str,
    task_id: str | None,
    name: str,
    content_type: str,
    at: datetime,
    data: bytes,
) -> list[SearchDocument]:
    """The searchable documents of an artifact's content: none unless it is text (by its declared
    type, valid UTF-8 and free of NUL bytes)."""
    if not is_text_type(content_type) or b"\x00" in data[: MAX_PARTS * PART_CHARS * 4]:
        return []
    # UTF-8 takes at most 4 bytes a character: more than this can never be indexed anyway.
    head = data[: MAX_PARTS * PART_CHARS * 4]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:
            return []
        text = head[: exc.start].decode("utf-8")  # only the cut through the last character failed
    return [
        SearchDocument(
            kind="artifact",
            ref_id=artifact_id,
            part=part,
            session_id=session_id,
            task_id=task_id,
            role=None,
            name=name,
            at=at,
            text=piece,
        )
        for part, piece in enumerate(_parts(text))
    ]


def _occurrences(words: Sequence[str], term: tuple[str, ...]) -> int:
    if len(term) == 1:
        return words.count(term[0])
    first, width = term[0], len(term)
    return sum(
        1 for index, word in enumerate(words) if word == first and tuple(words[index : index + width]) == term
    )


def rank(candidates: Iterable[tuple[str, SearchDocument]], query: SearchQuery) -> list[SearchHit]:
    """The documents matching ``query``, best first, one per message or artifact — BM25, as FTS5 ranks.

    ``candidates`` are ``(artifactId, document)`` pairs of one workspace, already filtered by tenant,
    workspace and session; inverse document frequencies are computed over them.
    """
    if not query.terms:
        return []
    firsts = {term[0] for term in query.terms}
    scored: list[tuple[str, SearchDocument, int, list[int]]] = []
    total = 0
    lengths = 0
    for artifact_id, document in candidates:
        total += 1
        folded = _fold(document.text)
        lengths += len(folded)
        # A cheap substring test first: most documents hold no query word at all, and tokenizing every
        # one of them would cost far more than this.
        if not any(first in folded for first in firsts):
            continue
        words = _TOKEN.findall(folded)
        counts = [_occurrences(words, term) for term in query.terms]
        if any(counts):
            scored.append((artifact_id, document, len(folded), counts))
    if not scored:
        return []
    size = total
    average = max(1.0, lengths / max(total, 1))
    frequencies = [sum(1 for item in scored if item[3][index]) for index in range(len(query.terms))]
    hits: list[SearchHit] = []
    for artifact_id, document, length, counts in scored:
        score = 0.0
        for index, count in enumerate(counts):
            if not count:
                continue
            idf = math.log(1 + (size - frequencies[index] + 0.5) / (frequencies[index] + 0.5))
            score += idf * count * (_K1 + 1) / (count + _K1 * (1 - _B + _B * length / average))
        hits.append(SearchHit(document=document, artifact_id=artifact_id, snippet="", score=score))
    best = best_per_source(sorted(hits, key=_order))[: query.limit]
    return [
        SearchHit(
            document=hit.document,
            artifact_id=hit.artifact_id,
            snippet=snippet(hit.document.text, query),
            score=hit.score,
        )
        for hit in best
    ]


def _order(hit: SearchHit) -> tuple[float, float]:
    # Best score first; among equals the newest.
    return (-hit.score, -hit.document.at.timestamp())


def best_per_source(hits: Iterable[SearchHit]) -> list[SearchHit]:
    """``hits`` (best first) with only the first — best — part of each message or artifact."""
    seen: set[tuple[str, str, str]] = set()
    kept: list[SearchHit] = []
    for hit in hits:
        source = (hit.artifact_id, hit.document.kind, hit.document.ref_id)
        if source not in seen:
            seen.add(source)
            kept.append(hit)
    return kept


def snippet(text: str, query: SearchQuery, size: int = SNIPPET_TOKENS) -> str:
    """The window of ``size`` words of ``text`` holding the most query words, matches in ``**bold**``
    and cuts marked ``…`` — what FTS5's ``snippet()`` makes, so every store's snippets read alike."""
    spans = [(match.start(), match.end()) for match in _TOKEN.finditer(text)]
    if not spans:
        return ""
    words = [_fold(text[start:end]) for start, end in spans]
    matched = [False] * len(words)
    for term in query.terms:
        width = len(term)
        for index in range(len(words) - width + 1):
            if words[index] == term[0] and tuple(words[index : index + width]) == term:
                for offset in range(width):
                    matched[index + offset] = True
    first = 0
    best = -1
    for start in range(max(1, len(words) - size + 1)):
        count = sum(matched[start : start + size])
        if count > best:
            best, first = count, start
    last = min(len(words), first + size)
    pieces: list[str] = []
    cursor = spans[first][0]
    for index in range(first, last):
        start, end = spans[index]
        pieces.append(text[cursor:start])
        word = text[start:end]
        pieces.append(f"**{word}**" if matched[index] else word)
        cursor = end
    body = " ".join("".join(pieces).split())
    return ("…" if first > 0 else "") + body + ("…" if last < len(words) else "")
