"""GX Data Docs open offline (issue 19 item 5): the vendored CDN files, the page rewrite, and pages that name their
data asset and partition, linked from the GX asset checks. The browser test is tests/test_data_docs_browser.py."""

from __future__ import annotations

import datetime
import hashlib
import importlib.util
import json
import posixpath
import re
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from simready.validity import data_docs as D
from simready.validity import docs_offline as O

#: Great Expectations' own templates and stylesheets, found without importing the package (~4 s, at collection in
#: every xdist worker): only the slow tests below build pages with it.
GX_VIEW = Path(importlib.util.find_spec("great_expectations").origin).parent / "render" / "view"


def test_every_vendored_file_matches_its_recorded_sha256_and_each_package_keeps_its_licence():
    manifest = O.vendor_manifest()
    on_disk = {p.relative_to(O.VENDOR_DIR).as_posix() for p in O.VENDOR_DIR.rglob("*") if p.is_file()}
    assert on_disk == set(manifest["sha256"]) | {"README.md", "vendor.json"}
    for rel, digest in manifest["sha256"].items():
        assert hashlib.sha256((O.VENDOR_DIR / rel).read_bytes()).hexdigest() == digest, rel
    for package in manifest["packages"]:
        assert package["licence"] in manifest["sha256"] and package["licence"].startswith(package["dir"] + "/")
    assert set(manifest["urls"].values()) <= set(manifest["sha256"])


def test_the_pinned_integrity_hashes_of_gx_templates_match_the_vendored_scripts():
    import base64

    template = (GX_VIEW / "templates" / "js_script_imports.j2").read_text()
    pinned = re.findall(r'src="([^"]+)" integrity="sha384-([^"]+)"', template)
    assert len(pinned) == 2
    for url, sri in pinned:
        data = (O.VENDOR_DIR / O.vendor_manifest()["urls"][url]).read_bytes()
        assert base64.b64encode(hashlib.sha384(data).digest()).decode() == sri, url


def test_every_address_gx_templates_load_is_vendored_or_dropped():
    """A GX upgrade that loads a new CDN file fails here, before any site is built."""
    sources = sorted((GX_VIEW / "templates").glob("*.j2")) + sorted((GX_VIEW / "static" / "styles").glob("*.css"))
    remote = {u for p in sources for u in re.findall(r'(?:src|href)="(https?://[^"]+)"', p.read_text())}
    assert remote, "GX templates changed shape: no CDN address found"
    for path in sources:
        left = O.remote_loads(O.rewrite(path.read_text(), "../"))
        assert not left, (path.name, left)


def test_vendored_stylesheets_load_only_files_that_are_vendored():
    manifest = O.vendor_manifest()
    for rel in (r for r in manifest["sha256"] if r.endswith(".css")):
        css = (O.VENDOR_DIR / rel).read_text(encoding="utf-8")
        for target in re.findall(r"url\(\s*['\"]?([^)'\"]+)", css):
            if not target.startswith("data:"):
                local = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target.split("?")[0].split("#")[0]))
                assert local in manifest["sha256"], (rel, target)


def test_rewrite_points_cdn_addresses_at_the_site_and_drops_integrity_and_unused_scripts():
    page = (
        '<link rel="stylesheet" href="https://maxcdn.bootstrapcdn.com/bootstrap/4.3.1/css/bootstrap.min.css"/>\n'
        '<script src="https://cdn.jsdelivr.net/npm/vega@5"></script>\n'
        '<script src="https://stackpath.bootstrapcdn.com/bootstrap/4.3.1/js/bootstrap.min.js" integrity="sha384-x"'
        ' crossorigin="anonymous"></script>\n'
        '<img src="https://great-expectations-web-assets.s3.us-east-2.amazonaws.com/logo-long.png?d=20260101T000000Z">'
        '<a href="https://greatexpectations.io">GX</a>'
    )
    out = O.rewrite(page, "../../")
    assert '<link rel="stylesheet" href="../../static/vendor/bootstrap-4.3.1/dist/css/bootstrap.min.css"/>' in out
    assert '<script src="../../static/vendor/bootstrap-4.3.1/dist/js/bootstrap.min.js"></script>' in out
    assert '<img src="../../static/images/logo-long.png">' in out
    assert "vega" not in out and "integrity" not in out and "crossorigin" not in out
    assert '<a href="https://greatexpectations.io">' in out  # a link the reviewer may follow, not a load
    assert O.remote_loads(out) == [] and len(O.remote_loads(page)) == 4


def test_make_offline_refuses_a_page_that_still_loads_a_remote_file_or_draws_a_chart(tmp_path):
    page = tmp_path / "validations" / "x.html"
    page.parent.mkdir(parents=True)
    page.write_text('<script src="https://cdn.example.org/new-lib.js"></script>')
    with pytest.raises(O.OfflineDocsError, match=r"x\.html: still loads .*new-lib\.js"):
        O.make_offline(tmp_path)
    page.write_text("<script>vegaEmbed('#chart', spec)</script>")
    with pytest.raises(O.OfflineDocsError, match=r"x\.html: draws a Vega chart"):
        O.make_offline(tmp_path)
    page.write_text('<div style="background: url(//cdn.example.org/a.png)"></div>')
    with pytest.raises(O.OfflineDocsError, match="still loads"):
        O.make_offline(tmp_path)


