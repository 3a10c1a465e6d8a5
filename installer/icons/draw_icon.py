"""Draw Cowork's application icon, ``cowork.png`` (1024×1024 RGBA) and ``cowork.ico``, with Qt.

The PNG is the one source PyInstaller turns into the app's macOS ``.icns`` and Windows ``.ico`` (through
Pillow). ``cowork.ico`` is for the Windows installer (Inno Setup's ``SetupIconFile`` takes only .ico):
the classic layout every Windows version and resource tool reads — uncompressed 32-bit bitmaps for the
small sizes, a PNG for 256 px.

The mark is drawn once, large, and kept simple enough to read at 16 px: a rounded square in a
blue-to-violet gradient carrying a thick white "C" whose opening holds a second, smaller disc — two
parties working together. Everything is drawn from geometry (no fonts), so the result does not depend on
the fonts a build machine has.

Run it offscreen from the repository root::

    QT_QPA_PLATFORM=offscreen .venv/bin/python installer/icons/draw_icon.py [OUTPUT_DIR]

Without OUTPUT_DIR it redraws the repository's files, and the window's 256 px copy,
``desktop/app/cowork.png`` (package data of the app, so it ships with every install).
"""

from __future__ import annotations

import math
import struct
import sys
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPointF, QRectF, Qt
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

# The sizes Windows asks an .ico for (shell views, taskbar, Start menu at 100–200 % scaling).
ICO_SIZES = (16, 20, 24, 32, 40, 48, 64, 128, 256)

DEFAULT_OUTPUT_DIR = Path(__file__).resolve().parent
WINDOW_ICON = DEFAULT_OUTPUT_DIR.parent.parent / "desktop" / "app" / "cowork.png"
"""The app's own copy, 256 px: what the window shows in its title bar and task switcher (Linux, Windows)."""
WINDOW_ICON_SIZE = 256


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


def _png_bytes(image: QImage) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise OSError("Qt could not encode a PNG")
    buffer.close()
    return bytes(data.data())


def _dib_bytes(image: QImage) -> bytes:
    """An icon-resource bitmap: BITMAPINFOHEADER, bottom-up BGRA rows, then the 1-bit AND mask."""
    side = image.width()
    # Format_ARGB32 keeps each pixel as a native-endian 0xAARRGGBB word: on the little-endian machines Qt
    # runs on that is B, G, R, A in memory, the order a 32-bit DIB wants; rows are exactly side*4 bytes.
    pixels = bytes(image.constBits())
    row = side * 4
    colour = b"".join(pixels[y * row : (y + 1) * row] for y in range(side - 1, -1, -1))
    # The mask marks fully transparent pixels, for renderers that ignore the alpha channel.
    mask_row = ((side + 31) // 32) * 4
    mask = bytearray()
    for y in range(side - 1, -1, -1):
        bits = bytearray(mask_row)
        for x in range(side):
            if pixels[y * row + x * 4 + 3] == 0:
                bits[x // 8] |= 0x80 >> (x % 8)
        mask += bits
    header = struct.pack("<IiiHHIIiiII", 40, side, 2 * side, 1, 32, 0, len(colour) + len(mask), 0, 0, 0, 0)
    return header + colour + bytes(mask)


def ico_bytes(image: QImage, sizes: tuple[int, ...] = ICO_SIZES) -> bytes:
    """A multi-size .ico of ``image``: 32-bit bitmaps below 256 px, a PNG at 256 px (Windows Vista on)."""
    entries: list[tuple[int, bytes]] = []
    for side in sizes:
        scaled = image.scaled(
            side, side, Qt.AspectRatioMode.IgnoreAspectRatio, Qt.TransformationMode.SmoothTransformation
        ).convertToFormat(QImage.Format.Format_ARGB32)
        entries.append((side, _png_bytes(scaled) if side >= 256 else _dib_bytes(scaled)))
    directory_size = 6 + 16 * len(entries)
    header = struct.pack("<HHH", 0, 1, len(entries))
    directory = b""
    offset = directory_size
    for side, data in entries:
        # A width/height byte of 0 means 256.
        directory += struct.pack("<BBBBHHII", side % 256, side % 256, 0, 0, 1, 32, len(data), offset)
        offset += len(data)
    return header + directory + b"".join(data for _, data in entries)


def main(argv: list[str]) -> int:
    if len(argv) > 1:
        print("usage: draw_icon.py [OUTPUT_DIR]", file=sys.stderr)
        return 2
    output_dir = Path(argv[0]) if argv else DEFAULT_OUTPUT_DIR
    if not output_dir.is_dir():
        print(f"error: {output_dir} is not a directory", file=sys.stderr)
        return 2
    # Kept in a name: the application must outlive the painting.
    app = QGuiApplication.instance() or QGuiApplication([])
    icon = draw_icon()
    png_path = output_dir / "cowork.png"
    ico_path = output_dir / "cowork.ico"
    if not icon.save(str(png_path), "PNG"):
        print(f"error: cannot write {png_path}", file=sys.stderr)
        return 1
    ico_path.write_bytes(ico_bytes(icon))
    print(png_path)
    print(ico_path)
    if not argv:  # the repository's art: the window's copy too
        small = icon.scaled(
            WINDOW_ICON_SIZE,
            WINDOW_ICON_SIZE,
            Qt.AspectRatioMode.IgnoreAspectRatio,
            Qt.TransformationMode.SmoothTransformation,
        )
        if not small.save(str(WINDOW_ICON), "PNG"):
            print(f"error: cannot write {WINDOW_ICON}", file=sys.stderr)
            return 1
        print(WINDOW_ICON)
    app.processEvents()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
