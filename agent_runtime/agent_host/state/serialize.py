"""The checkpoint's bytes, reusing each message's JSON from the previous write.

The thread is nearly all of a checkpoint and only grows by a few messages a step, yet pydantic would
re-encode all of it on every write (about 8 ms for 1,000 messages, half the 15 ms budget of a write).
Messages are never changed once they are in the thread — :class:`ConversationThread` only appends, and
restoring makes new objects with ``model_copy`` — so each message object's JSON is kept and spliced
into the envelope. An entry lives only while its message is in the latest checkpoint.

With ``images`` (the store's :meth:`~.images.ImageFiles.referenced` for the session), a message's
images are encoded as references to their files, written before the message's JSON exists; the
bytes then differ from :func:`serialize_checkpoint`'s only there.
"""

from __future__ import annotations

from collections.abc import Callable

from contracts.checkpoint import Checkpoint
from contracts.messages import ConversationMessage
from contracts.session_runtime import SessionRuntimeSnapshot

__all__ = ["CheckpointDocument", "CheckpointEncoder", "serialize_checkpoint"]

_EMPTY_THREAD = b'"thread":[]'
_EMPTY_MESSAGES = b'"messages":[]'

CheckpointDocument = Checkpoint | SessionRuntimeSnapshot
"""A checkpoint file's document: the v2 snapshot, or the legacy ``checkpointVersion: "1.0"`` form."""


def serialize_checkpoint(checkpoint: CheckpointDocument) -> bytes:
    """The checkpoint's wire JSON (camelCase, absent optional fields left out), as ``to_wire`` spells it."""
    return checkpoint.model_dump_json(by_alias=True, exclude_none=True).encode()


MessageImages = Callable[[ConversationMessage], ConversationMessage]
"""A message as the checkpoint keeps it: its images as references to files already written."""


def _message_json(message: ConversationMessage, images: MessageImages | None) -> bytes:
    if images is not None and message.images:
        message = images(message)
    return message.model_dump_json(by_alias=True, exclude_none=True).encode()


class CheckpointEncoder:
    """Encodes checkpoints byte for byte as :func:`serialize_checkpoint` does, faster on repeat.

    The cache is keyed by the message object (identity, held alive by the entry so the key cannot be
    reused): a message that is changed in place after a write would keep its old JSON. Not thread-safe;
    the store calls it under its lock.
    """

    def __init__(self) -> None:
        self._cache: dict[int, tuple[ConversationMessage, bytes]] = {}

    def encode(self, checkpoint: CheckpointDocument, images: MessageImages | None = None) -> bytes:
        cache: dict[int, tuple[ConversationMessage, bytes]] = {}
        previous = self._cache
        # The envelope without its thread has "thread":[] (v2: "messages":[]) exactly once: inside JSON
        # strings every quote is escaped, so that byte sequence can only be the key itself.
        if isinstance(checkpoint, SessionRuntimeSnapshot):
            thread = checkpoint.transcript.messages
            empty = checkpoint.transcript.model_copy(update={"messages": []})
            envelope = serialize_checkpoint(checkpoint.model_copy(update={"transcript": empty}))
            marker = _EMPTY_MESSAGES
        else:
            thread = checkpoint.thread
            envelope = serialize_checkpoint(checkpoint.model_copy(update={"thread": []}))
            marker = _EMPTY_THREAD
        head, tail = envelope.split(marker, 1)
        # One join into one buffer: each extra copy of a megabyte-sized checkpoint costs page faults.
        pieces: list[bytes] = [head, marker[:-1]]
        for message in thread:
            key = id(message)
            entry = previous.get(key)
            if entry is None or entry[0] is not message:
                entry = (message, _message_json(message, images))
            cache[key] = entry
            pieces.append(entry[1])
            pieces.append(b",")
        if thread:
            pieces.pop()
        pieces.append(b"]")
        pieces.append(tail)
        self._cache = cache
        return b"".join(pieces)

    def encode_after(
        self, snapshot: SessionRuntimeSnapshot, start: int, images: MessageImages | None = None
    ) -> tuple[bytes, list[bytes]]:
        """The snapshot's JSON with no messages, and the JSON of each message from ``start`` on: what an
        in-flight record holds. The messages' JSON is kept for the next :meth:`encode`."""
        empty = snapshot.transcript.model_copy(update={"messages": []})
        envelope = serialize_checkpoint(snapshot.model_copy(update={"transcript": empty}))
        pieces: list[bytes] = []
        for message in snapshot.transcript.messages[start:]:
            key = id(message)
            entry = self._cache.get(key)
            if entry is None or entry[0] is not message:
                entry = self._cache[key] = (message, _message_json(message, images))
            pieces.append(entry[1])
        return envelope, pieces

    def clear(self) -> None:
        self._cache = {}
