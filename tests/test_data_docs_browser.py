"""GX Data Docs in a real browser with every request off the machine blocked (issue 19 item 5).

A site over the GX suites' real tables (a synthetic street's trace and validity reports in one sample-batch
partition, two templates' rejection logs, one failing) is opened in Debian's chromium through Playwright, from
the files (file://) and over HTTP on 127.0.0.1 (as ``make ui``'s artifact server serves it). Any request to
another host is aborted and recorded: the index must list every validation by asset and partition, and a
validation page must draw its tables with Bootstrap's styles and Font Awesome's icons, with no request failed.
"""

from __future__ import annotations

import dataclasses
import datetime

import pandas as pd
import pytest

from simready.testing.synthetic import street_evidence
from simready.validity import data_docs as D
from simready.validity import expectations as E
from simready.validity.gate import validate_scenario
from tests.fixtures.browser import serve

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("data_docs_browser")]

BATCH = "b0000|two_lane_arterial"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    evidence = street_evidence(with_pool=False)
    reports = [validate_scenario(evidence), validate_scenario(dataclasses.replace(evidence, sample_id="low", sensor=None))]
    log = pd.DataFrame({"stage": ["timing", "physical"], "reason": ["late", ""], "detail": ["d", "d"]})
    batches = [
        D.DocsBatch("trajectories", E.trajectory_frame(evidence.ticks, evidence.actor_classes), "trajectories", BATCH),
        D.DocsBatch("validity_reports", E.validity_frame(reports), "validity_reports", BATCH),
        D.DocsBatch("rejection_log", log.iloc[:1], "rejection_log", "two_lane_arterial"),
        D.DocsBatch("rejection_log", log, "rejection_log", "urban_signalized_intersection"),  # an empty reason: fails
    ]
    root = tmp_path_factory.mktemp("docs") / "data_docs"
    D.build_data_docs(batches, root)
    return root, batches


class Offline:
    """A page whose requests to anything but file:// and 127.0.0.1 are aborted; what was blocked or failed."""

    def __init__(self, browser):
        self.page = browser.new_page()
        self.blocked: list[str] = []
        self.failed: list[str] = []
        self.errors: list[str] = []
        self.page.route("**/*", self._route)
        self.page.on("requestfailed", lambda r: self.failed.append(f"{r.url}: {r.failure}"))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _route(self, route):
        url = route.request.url
        if url.startswith(("file://", "http://127.0.0.1:", "data:")):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()

    def clean(self) -> bool:
        return not (self.blocked or self.failed or self.errors)

    def report(self) -> str:
        return f"blocked {self.blocked}, failed {self.failed}, errors {self.errors}"


def _open(browser, url: str) -> Offline:
    tab = Offline(browser)
    tab.page.goto(url)
    tab.page.wait_for_load_state("networkidle")
    return tab


def _check_index(tab: Offline, batches) -> None:
    table = "table.ge-index-page-validation-results-table"
    tab.page.wait_for_selector(f".bootstrap-table {table} tbody tr[data-index]")
    rows = tab.page.evaluate(f"() => $('{table}').bootstrapTable('getData')")
    assert sorted((r["asset_name"], r["run_name"]) for r in rows) == sorted(
        (b.asset, b.label) for b in batches)
    assert sorted(r["_validation_success_text"] for r in rows) == ["Failed", "Success", "Success", "Success"]
    first = tab.page.locator(f"{table} tbody tr[data-index]").first
    assert first.locator("td").count() >= 5  # run time, run name, asset, batch, suite drawn as cells
    # Each row shows when its table was validated (issue 28), not the fixed time its page's path is stored under.
    year = str(datetime.datetime.now(datetime.timezone.utc).year)
    assert all(r["run_time"].startswith(year) for r in rows), [r["run_time"] for r in rows]
    assert "1970" not in tab.page.locator(f"{table} tbody").inner_text()
    assert tab.clean(), tab.report()


def _check_validation_page(tab: Offline, batch) -> None:
    page = tab.page
    overview = page.locator(".alert-secondary").first.inner_text()
    assert f"Data asset: {batch.asset}" in " ".join(overview.split())
    # The page is titled with when its table was validated (issue 28), not the fixed time of its path.
    year = datetime.datetime.now(datetime.timezone.utc).year
    text = " ".join(page.locator("body").inner_text().split())
    assert f"/ {batch.label} / {year}-" in text and "1970" not in text, text[:300]
    assert batch.label in page.locator("body").inner_text()
    tables = page.locator("table.table")
    assert tables.count() >= 2
    # Bootstrap's reboot: tables collapse their borders and boxes size by their border (browser defaults:
    # "separate" and "content-box"); its text colour is #212529.
    assert tables.first.evaluate("t => getComputedStyle(t).borderCollapse") == "collapse"
    assert tables.first.locator("td").first.evaluate("c => getComputedStyle(c).boxSizing") == "border-box"
    assert page.evaluate("() => getComputedStyle(document.body).color") == "rgb(33, 37, 41)"
    icon = page.locator("i.fas").first
    assert "Font Awesome 6 Free" in icon.evaluate("i => getComputedStyle(i, '::before').fontFamily")
    page.wait_for_function("() => document.fonts.status === 'loaded'")
    assert page.evaluate("() => document.fonts.check('900 16px \"Font Awesome 6 Free\"')")
    assert tab.clean(), tab.report()


def test_index_and_validation_pages_from_files_with_the_network_blocked(site, browser):
    root, batches = site
    tab = _open(browser, (root / "index.html").as_uri())
    _check_index(tab, batches)
    tab.page.close()
    failing = batches[3]
    tab = _open(browser, (root / D.validation_page(failing.suite, failing.asset, failing.partition)).as_uri())
    _check_validation_page(tab, failing)
    assert "Failed" in tab.page.locator(".alert-secondary").first.inner_text()
    tab.page.close()


def test_the_same_site_served_over_http_like_make_ui(site, browser):
    root, batches = site
    with serve(root.parent) as url:
        tab = _open(browser, f"{url}/{root.name}/index.html")
        _check_index(tab, batches)
        row = tab.page.locator("table.ge-index-page-validation-results-table tbody tr",
                               has_text=f"{batches[0].asset}.{batches[0].label}")
        row.locator("td").first.click()  # a row opens its validation page
        tab.page.wait_for_load_state("networkidle")
        assert tab.page.url.endswith(D.validation_page(batches[0].suite, batches[0].asset, batches[0].partition))
        _check_validation_page(tab, batches[0])
        tab.page.close()
