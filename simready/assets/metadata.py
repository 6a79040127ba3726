"""Small helpers turning domain results into Dagster metadata (UI display only)."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

import dagster as dg


def png_markdown(png: bytes, title: str) -> dg.MetadataValue:
    """Inline a PNG so the UI shows the picture itself, not just its path."""
    data = base64.b64encode(png).decode("ascii")
    return dg.MetadataValue.md(f"**{title}**\n\n![{title}](data:image/png;base64,{data})")


def markdown_table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> dg.MetadataValue:
    header = "| " + " | ".join(columns) + " |\n| " + " | ".join("---" for _ in columns) + " |\n"
    body = "".join(
        "| " + " | ".join(str(row.get(c, "")).replace("|", "\\|").replace("\n", " ") for c in columns) + " |\n"
        for row in rows
    )
    return dg.MetadataValue.md(header + body)


def artifact_link(store, key, *, folder: bool = False) -> dg.MetadataValue:
    """Where a reviewer opens an artifact (or a ``folder``): its path locally, a link that works off the server
    in production (a presigned URL or the bucket console's view)."""
    shared = store.share_url(key, folder=folder)
    return dg.MetadataValue.url(shared) if shared else dg.MetadataValue.path(store.url(key))
