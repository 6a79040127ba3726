"""Reviewer pages: static HTML a reviewer opens anywhere, no server and no Dagster (issue 19).

* :func:`write_sample_page` — ``<sample>/review.html``: the sensor videos of the base and every branch on one
  scenario clock, the top-down rollout, the gate's check table per variant with every failure's reasons and
  why the sample is accepted or not, weight, split and cell, links to the sample's files.
* :func:`write_index` — the suite's index (``review/index.html``): every sample with its verdicts, filtered
  by template, intent, cell and verdict in the browser.
* :func:`write_thumbnail` — a picture cropped to what is drawn and scaled down, for the Dagster UI's asset pages.
* ``python -m simready.review.serve`` — the artifacts folder over HTTP with byte ranges (what ``make ui`` starts).

Pages are rendered with Jinja2 templates (``templates/``), hold their styles and scripts inline and link
only by relative paths, so a copy of the artifact tree (or an S3 static website of it) works as is.
"""

from __future__ import annotations

import importlib
from typing import Any

# Imported on first use, so that ``python -m simready.review.serve`` (the artifacts server) loads no simulator.
_EXPORTS = {"SampleSummary": "summary", "relative_href": "text", "sample_summary": "summary", "write_index": "page",
            "write_sample_page": "page", "write_thumbnail": "thumbnail"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'simready.review' has no attribute {name!r}")
    return getattr(importlib.import_module(f"simready.review.{_EXPORTS[name]}"), name)
