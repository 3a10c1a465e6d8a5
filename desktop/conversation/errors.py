"""The one error type of the conversation logic: something the user can act on, said plainly."""

from __future__ import annotations

from desktop.conversation.banners import BannerAction

__all__ = ["ConversationError"]


class ConversationError(Exception):
    """``str()`` says what is wrong and what to do; ``action`` is the banner's button, if any."""

    def __init__(self, message: str, action: BannerAction | None = None) -> None:
        super().__init__(message)
        self.action = action
