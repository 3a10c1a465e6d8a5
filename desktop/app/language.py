"""The app's language: Qt's translators for Cowork's catalogue and Qt's own, behind ``translate``.

The language is the one chosen in Settings (``system``, ``en`` or ``de``; applied at start), and for
``system`` the first of the operating system's UI languages Cowork has a catalogue for, else English.
Two catalogues are loaded: ``desktop/translations/cowork_<lang>.qm`` (the app's text) and Qt's
``qtbase_<lang>.qm`` (the standard buttons and dialogs: Cancel, Save, the file dialog). Qt's is looked
for beside the app's first — the installed app ships it there — then in PySide6's translations folder.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

from desktop import i18n

__all__ = ["CATALOGUE_DIR", "AppLanguage", "resolve_language"]

logger = logging.getLogger(__name__)

CATALOGUE_DIR = Path(__file__).resolve().parent.parent / "translations"
"""Package data, frozen beside the modules too (``installer/cowork.spec``)."""


def resolve_language(choice: str, ui_languages: Sequence[str]) -> str:
    """The language to show: ``choice`` unless it is ``system`` (or unknown), then the first of the
    system's ``ui_languages`` (``de-DE``, ``en_GB``…) with a catalogue, else English."""
    if choice in i18n.LANGUAGES and choice != i18n.SYSTEM_LANGUAGE:
        return choice
    for tag in ui_languages:
        language = tag.replace("_", "-").split("-")[0].lower()
        if language == "en" or language in i18n.TRANSLATED_LANGUAGES:
            return language
    return "en"


class AppLanguage:
    """The translators installed on the application; kept for as long as they are installed."""

    def __init__(self, app: QCoreApplication) -> None:
        self._app = app
        self._translators: list[QTranslator] = []
        self._locale_before: QLocale | None = None
        self.language = "en"

    def apply(self, choice: str, ui_languages: Sequence[str] | None = None) -> str:
        """Install the catalogues of ``choice`` (see :func:`resolve_language`; ``ui_languages``
        defaults to the system's); the language now shown. Text already on screen keeps its language:
        windows built afterwards show the new one."""
        self.remove()
        system = QLocale.system().uiLanguages() if ui_languages is None else ui_languages
        language = resolve_language(choice, system)
        self.language = language
        if language == "en":
            return language
        app_catalogue = self._load(f"cowork_{language}", [CATALOGUE_DIR])
        if app_catalogue is None:
            logger.warning("no catalogue for %s in %s: the app stays in English", language, CATALOGUE_DIR)
            self.language = "en"
            return "en"
        qt_dirs = [CATALOGUE_DIR, Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath))]
        if self._load(f"qtbase_{language}", qt_dirs) is None:
            logger.info("Qt's own catalogue for %s was not found: standard buttons stay in English", language)
        self._locale_before = QLocale()
        QLocale.setDefault(QLocale(language))  # dates and numbers, and Qt's dialogs, in the language too
        i18n.install(lambda context, text: QCoreApplication.translate(context, text))
        return language

    def remove(self) -> None:
        """Back to the source text (English)."""
        for translator in self._translators:
            self._app.removeTranslator(translator)
        self._translators.clear()
        i18n.install(None)
        if self._locale_before is not None:
            QLocale.setDefault(self._locale_before)
            self._locale_before = None
        self.language = "en"

    def _load(self, name: str, directories: Sequence[Path]) -> QTranslator | None:
        for directory in directories:
            translator = QTranslator()  # kept alive by ``_translators`` while installed
            if translator.load(name, str(directory)):
                self._app.installTranslator(translator)
                self._translators.append(translator)
                return translator
        return None
