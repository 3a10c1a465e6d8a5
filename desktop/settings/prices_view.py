"""Settings → Prices: what each model costs per million tokens (input, output, cache read, cache
write), for the conversation header's cost estimate. Starts from the saved table (or the defaults);
rows can be added, removed, or the defaults restored. A model not in the table has an unknown price."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.conversation.pricing import DEFAULT_PRICES, ModelPrice, PriceTable, PricingError
from desktop.i18n import translate

__all__ = ["PricesPage"]

MODEL, INPUT, OUTPUT, CACHE_READ, CACHE_WRITE = range(5)


class PricesPage(QWidget):
    def __init__(self, prices: PriceTable, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        intro = QLabel(
            translate(
                "Prices",
                "US dollars per million tokens, for the estimated cost shown above each conversation."
                " Leave a cache price empty to count cache tokens at the input price. A model missing"
                " here shows an unknown price.",
            )
        )
        intro.setWordWrap(True)
        self.table = QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(
            [
                translate("Prices", "Model"),
                translate("Prices", "Input"),
                translate("Prices", "Output"),
                translate("Prices", "Cache read"),
                translate("Prices", "Cache write"),
            ]
        )
        self.table.setAccessibleName(translate("Prices", "Prices per million tokens"))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setTabKeyNavigation(False)  # Tab leaves the table; arrows move between cells
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(MODEL, QHeaderView.ResizeMode.Stretch)
        for column in (INPUT, OUTPUT, CACHE_READ, CACHE_WRITE):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.table.verticalHeader().hide()
        self.add_button = QPushButton(translate("Prices", "&Add Model"))
        self.add_button.setAccessibleName(translate("Prices", "Add a model's prices"))
        self.add_button.clicked.connect(self.add_row)
        self.remove_button = QPushButton(translate("Prices", "&Remove"))
        self.remove_button.setAccessibleName(translate("Prices", "Remove the selected model's prices"))
        self.remove_button.clicked.connect(self.remove_selected)
        self.defaults_button = QPushButton(translate("Prices", "Restore &Defaults"))
        self.defaults_button.setAccessibleName(translate("Prices", "Restore the default prices"))
        self.defaults_button.clicked.connect(lambda: self.load(PriceTable(dict(DEFAULT_PRICES))))
        self.error_label = QLabel()
        self.error_label.setObjectName("fieldError")
        self.error_label.setWordWrap(True)
        self.error_label.hide()
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        buttons.addWidget(self.defaults_button)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.error_label)
        layout.addLayout(buttons)
        self.load(prices)

    def load(self, prices: PriceTable) -> None:
        self.table.setRowCount(0)
        for model, price in sorted(prices.prices.items()):
            self._append(model, price)
        self.error_label.hide()

    def add_row(self) -> None:
        """A new, empty row; the cursor on its model name."""
        row = self._append("", None)
        self.table.setCurrentCell(row, MODEL)
        item = self.table.item(row, MODEL)
        if item is not None:
            self.table.editItem(item)

    def remove_selected(self) -> None:
        rows = sorted({index.row() for index in self.table.selectedIndexes()}, reverse=True)
        for row in rows:
            self.table.removeRow(row)

    def prices(self) -> PriceTable:
        """The table as entered; :class:`PricingError` (also shown on the page) naming the cell that
        is wrong. Rows left entirely empty are ignored."""
        rows: list[tuple[str, ModelPrice]] = []
        try:
            for row in range(self.table.rowCount()):
                cells = [self._text(row, column) for column in range(5)]
                if not any(cells):
                    continue
                model = cells[MODEL]
                if not model:
                    raise PricingError(
                        translate("Prices", "Row {row} has prices but no model name.").format(row=row + 1)
                    )
                rows.append(
                    (
                        model,
                        ModelPrice(
                            input=self._number(model, cells[INPUT], translate("Prices", "input"), True)
                            or 0.0,
                            output=self._number(model, cells[OUTPUT], translate("Prices", "output"), True)
                            or 0.0,
                            cache_read=self._number(
                                model, cells[CACHE_READ], translate("Prices", "cache read")
                            ),
                            cache_write=self._number(
                                model, cells[CACHE_WRITE], translate("Prices", "cache write")
                            ),
                        ),
                    )
                )
            table = PriceTable.of(rows)
        except PricingError as exc:
            self.error_label.setText(str(exc))
            self.error_label.show()
            raise
        self.error_label.hide()
        return table

    def _append(self, model: str, price: ModelPrice | None) -> int:
        row = self.table.rowCount()
        self.table.insertRow(row)
        figures = (price.input, price.output, price.cache_read, price.cache_write) if price else (None,) * 4
        self.table.setItem(row, MODEL, QTableWidgetItem(model))
        for column, figure in zip((INPUT, OUTPUT, CACHE_READ, CACHE_WRITE), figures, strict=True):
            item = QTableWidgetItem("" if figure is None else f"{figure:g}")
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.table.setItem(row, column, item)
        return row

    def _text(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text().strip() if item is not None else ""

    @staticmethod
    def _number(model: str, text: str, what: str, required: bool = False) -> float | None:
        if not text:
            if required:
                raise PricingError(
                    translate("Prices", "Enter the {what} price of {model}.").format(what=what, model=model)
                )
            return None
        try:
            return float(text.replace(",", ".").lstrip("$"))
        except ValueError:
            raise PricingError(
                translate("Prices", "The {what} price of {model} is not a number: {text}").format(
                    what=what, model=model, text=text
                )
            ) from None
