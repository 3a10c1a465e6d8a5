"""Draw Cowork's application icon, ``cowork.png`` (1024×1024 RGBA), with Qt.

The PNG is the one source PyInstaller turns into the macOS ``.icns`` and the Windows ``.ico`` (through
Pillow), so it is drawn once, large, and kept simple enough to read at 16 px: a rounded square in a
blue-to-violet gradient carrying a thick white "C" whose opening holds a second, smaller disc — two
parties working together. Everything is drawn from geometry (no fonts), so the result does not depend on
the fonts a build machine has.

Run it offscreen from the repository root::

    QT_QPA_PLATFORM=offscreen .venv/bin/python installer/icons/draw_icon.py [OUTPUT.png]
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QGuiApplication,
    QImage,
    QLinearGradient,
    QPainter,
    QPainterPath,
    QPen,
    QRadialGradient,
)

SIZE = 1024
# The body leaves a margin for the soft shadow, on the macOS icon grid (824 of 1024) widened a little:
# at 16 px every pixel of body counts more than the shadow does.
BODY_MARGIN = 64.0
# A continuous-looking corner: about 22 % of the side, as on macOS's and Windows 11's app icons.
CORNER_RATIO = 0.225

TOP_COLOUR = QColor("#4F7CFF")
BOTTOM_COLOUR = QColor("#7B3FE4")
MARK_COLOUR = QColor("#FFFFFF")
PARTNER_COLOUR = QColor("#FFD66B")

DEFAULT_OUTPUT = Path(__file__).resolve().with_name("cowork.png")


def _body_rect() -> QRectF:
    return QRectF(BODY_MARGIN, BODY_MARGIN, SIZE - 2 * BODY_MARGIN, SIZE - 2 * BODY_MARGIN)


def _rounded(rect: QRectF) -> QPainterPath:
    path = QPainterPath()
    radius = rect.width() * CORNER_RATIO
    path.addRoundedRect(rect, radius, radius)
    return path


def _draw_shadow(painter: QPainter, body: QRectF) -> None:
    # A few stacked, widening translucent outlines read as a soft drop shadow without a blur filter.
    painter.save()
    painter.setPen(Qt.PenStyle.NoPen)
    steps = 14
    for step in range(steps, 0, -1):
        grow = step * 2.2
        rect = body.adjusted(-grow, -grow + 10, grow, grow + 10)
        painter.setBrush(QColor(0, 0, 0, int(7 * (steps - step + 1) / steps) + 2))
        painter.drawPath(_rounded(rect))
    painter.restore()


def _draw_body(painter: QPainter, body: QRectF) -> None:
    gradient = QLinearGradient(body.topLeft(), body.bottomRight())
    gradient.setColorAt(0.0, TOP_COLOUR)
    gradient.setColorAt(1.0, BOTTOM_COLOUR)
    path = _rounded(body)
    painter.fillPath(path, QBrush(gradient))

    # A faint light from the top left gives the flat square some depth.
    sheen = QRadialGradient(body.topLeft() + QPointF(body.width() * 0.25, body.height() * 0.15), body.width())
    sheen.setColorAt(0.0, QColor(255, 255, 255, 60))
    sheen.setColorAt(0.6, QColor(255, 255, 255, 0))
    painter.fillPath(path, QBrush(sheen))


def _draw_mark(painter: QPainter, body: QRectF) -> None:
    centre = body.center()
    radius = body.width() * 0.27
    stroke = body.width() * 0.135
    # The "C": a ring open towards the right, 80° wide, with round ends.
    opening = 80.0
    arc_rect = QRectF(centre.x() - radius, centre.y() - radius, 2 * radius, 2 * radius)
    pen = QPen(MARK_COLOUR, stroke, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap)
    painter.setPen(pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    # Qt angles are in 1/16 degree, counter-clockwise from three o'clock.
    painter.drawArc(arc_rect, int(opening / 2 * 16), int((360 - opening) * 16))

    # The partner: a disc sitting in the opening, slightly out from the ring, the size of its stroke.
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(PARTNER_COLOUR)
    partner_radius = stroke * 0.62
    distance = radius + stroke * 0.15
    partner = QPointF(centre.x() + distance * math.cos(0.0), centre.y() - distance * math.sin(0.0))
    painter.drawEllipse(partner, partner_radius, partner_radius)


def draw_icon(size: int = SIZE) -> QImage:
    """Return the icon as a ``size``×``size`` ARGB image with a transparent background."""
    image = QImage(SIZE, SIZE, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    body = _body_rect()
    _draw_shadow(painter, body)
    _draw_body(painter, body)
    _draw_mark(painter, body)
    painter.end()
    image = image.convertToFormat(QImage.Format.Format_ARGB32)
    if size != SIZE:
        image = image.scaled(
            size, size, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
        )
    return image


def main(argv: list[str]) -> int:
    if len(argv) > 1:
        print("usage: draw_icon.py [OUTPUT.png]", file=sys.stderr)
        return 2
    output = Path(argv[0]) if argv else DEFAULT_OUTPUT
    # Kept in a name: the application must outlive the painting.
    app = QGuiApplication.instance() or QGuiApplication([])
    saved = draw_icon().save(str(output), "PNG")
    app.processEvents()
    if not saved:
        print(f"error: cannot write {output}", file=sys.stderr)
        return 1
    print(output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
