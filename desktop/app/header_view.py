"""The conversation's header: its title and folder; the model its next task calls (a combo the user
may change, or type any model name into) and the gateway it goes through; the tokens it used and what
they cost, estimated from the price table in Settings."""

from __future__ import annotations

import os
from collections.abc import Callable
from urllib.parse import urlsplit

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from desktop.conversation.pricing import PriceTable, Usage, format_cost, format_tokens
from desktop.conversation.session import ConversationSession
from desktop.i18n import translate
from desktop.settings.store import SettingsError, SettingsStore

__all__ = ["ConversationHeader", "saved_prices", "settings_model", "usage_text", "usage_tooltip"]


def saved_prices() -> PriceTable:
    """The price table kept in the settings file (the defaults when none is saved)."""
    return SettingsStore().prices()


def settings_model() -> str:
    """The model a runtime started now would call: ``LLM_GATEWAY_MODEL``, else Settings'."""
    chosen = os.environ.get("LLM_GATEWAY_MODEL")
    if chosen:
        return chosen
    try:
        return SettingsStore().load().model
    except SettingsError:
        return ""


def usage_text(usage: Usage, prices: PriceTable) -> str:
    """``12.3k tokens · ≈ $0.04``; the price is unknown when a model used has none in the table."""
    total = usage.total
    if total.calls == 0:
        return translate("Header", "No tokens used yet")
    tokens = translate("Header", "{tokens} tokens").format(tokens=format_tokens(total.total))
    estimate = usage.estimate(prices)
    if estimate.known:
        cost = translate("Header", "≈ {cost}").format(cost=format_cost(estimate.cost))
    else:
        cost = translate("Header", "unknown price ({models})").format(models=", ".join(estimate.unpriced))
    return f"{tokens} · {cost}"


def usage_tooltip(usage: Usage, prices: PriceTable) -> str:
    """Every model's tokens by kind, and its share of the cost."""
    if not usage.by_model:
        return translate("Header", "The tokens and estimated cost of this conversation appear here.")
    lines = []
    for model, used in sorted(usage.by_model.items()):
        price = prices.price_of(model)
        cost = (
            format_cost(price.cost(used))
            if price is not None
            else translate("Header", "unknown price: add it in Settings → Prices")
        )
        lines.append(
            translate(
                "Header",
                "{model}: {input} input, {output} output, {cache_read} cache read, {cache_write} cache"
                " write tokens in {calls} calls — {cost}",
            ).format(
                model=model,
                input=used.input_tokens,
                output=used.output_tokens,
                cache_read=used.cache_read_tokens,
                cache_write=used.cache_write_tokens,
                calls=used.calls,
                cost=cost,
            )
        )
    lines.append(
        translate("Header", "Estimated from the price table in Settings; your provider's bill is final.")
    )
    return "\n".join(lines)


class ConversationHeader(QWidget):
    model_chosen = Signal(object)
    """The model for the conversation's next tasks: a name, or ``None`` for the one Settings name."""

    def __init__(
        self,
        *,
        prices: Callable[[], PriceTable] = PriceTable,
        settings_model: Callable[[], str] = lambda: "",
        parent: QWidget | None = None,
    ) -> None:
        """``prices``: the price table now; ``settings_model``: the model Settings name (shown until the
        conversation's runtime says which one it was started with)."""
        super().__init__(parent)
        self._prices = prices
        self._settings_model = settings_model
        self._session: ConversationSession | None = None
        self._filling = False
        self.title = QLabel()
        self.title.setObjectName("conversationTitle")
        self.folder = QLabel()
        self.folder.setObjectName("conversationFolder")
        self.model_label = QLabel(translate("Header", "&Model:"))
        self.model_combo = QComboBox()
        self.model_combo.setEditable(True)
        self.model_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model_combo.setMinimumContentsLength(18)
        self.model_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.model_combo.setAccessibleName(translate("Header", "Model for the next task"))
        self.model_combo.setToolTip(
            translate(
                "Header",
                "The model this conversation's next task calls. Choose one, or type a model name your"
                " gateway serves; the organisation's policy may refuse it.",
            )
        )
        self.model_label.setBuddy(self.model_combo)
        self.model_combo.activated.connect(lambda _index: self._chosen())
        line = self.model_combo.lineEdit()
        if line is not None:
            line.editingFinished.connect(self._chosen)
        self.gateway = QLabel()
        self.gateway.setObjectName("conversationGateway")
        self.usage = QLabel()
        self.usage.setObjectName("conversationUsage")
        self.usage.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.title, 1)
        top.addWidget(self.folder)
        bottom = QHBoxLayout()
        bottom.setContentsMargins(0, 0, 0, 0)
        bottom.addWidget(self.model_label)
        bottom.addWidget(self.model_combo)
        bottom.addWidget(self.gateway)
        bottom.addStretch(1)
        bottom.addWidget(self.usage)
        column = QVBoxLayout(self)
        column.setContentsMargins(12, 8, 12, 0)
        column.setSpacing(2)
        column.addLayout(top)
        column.addLayout(bottom)
        self.show_session(None)

    def show_session(self, session: ConversationSession | None) -> None:
        """Show ``session``'s model, gateway and usage (hidden when no conversation is open)."""
        self._session = session
        for widget in (self.model_label, self.model_combo, self.gateway, self.usage):
            widget.setVisible(session is not None)
        if session is None:
            return
        prices = self._prices()
        default = self.default_model()
        shown = session.model or default
        line = self.model_combo.lineEdit()
        # Status changes arrive while a task runs: what the user is typing stays until they are done.
        if line is None or not line.hasFocus():
            self._filling = True
            try:
                known = sorted({default, *prices.prices} - {""})
                if [self.model_combo.itemText(i) for i in range(self.model_combo.count())] != known:
                    self.model_combo.clear()
                    self.model_combo.addItems(known)
                if self.model_combo.currentText() != shown:
                    self.model_combo.setCurrentText(shown)
            finally:
                self._filling = False
        endpoint = session.state.gateway_endpoint
        if endpoint:
            host = urlsplit(endpoint).netloc or endpoint
            self.gateway.setText(translate("Header", "via {gateway}").format(gateway=host))
            self.gateway.setToolTip(translate("Header", "LLM gateway: {endpoint}").format(endpoint=endpoint))
        else:
            self.gateway.setText(translate("Header", "gateway chosen when the conversation starts"))
            self.gateway.setToolTip("")
        used = session.state.model_used
        if used and used != shown:
            self.gateway.setText(
                self.gateway.text() + translate("Header", " · last answer by {model}").format(model=used)
            )
        self.usage.setText(usage_text(session.state.usage, prices))
        self.usage.setToolTip(usage_tooltip(session.state.usage, prices))
        self.usage.setAccessibleName(self.usage.text())

    def default_model(self) -> str:
        """The model the conversation calls unless the user chose another: its runtime's, or Settings'."""
        session = self._session
        started = session.state.gateway_model if session is not None else None
        return started or self._settings_model()

    def _chosen(self) -> None:
        if self._filling or self._session is None:
            return
        text = " ".join(self.model_combo.currentText().split())
        chosen = None if not text or text == self.default_model() else text
        if chosen != self._session.model:
            self.model_chosen.emit(chosen)