def test_validation_page_names_suite_asset_and_partition():
    assert D.validation_page("manifests", "scenario_manifests", "b0000|two_lane_arterial") == (
        "validations/manifests/b0000.two_lane_arterial/19700101T000000.000000Z/"
        "scenario_manifests.b0000.two_lane_arterial.html")
    assert D.validation_page("rejection_log").endswith("/rejection_log.unpartitioned.html")
    with pytest.raises(ValueError, match="partition key '../x'"):
        D.validation_page("manifests", partition="../x")


def _log(reason: str) -> pd.DataFrame:
    return pd.DataFrame({"stage": ["timing"], "reason": [reason], "detail": ["d"]})


@pytest.mark.slow
def test_site_pages_name_asset_and_partition_and_load_nothing_remote(tmp_path):
    site = tmp_path / "docs"
    index = D.build_data_docs([D.DocsBatch("rejection_log", _log("r"), "rejection_log", "two_lane_arterial"),
                               D.DocsBatch("rejection_log", _log(""), "rejection_log", "urban_signalized_intersection")],
                              site)
    pages = sorted(p.relative_to(site).as_posix() for p in (site / "validations").rglob("*.html"))
    assert pages == sorted(D.validation_page("rejection_log", "rejection_log", t)
                           for t in ("two_lane_arterial", "urban_signalized_intersection"))
    page = (site / pages[0]).read_text()
    assert re.search(r"Data asset:</span>\s*<span[^>]*>rejection_log</span>", page) or "Data asset: rejection_log" in \
        re.sub(r"<[^>]+>", "", page)
    html = index.read_text()
    assert "'run_name': 'two_lane_arterial'" in html and "'asset_name': 'rejection_log'" in html
    for path in [index, *(site / p for p in pages)]:
        assert O.remote_loads(path.read_text()) == [], path
    assert (site / O.SITE_VENDOR / "jquery-3.7.1" / "dist" / "jquery.min.js").is_file()
    assert "ge_load_time" not in page  # GX's wall-clock load time is not kept
    # Pages and index show when the tables were validated (issue 28), though the paths keep the fixed time.
    when = datetime.datetime(2026, 12, 5, 10, 30, tzinfo=datetime.timezone.utc)
    D.build_data_docs([D.DocsBatch("rejection_log", _log("r"), "rejection_log", "two_lane_arterial")], site, when)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", (site / pages[0]).read_text()))
    assert "Run Time 2026-12-05T10:30:00Z" in text and "1970" not in text
    times = re.findall(r"'run_time': '([^']*)', '_run_time_sort': ([0-9.]+)", index.read_text())
    assert times and all(not t.startswith("1970") and float(sort) == when.timestamp() for t, sort in times), times
    # A rebuild without one partition drops its page (the index no longer lists it).
    D.build_data_docs([D.DocsBatch("rejection_log", _log("r"), "rejection_log", "two_lane_arterial")], site)
    assert sorted(p.relative_to(site).as_posix() for p in (site / "validations").rglob("*.html")) == pages[:1]
    assert not (site / "validations" / "rejection_log" / "urban_signalized_intersection").exists()
    with pytest.raises(ValueError, match="two tables for one page"):
        D.build_data_docs([D.DocsBatch("rejection_log", _log("r"), partition="t"),
                           D.DocsBatch("rejection_log", _log("s"), partition="t")], tmp_path / "again")


@pytest.mark.slow
def test_gx_check_metadata_links_the_partitions_validation_page(tmp_path):
    """The real rejection_log asset and its gx_rejection_log check on one template's rejections."""
    from simready.assets.partitions import batch_partitions
    from simready.assets.scenario import rejection_log
    from simready.checks.expectations import gx_rejection_log
    from simready.artifacts.layout import ArtifactLayout
    from simready.resources import ArtifactStore
    from simready.scenario.ladder import REJECTION_FIELDS

    template = "two_lane_arterial"
    layout = ArtifactLayout(tmp_path / "artifacts")
    rejections = layout.batch(template, "b0000").rejections
    rejections.parent.mkdir(parents=True)
    row = {f: "x" for f in REJECTION_FIELDS} | {"attempt": 1, "proposal_index": 0}
    rejections.write_text(json.dumps(row) + "\n")
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(batch_partitions.name, ["b0000"])
    result = dg.materialize([rejection_log, gx_rejection_log], partition_key=template, instance=instance,
                            resources={"store": ArtifactStore(root=str(layout.root))})
    (evaluation,) = result.get_asset_check_evaluations()
    assert evaluation.passed
    link = evaluation.metadata["data_docs"].value
    page = D.validation_page("rejection_log", "rejection_log", template)
    assert link.endswith(page), link
    assert len(link) < 300  # a link, not a page: the instance stays small (issue 19)
    D.build_data_docs([D.DocsBatch("rejection_log", pd.read_parquet(layout.rejection_log(template)), "rejection_log",
                                   template)], layout.data_docs)
    assert (layout.data_docs / page).is_file()
