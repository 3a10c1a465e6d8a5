"""Starting what a Cowork client needs — the backend, the LLM gateway settings, the agent runtime.

Qt-free, shared by the desktop window and ``cowork exec``: both start the runtime the same way, with
the same environment, so the headless mode exercises the runtime exactly as the desktop does.
"""
