"""Tool routing: how the agent host reaches the tools (seed 000 §7).

The host depends only on the :class:`ToolRouter` protocol; the tool runtime
(``agent_runtime.tool_runtime``) implements it, and one composition root wires the two together.
Neither package imports the other (docs/architecture/index.md "Boundaries", checked by import-linter).

:class:`ToolDispatch` is the host's side of every call: the tools offered to the model (§5.2),
``prepare`` (capability, resolved paths, the facts the policy checks), ``execute`` (per-category
timeouts, artifact upload) and the session's patch preview.
"""

from agent_runtime.agent_host.routing.artifacts import MAX_UPLOAD_BYTES, ArtifactUploader
from agent_runtime.agent_host.routing.dispatch import PreparedCall, RedirectVetter, ToolDispatch
from agent_runtime.agent_host.routing.errors import PathRejected, RoutingError
from agent_runtime.agent_host.routing.patches import PatchTracker
from agent_runtime.agent_host.routing.paths import resolve_path
from agent_runtime.agent_host.routing.protocol import ToolRouter
from agent_runtime.agent_host.routing.read_scope import PolicyReadScope
from agent_runtime.agent_host.routing.timeouts import DEFAULT_TIMEOUTS, ToolTimeouts

__all__ = [
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
]
