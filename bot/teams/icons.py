"""Draws the Teams app package's icons as PNG bytes with the standard library; never reads the app.

Teams wants ``color.png`` (192×192, full colour) and ``outline.png`` (32×32, white on
transparent). Both show a tick, drawn here so the package needs no image tool: run
``python -m bot.teams.icons`` to write them into ``bot/teams/app-package/``.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from pathlib import Path

__all__ = ["PACKAGE", "color_icon", "outline_icon", "png", "write_icons"]

PACKAGE = Path(__file__).parent / "app-package"
Pixel = tuple[int, int, int, int]

_BRAND: Pixel = (46, 94, 78, 255)
_WHITE: Pixel = (255, 255, 255, 255)
_CLEAR: Pixel = (0, 0, 0, 0)


def _chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def png(width: int, height: int, pixel: Callable[[float, float], Pixel]) -> bytes:
    """An RGBA PNG; ``pixel(x, y)`` gets coordinates from 0 to 1 across the image."""
    rows = bytearray()
    for y in range(height):
        rows.append(0)  # filter: none
        for x in range(width):
            rows.extend(pixel((x + 0.5) / width, (y + 0.5) / height))
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(bytes(rows), 9))
        + _chunk(b"IEND", b"")
    )


def _near_segment(x: float, y: float, a: tuple[float, float], b: tuple[float, float]) -> float:
    (ax, ay), (bx, by) = a, b
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)))
    return float(((x - ax - t * dx) ** 2 + (y - ay - t * dy) ** 2) ** 0.5)


def _tick(x: float, y: float, width: float) -> bool:
    corner = (0.42, 0.70)
    short = _near_segment(x, y, (0.25, 0.52), corner)
    long = _near_segment(x, y, corner, (0.76, 0.30))
    return min(short, long) <= width


def color_icon() -> bytes:
    """192×192: a white tick on the brand colour."""
    return png(192, 192, lambda x, y: _WHITE if _tick(x, y, 0.06) else _BRAND)


def outline_icon() -> bytes:
    """32×32: a white tick on transparency, as Teams requires for the outline icon."""
    return png(32, 32, lambda x, y: _WHITE if _tick(x, y, 0.08) else _CLEAR)


def write_icons(directory: Path = PACKAGE) -> None:
    (directory / "color.png").write_bytes(color_icon())
    (directory / "outline.png").write_bytes(outline_icon())


if __name__ == "__main__":
    write_icons()
