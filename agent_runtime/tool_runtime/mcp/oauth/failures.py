"""The failure of one step of the authorization flow. ``OAuthAuth`` turns it into the
``McpAuthorizationError`` of the 401 or 403 it was answering, so the message is written to follow
"The MCP server requires authorization (HTTP 401): "."""

from __future__ import annotations

__all__ = ["AuthorizationFailed", "TokenRefused"]


class AuthorizationFailed(Exception):
    """A step of authorization failed; ``str()`` says what, in words for the user."""


class TokenRefused(AuthorizationFailed):
    """The token endpoint answered with an error (an expired or revoked refresh token, a bad code)."""
