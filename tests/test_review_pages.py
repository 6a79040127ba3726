"""Reviewer pages without a browser (issue 19): why a verdict, the page of a gated sample, the index, thumbnails,
and the local store's links when a server serves the artifacts."""

from __future__ import annotations

import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from simready.artifacts.layout import ArtifactLayout, SampleDir
from simready.review import sample_summary, write_index, write_sample_page, write_thumbnail
from simready.review.verdict import check_rows, explain
from simready.store import LocalStore
from simready.validity import policy
from simready.validity.batch import validate_sample_dir
from simready.validity.gate import CHECK_NAMES, CheckResult, ValidityReport, weight_policy


def _report(failed: dict[str, float], identity: float = 1.0) -> ValidityReport:
    """A report as the gate's rule makes it, with the checks in ``failed`` failed at the given scores."""
    scores = {c: failed.get(c, 1.0) for c in CHECK_NAMES}
    scores["identity"] = min(scores["identity"], identity)
    checks = [CheckResult(check=c, passed=c not in failed, score=scores[c],
                          detail={"summary": f"{c} summary", "violations": [f"{c} went wrong"] if c in failed else []})
              for c in CHECK_NAMES]
    fidelity = sum(w * scores[k] for k, w in policy.FIDELITY_WEIGHTS.items())
    parts = {"fidelity": fidelity, "identity": scores["identity"], "realism": scores["distribution"]}
    validity = sum(w * parts[k] for k, w in policy.VALIDITY_WEIGHTS.items())
    accepted = not any(c in policy.REQUIRED_CHECKS for c in failed) and validity >= policy.ACCEPT_MIN_VALIDITY
    weight, capped = weight_policy(accepted, fidelity)
    return ValidityReport(sample_id="s", policy_version=policy.POLICY_VERSION, checks=checks, fidelity=fidelity,
                          realism=scores["distribution"], validity=validity, accepted=accepted,
                          low_fidelity=fidelity < policy.HIGH_FIDELITY_MIN, weight=weight, capped=capped, reasons=[])


def test_an_accepted_sample_with_a_failed_distribution_check_says_why_it_is_still_accepted():
    report = _report({"distribution": 0.25})
    assert report.accepted
    why = explain(report)
    assert why[0].startswith("Accepted: the required checks (physical and temporal) passed and validity 0.77")
    assert "Failed but not required: distribution" in why[1]
    assert "0.3·realism 0.25 = 0.77" in why[2]
    assert why[3].startswith("Weight 1.00")
    row = next(r for r in check_rows(report) if r.check == "distribution")
    assert (row.passed, row.required, row.reasons) == (False, False, ("distribution went wrong",))
    assert row.effect == "not required: lowers realism, 0.3 of validity"


def test_a_failed_required_check_rejects_whatever_the_validity():
    report = _report({"physical": 0.45})
    assert not report.accepted and report.validity >= policy.ACCEPT_MIN_VALIDITY
    why = explain(report)
    assert why[0].startswith("Rejected: the required physical check failed")
    assert why[-1] == "Weight 0.00: a rejected sample carries no weight."
    assert next(r for r in check_rows(report) if r.check == "physical").effect.startswith("required")


def test_low_validity_rejects_and_low_fidelity_caps_the_weight():
    low = _report({"sensor": 0.0, "distribution": 0.0}, identity=0.0)
    assert not low.accepted
    assert explain(low)[0] == ("Rejected: the required checks (physical and temporal) passed, but validity "
                               f"{low.validity:.2f} is below the threshold 0.50.")
    capped = _report({"sensor": 0.0})
    assert capped.accepted and capped.capped
    assert explain(capped)[-1].startswith("Weight 0.30: fidelity 0.70 is below 0.80, so this is low-fidelity evidence")


