"""Reviewer pages: static HTML a reviewer opens anywhere, no server and no Dagster (issue 19).

* :func:`write_sample_page` — ``<sample>/review.html``: the sensor videos of the base and every branch on one
  scenario clock, the top-down rollout, the gate's check table per variant with every failure's reasons and
  why the sample is accepted or not, weight, split and cell, links to the sample's files.
* :func:`write_index` — the suite's index (``review/index.html``): every sample with its verdicts, filtered
  by template, intent, cell and verdict in the browser.
* :func:`write_thumbnail` — a picture cropped to what is drawn and scaled down, for the Dagster UI's asset pages.

Pages are rendered with Jinja2 templates (``templates/``), hold their styles and scripts inline and link
only by relative paths, so a copy of the artifact tree (or an S3 static website of it) works as is.
"""

from simready.review.page import SampleSummary, relative_href, sample_summary, write_index, write_sample_page
from simready.review.thumbnail import write_thumbnail

__all__ = ["SampleSummary", "relative_href", "sample_summary", "write_index", "write_sample_page", "write_thumbnail"]
