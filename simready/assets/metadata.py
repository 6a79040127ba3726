"""Small helpers turning domain results into Dagster metadata: tables with schemas, links a reviewer can open,
pictures as thumbnails (written to the store beside the stages' artifacts, never into the instance)."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dagster as dg



#: The Dagster UI shows a markdown value inline on the asset page only below this many characters (else behind
#: a "Show Markdown" button), so a picture is a link to its thumbnail, never the picture's bytes.
INLINE_MARKDOWN_MAX = 1000


def picture(store, key: Path, alt: str) -> dg.MetadataValue:
    """A picture on the asset page: its thumbnail inline, linked to the full picture, where the store gives
    addresses a browser loads (the server ``make ui`` starts over the local folder, presigned URLs in S3); else
    the full picture's link. Writes the thumbnail (``layout.thumbnail(key)``) to the store."""
    from simready.review import write_thumbnail  # review.__getattr__ loads Pillow, matplotlib

    thumb = store.layout.thumbnail(key)
    write_thumbnail(store.local_path(key), store.local_dir(thumb.parent) / thumb.name)
    store.save(thumb.parent)
    small, full = store.share_url(thumb), store.share_url(key)
    if small:
        for text in (f"[![{alt}]({small})]({full})", f"![{alt}]({small})"):
            if len(text) < INLINE_MARKDOWN_MAX:
                return dg.MetadataValue.md(text)
    return artifact_link(store, key)


def _cell(value: Any, digits: int) -> str | int | float | bool | None:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return round(float(value), digits)
    return str(value)


#: How a table shows a yes/no cell (Dagster's table prints a boolean as ``true``/``false``, which a reader scans
#: slower than a mark).
YES, NO = "✓", "✗"


def _flag(value: Any) -> str | None:
    return None if value is None else (YES if value else NO)


def table(rows: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str]], *, digits: int = 2) -> dg.MetadataValue:
    """Rows as Dagster's sortable table with a schema (``columns``: name and type: string, int, float, bool);
    floats rounded to ``digits``, booleans as ✓/✗, other values as text, a missing value empty."""
    schema = dg.TableSchema(columns=[dg.TableColumn(name, "string" if kind == "bool" else kind)
                                     for name, kind in columns])
    records = [dg.TableRecord({name: _flag(row.get(name)) if kind == "bool" else _cell(row.get(name), digits)
                               for name, kind in columns}) for row in rows]
    return dg.MetadataValue.table(records=records, schema=schema)


def parquet_metadata(files: Sequence[Path]) -> dict[str, dg.MetadataValue]:
    """Dagster's row count (over every file) and column schema (the first file's) of Parquet files of one kind;
    nothing without files."""
    import pyarrow.parquet as pq  # definitions stay light: pyarrow.parquet

    if not files:
        return {}
    columns = [dg.TableColumn(f.name, str(f.type)) for f in pq.read_schema(files[0])]
    return {"dagster/row_count": dg.MetadataValue.int(sum(pq.read_metadata(f).num_rows for f in files)),
            "dagster/column_schema": dg.MetadataValue.table_schema(dg.TableSchema(columns=columns))}


def artifact_link(store, key, *, folder: bool = False) -> dg.MetadataValue:
    """Where a reviewer opens an artifact (or a ``folder``): its path locally, a link that works off the server
    in production (a presigned URL or the bucket console's view)."""
    shared = store.share_url(key, folder=folder)
    return dg.MetadataValue.url(shared) if shared else dg.MetadataValue.path(store.url(key))
