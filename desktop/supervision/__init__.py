"""The processes behind the window: one agent runtime per open conversation (``QProcess``, connected
over the desktop's local socket) and the services every runtime talks to (the backend — embedded
when none is configured — and the LLM gateway)."""
