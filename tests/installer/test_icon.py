"""The app icon: the committed PNG and .ico are what installer/icons/draw_icon.py draws, in the sizes
and shapes PyInstaller and Inno Setup need, and still a recognisable mark at 16 px."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

from tests.installer.fakes import REPO_ROOT

ICONS = REPO_ROOT / "installer" / "icons"


def png_header(data: bytes) -> tuple[int, int, int]:
    """Width, height and colour type from a PNG's IHDR chunk."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height, _depth, colour_type = struct.unpack(">IIBB", data[16:26])
    return width, height, colour_type


def ico_entries(data: bytes) -> list[tuple[int, bytes]]:
    reserved, kind, count = struct.unpack("<HHH", data[:6])
    assert (reserved, kind) == (0, 1)
    entries = []
    for index in range(count):
        width, height, _colours, _reserved, planes, bits, size, offset = struct.unpack(
            "<BBBBHHII", data[6 + 16 * index : 22 + 16 * index]
        )
        side = width or 256
        assert (height or 256) == side
        assert (planes, bits) == (1, 32)
        entries.append((side, data[offset : offset + size]))
    return entries


def test_committed_png_is_a_1024_square_with_alpha() -> None:
    width, height, colour_type = png_header((ICONS / "cowork.png").read_bytes())
    assert (width, height) == (1024, 1024)
    assert colour_type == 6, "RGBA, so the rounded corners are transparent"


def test_committed_ico_holds_every_size_windows_asks_for() -> None:
    entries = ico_entries((ICONS / "cowork.ico").read_bytes())
    sizes = [side for side, _ in entries]
    assert sizes == [16, 20, 24, 32, 40, 48, 64, 128, 256]
    for side, image in entries:
        if side == 256:
            assert png_header(image)[:2] == (256, 256)
        else:
            header_size, width, double_height = struct.unpack("<Iii", image[:12])
            assert (header_size, width, double_height) == (40, side, 2 * side)


def test_draw_icon_regenerates_both_files(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(ICONS / "draw_icon.py"), str(tmp_path)],
        env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    drawn = png_header((tmp_path / "cowork.png").read_bytes())
    assert drawn == png_header((ICONS / "cowork.png").read_bytes())
    assert [side for side, _ in ico_entries((tmp_path / "cowork.ico").read_bytes())] == [
        side for side, _ in ico_entries((ICONS / "cowork.ico").read_bytes())
    ]


def test_icon_is_transparent_outside_and_the_mark_reads_at_16_px() -> None:
    entries = dict(ico_entries((ICONS / "cowork.ico").read_bytes()))
    bitmap = entries[16]
    pixels = bitmap[40 : 40 + 16 * 16 * 4]  # bottom-up BGRA rows

    def pixel(x: int, y: int) -> tuple[int, int, int, int]:
        row = 15 - y
        blue, green, red, alpha = pixels[(row * 16 + x) * 4 : (row * 16 + x) * 4 + 4]
        return red, green, blue, alpha

    assert pixel(0, 0)[3] == 0, "the corner outside the rounded square is transparent"
    assert pixel(8, 13)[3] == 255, "the body is opaque"
    # The white "C" stays visible against the blue body even at 16 px: its left stroke is light.
    left_stroke = pixel(4, 8)
    body = pixel(8, 8)
    assert min(left_stroke[:3]) > 180, left_stroke
    assert sum(body[:3]) < sum(left_stroke[:3]) - 150, (body, left_stroke)


def test_bad_output_directory_is_a_usage_error(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(ICONS / "draw_icon.py"), str(tmp_path / "missing")],
        env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "not a directory" in result.stderr


def test_the_window_icon_is_a_256_px_copy_in_the_desktop_package() -> None:
    # desktop.app.bootstrap loads it beside itself; pyproject's package data and the spec ship it.
    width, height, colour_type = png_header((REPO_ROOT / "desktop" / "app" / "cowork.png").read_bytes())
    assert (width, height, colour_type) == (256, 256, 6)
