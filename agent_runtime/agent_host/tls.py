"""TLS contexts for the runtime's HTTP clients (the LLM gateway and the backend services).

Building a verifying context loads the CA bundle, about 20 ms on the way to the first LLM request,
so every client of the process shares one per ``trust_env`` setting. A plain-http endpoint (the
embedded local backend, a local gateway) gets a verifying context without any CA: the clients follow
no redirects, so it is never used, and it would trust nothing if it were.
"""

from __future__ import annotations

import functools
import ssl

import httpx

__all__ = ["tls_context"]


def tls_context(url: str, *, trust_env: bool) -> ssl.SSLContext:
    if url.lower().startswith("https:"):
        return _verifying(trust_env)
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


@functools.cache
def _verifying(trust_env: bool) -> ssl.SSLContext:
    # trust_env: SSL_CERT_FILE / SSL_CERT_DIR are honoured, as httpx does by default.
    return httpx.create_ssl_context(trust_env=trust_env)
