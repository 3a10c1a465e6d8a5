"""The desktop ⇄ runtime wire below JSON-RPC: framing, peer authentication, transports, clients.

Shared by every end so that one codec and one handshake exist: the runtime's server
(``agent_runtime.agent_host.session.rpc``), the desktop's Qt client (``desktop.ipc``) and the plain
asyncio client and listener here, used by tests, tooling, benchmarks and headless clients.
"""
