"""The built-in tools (seed 003 §4); each depends only on ``platform`` and ``output``."""
