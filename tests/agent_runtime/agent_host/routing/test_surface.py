"""The routing package's public surface is exactly what the rest of the host builds on."""

from __future__ import annotations

import agent_runtime.agent_host.routing as routing


def test_the_public_surface_is_pinned() -> None:
    assert set(routing.__all__) == {
        "DEFAULT_TIMEOUTS",
        "MAX_UPLOAD_BYTES",
        "ArtifactUploader",
        "PatchTracker",
        "PathRejected",
        "PolicyReadScope",
        "PreparedCall",
        "RedirectVetter",
        "RoutingError",
        "ToolDispatch",
        "ToolRouter",
        "ToolTimeouts",
        "resolve_path",
    }
    for name in routing.__all__:
        assert getattr(routing, name) is not None


def test_the_default_timeouts_are_the_seeds() -> None:
    # seed 000 §7.4: file 30 s, shell 300 s, network 60 s, remote tools 120 s.
    defaults = routing.DEFAULT_TIMEOUTS
    assert (defaults.file_s, defaults.shell_s, defaults.network_s, defaults.other_s) == (30, 300, 60, 120)