class _Page(HTMLParser):
    """Links and the check tables' rows of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._row: list[str] | None = None
        self._text: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.links += [a[k] for k in ("href", "src") if k in a]
        if tag == "table" and "checks" in (a.get("class") or ""):
            self._table = a["data-variant"]
            self.tables[self._table] = []
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag == "td" and self._row is not None:
            self._text = []

    def handle_data(self, data):
        if self._text is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "td" and self._row is not None and self._text is not None:
            self._row.append("".join(self._text).strip())
            self._text = None
        elif tag == "tr" and self._row is not None:
            if self._row:
                self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None


@pytest.fixture(scope="module")
def gated(tmp_path_factory, street_sample_dir) -> SampleDir:
    """A gated sample of the synthetic street (observations, no branches) where the layout puts it."""
    root = tmp_path_factory.mktemp("pages")
    sample = ArtifactLayout(root).batch("street", "b0000").sample("street-000001")
    shutil.copytree(street_sample_dir, sample.root)  # write_street_sample's, written once per session
    validate_sample_dir(sample.root, None)
    return sample


def test_the_page_is_deterministic_links_only_relative_files_and_shows_every_check(gated):
    page = write_sample_page(gated, "b0000")
    first = page.read_bytes()
    assert write_sample_page(gated, "b0000").read_bytes() == first  # same files, same bytes
    assert page == gated.root / "review.html"
    parsed = _Page()
    parsed.feed(first.decode("utf-8"))
    for link in parsed.links:
        assert "://" not in link and not link.startswith("/"), link
    assert "../../../../review/index.html" in parsed.links  # the suite index, by its place in the layout
    assert {"manifest.json", "trace.parquet", "validity.json"} <= set(parsed.links)
    assert str(gated.root) not in first.decode("utf-8")  # no absolute path of this machine
    (base,) = parsed.tables.values()
    assert [row[0] for row in base] == list(CHECK_NAMES)
    assert all(row[2] in ("passed", "failed") for row in base)


def test_the_index_links_each_page_and_offers_each_filter_value(gated):
    layout = ArtifactLayout(gated.root.parents[3])
    summary = sample_summary(gated, "b0000")
    assert (summary.template, summary.batch, summary.sample) == ("street", "b0000", "street-000001")
    index = write_index([summary], layout.review_index, "street suite")
    text = index.read_text()
    parsed = _Page()
    parsed.feed(text)
    (page,) = [link for link in parsed.links if link.endswith(".html")]
    assert (index.parent / page).resolve() == gated.review_page.resolve()
    for value in (summary.template, summary.intent, summary.split, summary.verdict):
        assert f'<option value="{value}">' in text
    assert f'<option value="{"yes" if summary.collided else "no"}">' in text  # the collided filter
    assert summary.cell not in text.replace(f'data-cell="{summary.cell}"', "").replace(f'title="cell {summary.cell}"', "")


def test_a_thumbnail_is_the_drawn_part_scaled_into_its_box(tmp_path):
    tall = Image.new("RGB", (1000, 4442), "white")
    tall.paste(Image.new("RGB", (600, 300), "navy"), (200, 100))
    tall.save(tmp_path / "plot.png")
    out = write_thumbnail(tmp_path / "plot.png", tmp_path / "thumbs" / "plot.png")
    with Image.open(out) as thumb:
        assert thumb.size[0] <= 480 and thumb.size[1] <= 360
        # The blank 4000 px below the drawing are cropped: the aspect is the drawing's (616 × 316 with margins).
        assert abs(thumb.size[0] / thumb.size[1] - 616 / 316) < 0.02
    again = write_thumbnail(tmp_path / "plot.png", tmp_path / "again.png")
    assert again.read_bytes() == out.read_bytes()


def test_the_local_store_links_through_the_server_over_its_folder(tmp_path):
    key = ArtifactLayout(Path()).batch("t", "b0000").sample("s1").review_page
    assert LocalStore(tmp_path).share_url(key) is None  # files only: the path is the link
    served = LocalStore(tmp_path, "http://127.0.0.1:3001/")
    assert served.share_url(key) == "http://127.0.0.1:3001/samples/t/b0000/s1/review.html"
    assert served.share_url("coverage", folder=True) == "http://127.0.0.1:3001/coverage/"
    assert ArtifactLayout(tmp_path).thumbnail(tmp_path / "coverage" / "x.png") == tmp_path / "thumbnails/coverage/x.png"


def test_reasons_read_as_plain_words_beyond_a_readable_range():
    from simready.review.text import readable

    far = ("feature speed_mps: scenario z 198.88 (mean 1.00, sd 2.00) is 197.38 beyond noise 1.50 (ref n=32 draws, "
           "95% level at 81% confidence, p=0.03), 197.00 more than the base's (max 1.00; PSI saturated)")
    text = readable(far)
    assert "scenario z > 10 σ (199: far outside every nominal draw)" in text and "198.88" not in text
    assert "p=0.03, the least 32 draws can show: no nominal draw is as far)" in text
    near = "feature range_m: PSI 0.612 is 0.388 beyond noise 0.224 (ref n=32 draws, 95% level at 81% confidence, p=0.24)"
    assert readable(near) == near
    assert readable("feature x: scenario z 4.20 (mean 1.00") == "feature x: scenario z 4.20 (mean 1.00"
