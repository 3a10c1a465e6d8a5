"""Telling a gateway's refusal of a request's images from its other refusals.

A model that reads text only answers a request with images with a 400 (:class:`LlmRejected`) in
its own words — "image input is not supported", "… is not a multimodal model", "… does not support
vision". Sent again, the images would fail every later request of the conversation too, so the
loop withdraws them from the thread (``ConversationThread.withdraw_images``) when this says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from contracts.messages import ConversationMessage

from .errors import LlmError, LlmRejected

__all__ = ["refuses_images"]

_IMAGE_WORDS = ("image", "vision", "multimodal", "multi-modal")


def refuses_images(error: LlmError, messages: Sequence[ConversationMessage]) -> bool:
    """Whether ``error`` is the gateway refusing the images among ``messages`` (the request's)."""
    if not isinstance(error, LlmRejected):
        return False
    if not any(image.data is not None for message in messages for image in message.images or ()):
        return False
    said = error.shape.message.lower()
    return any(word in said for word in _IMAGE_WORDS)
