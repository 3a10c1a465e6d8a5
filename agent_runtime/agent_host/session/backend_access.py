"""Where the session finds its backend: the environment, or the embedded backend's state file.

A client normally names the backend in ``COWORK_BACKEND_URL``/``COWORK_BACKEND_TOKEN`` (and pins its
policy keys in ``COWORK_POLICY_KEYS``). A client that starts the runtime while the embedded backend is
still starting names its state file in ``COWORK_BACKEND_STATE_FILE`` instead
(:mod:`contracts.local_backend`); the file is read when the session first calls the backend, which
the client does only once that backend is up. The URL wins when both are set.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from agent_runtime.agent_host.services import (
    POLICY_KEYS_VARIABLE,
    TOKEN_VARIABLE,
    URL_VARIABLE,
    BackendConfigError,
)
from contracts.local_backend import STATE_FILE_VARIABLE, read_state

__all__ = ["backend_variables"]


def backend_variables(environ: Mapping[str, str]) -> Mapping[str, str]:
    """``environ``, with the backend's URL, token and policy keys from the state file when it names
    the backend that way; unchanged otherwise. ``BackendConfigError`` if that file cannot be used."""
    path = environ.get(STATE_FILE_VARIABLE, "").strip()
    if environ.get(URL_VARIABLE, "").strip() or not path:
        return environ
    try:
        state = read_state(Path(path))
    except FileNotFoundError:
        raise BackendConfigError(
            STATE_FILE_VARIABLE, "names no running local backend (its state file does not exist)"
        ) from None
    except OSError as exc:
        raise BackendConfigError(STATE_FILE_VARIABLE, f"cannot be read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise BackendConfigError(STATE_FILE_VARIABLE, f"is not usable: {exc}") from None
    return {
        **environ,
        URL_VARIABLE: state.url,
        TOKEN_VARIABLE: state.token,
        POLICY_KEYS_VARIABLE: json.dumps(state.policy_keys),
    }
