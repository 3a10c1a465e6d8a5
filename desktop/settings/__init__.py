"""The desktop's settings (seed 001 §1; docs/architecture/index.md, "The embedded default"):
``store`` (Qt-free: the settings file ``cowork exec`` reads too, tokens in the OS keychain),
``presets`` (Anthropic, OpenAI, Ollama, LiteLLM, the offline demo model) and ``dialog`` (Settings
and the first-run dialog).
"""
