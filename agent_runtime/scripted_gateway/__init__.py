"""The scripted LLM gateway: a real HTTP server that plays a script of model turns over SSE in the
Anthropic Messages and OpenAI Chat Completions dialects. It stands in for the external LLM gateway in
tests and benchmarks, and is the desktop's clearly labelled offline demo model.

It is its own program (``python -m agent_runtime.scripted_gateway``) and imports nothing of the agent
host or the tool runtime.
"""
