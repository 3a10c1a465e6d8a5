"""All user-visible text of the desktop goes through `translate(context, text)`.

Qt's `lupdate` finds these calls (a free function named `translate` with a literal context and
text), and the window installs Qt's translator behind it at start. Until then, and in the Qt-free
parts (`desktop.conversation`, `cowork exec`), the text is returned as written. Text with values in
it is translated first and formatted after: `translate("Status", "Step {n} of {total}").format(...)`.

The catalogues are ``desktop/translations/cowork_<language>.ts`` (sources, kept complete by
``scripts/translations`` and its test) compiled to ``.qm`` beside them; :mod:`desktop.app.language`
loads them.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = [
    "LANGUAGES",
    "QT_TRANSLATE_NOOP",
    "SYSTEM_LANGUAGE",
    "TRANSLATED_LANGUAGES",
    "install",
    "translate",
]

SYSTEM_LANGUAGE = "system"
"""The language choice that follows the operating system's."""
TRANSLATED_LANGUAGES = ("de",)
"""Languages with a catalogue; English is the source text and needs none."""
LANGUAGES = (SYSTEM_LANGUAGE, "en", *TRANSLATED_LANGUAGES)
"""What Settings offers, as saved in the settings file (``ui.language``)."""

_translator: Callable[[str, str], str] | None = None


def translate(context: str, text: str) -> str:
    """The text in the user's language, or as written when no translation is installed."""
    return text if _translator is None else _translator(context, text)


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # the name lupdate looks for
    """Marks text for the catalogue where it is defined (a module-level table, made before any
    translator is installed); it is translated where shown: ``translate(context, TABLE[key])``."""
    return text


def install(translator: Callable[[str, str], str] | None) -> None:
    """Route `translate` through `translator` (the window passes Qt's); None restores the source text."""
    global _translator
    _translator = translator
