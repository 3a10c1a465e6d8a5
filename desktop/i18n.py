"""All user-visible text of the desktop goes through `translate(context, text)`.

Qt's `lupdate` finds these calls (a free function named `translate` with a literal context and
text), and the window installs Qt's translator behind it at start. Until then, and in the Qt-free
parts (`desktop.conversation`, `cowork exec`), the text is returned as written. Text with values in
it is translated first and formatted after: `translate("Status", "Step {n} of {total}").format(...)`.
"""

from __future__ import annotations

from collections.abc import Callable

_translator: Callable[[str, str], str] | None = None


def translate(context: str, text: str) -> str:
    """The text in the user's language, or as written when no translation is installed."""
    return text if _translator is None else _translator(context, text)


def install(translator: Callable[[str, str], str] | None) -> None:
    """Route `translate` through `translator` (the window passes Qt's); None restores the source text."""
    global _translator
    _translator = translator
