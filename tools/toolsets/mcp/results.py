"""Shapes what an MCP server answered into rows for the model, cut to a size it can take; never sends.

A large answer reaches the model as its beginning and a marker saying how much was left out,
never as nothing. Rows are the server's structured content where it gives some, else its
content parts: text, and the text of embedded resources.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.types import (
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from tools.tool import Result

__all__ = ["RESULT_CHARS", "RESULT_ROWS", "shaped"]

# What of a result reaches the model and the card: past these it is cut, and says so.
RESULT_CHARS = 40_000
RESULT_ROWS = 200
# A row that does not fit is still cut into the room left when at least this much is left.
_SMALLEST_PART = 1_000


def shaped(answer: CallToolResult, *, scope: str) -> Result:
    """The answer as rows within ``RESULT_CHARS`` characters and ``RESULT_ROWS`` rows.

    A row too large for the room left is cut to it (its longest text, with a ``cut`` marker
    "first 40,000 of 192,512 characters"), so a large answer always reaches the model as its
    beginning. That was not so: a 192 KB file read through the reference filesystem server, or
    a 5 MB string, reached the model as "the first 0 of 1 (cut)" and no rows, and the model
    told the person there was nothing. The note says the full size (it is audited).
    """
    rows = _rows(answer)
    kept: list[dict[str, Any]] = []
    size, cut = 0, ""
    for row in rows[:RESULT_ROWS]:
        room, length = RESULT_CHARS - size, _length(row)
        if length <= room:
            kept.append(row)
            size += length
            continue
        if not kept or room >= _SMALLEST_PART:
            part, cut = _cut(row, room)
            kept.append(part)
        break
    full = sum(_length(row) for row in rows)
    if len(kept) == len(rows) and not cut:
        return Result(kept, len(rows), scope)
    said = f"the first {len(kept):,} of {len(rows):,} rows ({full:,} characters)"
    if len(rows) == 1:
        said = cut
    elif cut:
        said = f"{said}, the last of them cut to its {cut}"
    return Result(kept, len(rows), f"{scope}: cut to {said}", note=f"Cut to {said}.")


def _rows(answer: CallToolResult) -> list[dict[str, Any]]:
    structured = _structured_rows(answer.structured_content)
    if structured is not None:
        return structured
    rows: list[dict[str, Any]] = []
    left_out = 0
    for part in answer.content:
        if isinstance(part, TextContent):
            rows.append({"text": part.text})
        elif isinstance(part, EmbeddedResource):
            rows.append(_resource(part.resource))
        elif isinstance(part, ResourceLink):
            rows.append({"resource": str(part.uri), "name": part.name})
        else:
            left_out += 1
    if left_out:
        rows.append({"note": f"{left_out} image or audio part(s) left out"})
    return rows


def _resource(contents: TextResourceContents | BlobResourceContents) -> dict[str, Any]:
    if isinstance(contents, TextResourceContents):
        return {"resource": str(contents.uri), "text": contents.text}
    return {"resource": str(contents.uri), "note": "binary contents left out"}


def _structured_rows(content: Any) -> list[dict[str, Any]] | None:
    if isinstance(content, dict):
        inner = content.get("result") if len(content) == 1 else None
        if isinstance(inner, list) and all(isinstance(row, dict) for row in inner):
            return list(inner)
        if isinstance(inner, list):
            return [{"value": item} for item in inner]
        return [content]
    return None


def _cut(row: dict[str, Any], room: int) -> tuple[dict[str, Any], str]:
    """``row`` within ``room`` characters and the words of the cut ("first 40,000 of 192,512
    characters"): its longest text cut, else (nested data) its JSON cut, as text."""
    texts = [key for key, value in row.items() if isinstance(value, str)]
    longest = max(texts, key=lambda key: len(row[key]), default=None)
    if longest is not None:
        others = _length({key: value for key, value in row.items() if key != longest})
        if others <= room // 2:
            text: str = row[longest]
            keep = max(room - others, 0)
            said = f"first {keep:,} of {len(text):,} characters"
            return {**row, longest: text[:keep], "cut": f"{said}; the rest was left out"}, said
    encoded = _encoded(row)
    said = f"first {room:,} of {len(encoded):,} characters"
    return {"json": encoded[:room], "cut": f"{said} of its JSON; the rest was left out"}, said


def _length(row: dict[str, Any]) -> int:
    """A row's size as the model reads it: its text's characters, or its JSON's for the rest."""
    return sum(len(v) if isinstance(v, str) else len(_encoded(v)) for v in row.values())


def _encoded(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
