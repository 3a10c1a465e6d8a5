"""``cowork exec``: one task from a terminal, a script or CI, without the desktop window.

It starts the agent runtime exactly as the desktop does (``desktop.launch``) and speaks the same
JSON-RPC to it, over the runtime's stdio. Qt-free.
"""
