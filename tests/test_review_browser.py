"""Reviewer pages and the Dagster UI in a real browser (issue 19): Debian's chromium, driven by Playwright.

Two samples of one template (with their brake and coast branches, observed with review videos) are materialized
through the DAG on a SQLite instance; the tests open its review page and the suite index from the files
(file://, as a copy of the artifacts would be opened), and the Dagster webserver on that instance.
`make browser` installs chromium (`make test` depends on it); Playwright's own browser download is not used.
"""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._serdes import serialize_value

from simready.common import paths
from simready.assets.catalog import certified_assets
from simready.assets.measurement import observations_and_truth
from simready.assets.partitions import batch_partitions
from simready.assets.scenario import scenario_manifests
from simready.assets.simulation import checkpoints_and_branches, trajectories
from simready.assets.suite import coverage_report, split_assignments
from simready.assets.validity import reference_pools, validity_reports
from simready.assets.world import sensor_rigs, world_templates
from simready.artifacts.layout import ArtifactLayout
from simready.artifacts.records import Outcomes, Render, Results, ValidityRecord
from simready.review.text import readable
from simready.testing.servers import dagster_webserver
from simready.resources import ArtifactStore, SourceData
from tests.fixtures.browser import serve

# One worker runs the module under `make test` (--dist loadgroup): the suite and the webserver are built once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("review_browser")]

TLA = "two_lane_arterial"
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """Two samples of one template through every stage on a SQLite instance; ``(tmp, home, artifacts, url)``,
    the artifacts served at ``url`` while the module runs (metadata links are that server's URLs)."""
    tmp = tmp_path_factory.mktemp("review")
    home, artifacts = tmp / "dagster_home", tmp / "artifacts"
    home.mkdir()
    artifacts.mkdir()
    suite_file = tmp / "suite.yaml"
    suite_file.write_text(yaml.safe_dump({
        "suite_id": "browser", "batches": 1, "reference_per_intent": 2, "templates": {TLA: {"lead_vehicle_brakes": 2}},
        "observation": {"pre_s": 0.3, "post_s": 0.5, "set": ["camera.width_px=320", "camera.height_px=180",
                                                           "lidar.azimuth_steps=256"], "video": True}}))
    with serve(artifacts) as url, pytest.MonkeyPatch.context() as env:
        env.setenv("SIMREADY_ARTIFACTS", str(artifacts))
        env.setenv("SIMREADY_ARTIFACTS_URL", url)
        resources = {"store": ArtifactStore(), "source": SourceData(suite_file=str(suite_file))}
        instance = dg.DagsterInstance.from_config(str(home))
        instance.add_dynamic_partitions(batch_partitions.name, ["b0000"])
        key = dg.MultiPartitionKey({"template": TLA, "batch": "b0000"})
        assert dg.materialize([certified_assets], instance=instance, resources=resources).success
        assert dg.materialize([world_templates, sensor_rigs, reference_pools], partition_key=TLA,
                              instance=instance, resources=resources).success
        batch_run = dg.materialize([scenario_manifests, trajectories, checkpoints_and_branches, observations_and_truth,
                                    validity_reports], partition_key=key, instance=instance, resources=resources)
        assert batch_run.success
        (home / "batch_run_id").write_text(batch_run.run_id)
        assert dg.materialize([split_assignments, coverage_report], instance=instance, resources=resources).success
        instance.dispose()
        yield tmp, home, artifacts, url


def test_a_batch_run_adds_at_most_100_kb_per_sample_to_the_instance(suite):
    """Pictures go to the artifact store as thumbnails and links, never into the event log (issue 19: the
    instance grows by at most 100 KB per sample)."""
    _, home, artifacts, _ = suite
    instance = dg.DagsterInstance.from_config(str(home))
    logs = instance.all_logs((home / "batch_run_id").read_text())
    size = sum(len(serialize_value(e)) for e in logs)
    samples = len(ArtifactLayout(artifacts).batch(TLA, "b0000").samples())
    print(f"batch run: {len(logs)} events, {size / 1024:.1f} KB for {samples} sample(s)")
    assert size <= 100 * 1024 * samples, size
    instance.dispose()


def _links(page) -> list[str]:
    return page.eval_on_selector_all("a[href], img[src], video[src]",
                                     "els => els.map(e => e.getAttribute('href') || e.getAttribute('src'))")


def test_review_page_plays_the_videos_on_one_clock_and_shows_the_check_table(suite, browser):
    _, _, artifacts, _ = suite
    sample = ArtifactLayout(artifacts).batch(TLA, "b0000").samples()[0]
    record = ValidityRecord.read(sample.validity)
    page = browser.new_page()
    page.goto(sample.review_page.as_uri())

    # Relative links only, each to a file or folder the sample (or the suite index) has.
    for link in _links(page):
        assert "://" not in link and not link.startswith("/"), link
        assert (sample.root / link).exists(), link

    # The gate's check table of the base and of each branch: a real table, one row per check, reasons in cells.
    for variant, report in [("base", record.base), *sorted(record.branches.items())]:
        table = page.locator(f"table.checks[data-variant='{variant}']")
        assert table.evaluate("t => t.tagName") == "TABLE"
        rows = table.locator("tbody tr")
        assert rows.count() == len(report["checks"]) == 5
        for i, check in enumerate(report["checks"]):
            cells = rows.nth(i).locator("td")
            assert cells.nth(0).inner_text() == check["check"]
            assert cells.nth(2).inner_text() == ("passed" if check["passed"] else "failed")
            for reason in check["detail"]["violations"]:  # as a reviewer reads it (a z past 10 σ as "> 10 σ")
                assert readable(reason) in cells.nth(5).inner_text()
        why = page.locator(f"#gate-{variant} + div.why").inner_text()
        assert why.startswith("Accepted" if report["accepted"] else "Rejected")

    # Base and branch videos (camera, LiDAR, radar each) play together on the scenario clock.
    videos = page.locator("video")
    assert videos.count() == 3 * (1 + len(record.branches))
    page.click("#play")
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('video')).every(v => v.readyState >= 2 && v.currentTime > 0.05)",
        timeout=15_000)
    clock = float(page.locator("#clock").input_value())
    times = page.eval_on_selector_all("video", "vs => vs.map(v => [parseFloat(v.dataset.t0), parseFloat(v.dataset.t1), "
                                               "v.currentTime])")
    for t0, t1, current in times:  # each video shows the clock's moment (within the resync tolerance and a frame),
        # held at its end once the clock has passed its window (the videos load their data when played)
        assert abs(current - min(max(clock - t0, 0.0), t1 - t0)) < 0.35, (t0, t1, current, clock)
    page.close()


def _seek_and_read(page, t: float) -> list[tuple[float, float, float]]:
    """Move the scenario clock's slider to ``t`` as a reviewer drags it; each video's (t0, t1, currentTime) once
    every video has finished seeking."""
    page.eval_on_selector("#clock", "(s, t) => { s.value = t; s.dispatchEvent(new Event('input')); }", t)
    page.wait_for_function("() => Array.from(document.querySelectorAll('video')).every(v => !v.seeking && v.readyState >= 1)",
                           timeout=15_000)
    return page.eval_on_selector_all(
        "video", "vs => vs.map(v => [parseFloat(v.dataset.t0), parseFloat(v.dataset.t1), v.currentTime])")


@pytest.mark.parametrize("how", ["file", "http"])
def test_moving_the_clock_seeks_every_video(suite, browser, how):
    """Issue 28: dragging the scenario clock moves every video's playhead to the clock's moment, from a copy of
    the files and from the server ``make ui`` starts (which must answer byte ranges for a browser to seek)."""
    _, _, artifacts, url = suite
    sample = ArtifactLayout(artifacts).batch(TLA, "b0000").samples()[0]
    page = browser.new_page()
    page.goto(sample.review_page.as_uri() if how == "file" else
              f"{url}/{sample.review_page.relative_to(artifacts).as_posix()}")
    page.wait_for_function("() => Array.from(document.querySelectorAll('video')).every(v => v.readyState >= 1)",
                           timeout=15_000)
    lo, hi = float(page.eval_on_selector("#clock", "s => s.min")), float(page.eval_on_selector("#clock", "s => s.max"))
    for t in (lo + 0.3 * (hi - lo), lo + 0.8 * (hi - lo)):
        t = round(t, 2)
        seen = _seek_and_read(page, t)
        assert any(t0 <= t < t1 for t0, t1, _ in seen)
        for t0, t1, current in seen:
            want = min(max(t - t0, 0.0), t1 - t0)
            assert abs(current - want) < 0.12, (how, t, t0, t1, current)
    page.close()


def test_the_clock_marks_the_decision_and_each_collision(suite, browser):
    """The slider carries a mark at the decision and at each branch's collision; clicking one moves the clock
    there. A colliding branch's clip runs past its collision (the outcome is on video)."""
    _, _, artifacts, _ = suite
    samples = ArtifactLayout(artifacts).batch(TLA, "b0000").samples()
    page = browser.new_page()
    for sample in samples:
        outcomes = Outcomes.read(sample.outcomes)
        page.goto(sample.review_page.as_uri())
        marks = [tuple(m) for m in page.eval_on_selector_all(
            "#marks .mark", "ms => ms.map(m => [m.classList[1], parseFloat(m.dataset.t)])")]
        collided = [b for b in outcomes.branches if b.collision]
        assert ("decision", pytest.approx(outcomes.decision_t_s, abs=1e-3)) in marks
        assert sorted(t for kind, t in marks if kind == "collision") == \
            pytest.approx(sorted(b.collision_t for b in collided), abs=1e-3)
        for b in collided:
            window = Render.read(sample.branch(b.label).observations.render).settings.window_s
            assert window[0] <= b.collision_t < window[1], (b.label, b.collision_t, window)
            page.click(f"#marks .mark.collision[data-t='{b.collision_t:.3f}']")
            assert float(page.locator("#clock").input_value()) == pytest.approx(b.collision_t, abs=0.01)
    page.close()


def test_the_scene_is_drawn_on_the_clock(suite, browser):
    """Issue 28 item 8: a bird's-eye view per branch with every actor's box at the clock's moment over the LiDAR
    points of the sweep that fires then, and the subject's plots, redrawn as the clock moves: boxes and points drawn
    and moved at three clock times of each branch's window, every plot with a line per variant."""
    _, _, artifacts, _ = suite
    sample = ArtifactLayout(artifacts).batch(TLA, "b0000").samples()[0]
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(sample.review_page.as_uri())
    page.wait_for_function("() => document.getElementById('bev').dataset.ready === '1'", timeout=15_000)
    variants = 1 + len(list(sample.branches()))
    for branch in sample.branches():
        w0, w1 = Render.read(branch.observations.render).settings.window_s[0], \
            Render.read(branch.observations.render).settings.window_s[-1]
        pictures, sweeps = [], []
        for t in (w0 + 0.05, (w0 + w1) / 2, w1 - 0.05):
            t = round(t, 2)
            page.eval_on_selector("#clock", "(s, t) => { s.value = t; s.dispatchEvent(new Event('input')); }", t)
            bevs = page.eval_on_selector_all("canvas.bev", "cs => cs.map(c => [c.dataset.variant, +c.dataset.boxes, "
                                                           "c.dataset.t, +c.dataset.points, c.dataset.sweep, c.toDataURL()])")
            assert sorted(v for v, *_ in bevs) == sorted(b.label for b in sample.branches())
            ((_, boxes, at, points, sweep, png),) = [b for b in bevs if b[0] == branch.label]
            assert boxes >= 2 and abs(float(at) - t) < 0.01 and points > 200, (branch.label, t, boxes, at, points)
            pictures.append(png)
            sweeps.append(int(sweep))
            plots = page.eval_on_selector_all("canvas.plot", "cs => cs.map(c => [c.dataset.series, +c.dataset.lines])")
            assert [k for k, _ in plots] == ["speed", "gap", "ttc", "accel"] and all(n == variants for _, n in plots)
        assert pictures[0] != pictures[1] != pictures[2]  # the boxes and points moved with the clock
        assert sweeps[0] < sweeps[1] < sweeps[2], sweeps  # each moment shows its own sweep
    assert errors == []
    page.close()


def test_the_camera_shows_lidar_points_and_truth_boxes_on_the_clock(suite, browser):
    """Issue 28 item 8: base, brake and coast cameras side by side, each with the LiDAR points and the truth boxes
    drawn over it for the frame its video shows, at three clock times; a box's centre lies on its actor's pixels
    in that frame's id pass."""
    import numpy as np
    from PIL import Image

    from simready.artifacts.records import Legend
    from simready.sensors_hw.camera import decode_id_rgb

    _, _, artifacts, _ = suite
    sample = ArtifactLayout(artifacts).batch(TLA, "b0000").samples()[0]
    folders = {"base": sample.observations, **{b.label: b.observations for b in sample.branches()}}
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(sample.review_page.as_uri())
    page.wait_for_function("() => document.getElementById('cameras').dataset.ready === '1'", timeout=15_000)
    lo, hi = float(page.eval_on_selector("#clock", "s => s.min")), float(page.eval_on_selector("#clock", "s => s.max"))
    centres = 0
    for t in (lo + 0.05, (lo + hi) / 2, hi - 0.05):
        _seek_and_read(page, round(t, 2))
        page.wait_for_timeout(100)  # a redraw after the last seek
        drawn = page.eval_on_selector_all("canvas.overlay", """cs => cs.map(c => {
            const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
            let painted = 0; for (let i = 3; i < px.length; i += 4) if (px[i]) painted++;
            return [c.dataset.variant, +c.dataset.tick, +c.dataset.points, +c.dataset.boxes, JSON.parse(c.dataset.centres), painted];
        })""")
        assert sorted(v for v, *_ in drawn) == sorted(folders), drawn
        for variant, tick, points, boxes, at, painted in drawn:
            assert points > 100 and boxes >= 1 and painted > points, (t, variant, tick, points, boxes, painted)
            obs = folders[variant]
            ids = {e.entity.rsplit("actor:", 1)[-1]: e.compact_id for e in Legend.read(obs.legend).entries}
            (camera,) = Results.read(obs.results).cameras
            image = decode_id_rgb(np.asarray(Image.open(obs.root / camera / f"{tick:08d}.id.png").convert("RGB")))
            for actor, u, v in at:
                u, v = round(u), round(v)
                assert (image[max(v - 2, 0):v + 3, max(u - 2, 0):u + 3] == ids[actor]).any(), (variant, tick, actor, u, v)
                centres += 1
    assert centres >= 3
    assert errors == []
    page.close()


def test_a_colliding_branch_clip_shows_the_collision(suite):
    """Issue 28 item 1: the frame at a branch's collision is inside its clip, and there the other party fills the
    camera down to the bottom row, where the ego's own front is (its id pixels meet the ego)."""
    import numpy as np
    from PIL import Image

    from simready.artifacts.records import Legend, Results

    _, _, artifacts, _ = suite
    seen = 0
    for sample in ArtifactLayout(artifacts).batch(TLA, "b0000").samples():
        for b in (b for b in Outcomes.read(sample.outcomes).branches if b.collision):
            obs = sample.branch(b.label).observations
            ids = {e.entity.rsplit("actor:", 1)[-1]: e.compact_id for e in Legend.read(obs.legend).entries}
            (camera, frames), = Results.read(obs.results).cameras.items()
            at = min((f for f in frames.frames if f.t0_s >= b.collision_t - 1e-9), key=lambda f: f.t0_s)
            assert at.t0_s - b.collision_t < 0.1, (b.label, at.t0_s, b.collision_t)  # a frame at the impact
            rgb = np.asarray(Image.open(obs.root / camera / f"{at.tick:08d}.id.png").convert("RGB")).astype(np.int64)
            other = (rgb[..., 0] + 256 * rgb[..., 1] + 65536 * rgb[..., 2]) == ids[b.collision_with.rsplit("actor:", 1)[-1]]
            assert other.mean() > 0.25 and other[-1].any(), (sample.sample_id, b.label, other.mean())
            seen += 1
    assert seen >= 1  # the suite's coast branches run into the braking lead


def test_suite_index_lists_every_sample_and_filters_by_verdict(suite, browser):
    _, _, artifacts, _ = suite
    layout = ArtifactLayout(artifacts)
    samples = layout.batch(TLA, "b0000").samples()
    page = browser.new_page()
    page.goto(layout.review_index.as_uri())
    rows = page.locator("#samples tbody tr")
    assert rows.count() == len(samples) >= 1
    for link in _links(page):
        assert "://" not in link and (layout.review_dir / link).is_file(), link
    verdict = rows.first.get_attribute("data-verdict")
    other = next(v for v in ("accepted", "branch rejected", "rejected") if v != verdict)
    page.evaluate(f"() => {{ const s = document.querySelector('select[data-filter=verdict]'); "
                  f"s.add(new Option('{other}', '{other}')); }}")
    page.select_option("select[data-filter=verdict]", other)
    assert page.locator("#samples tbody tr:not([hidden])").count() == 0
    assert page.locator("#shown").inner_text() == "0"
    page.select_option("select[data-filter=verdict]", verdict)
    assert page.locator("#samples tbody tr:not([hidden])").count() == len(samples)

    # Outcomes at a glance (issue 28): each branch's outcome, a picture per sample, a filter on collisions.
    outcomes = {s.sample_id: Outcomes.read(s.outcomes) for s in samples}
    collided = {k for k, o in outcomes.items() if any(b.collision for b in o.branches)}
    for k, o in outcomes.items():
        row = page.locator("#samples tbody tr", has=page.locator(f"a:text-is('{k}')"))
        assert row.get_attribute("data-collided") == ("yes" if k in collided else "no")
        for b in o.branches:
            if b.collision:
                assert f"✸ {b.collision_with.rsplit('actor:', 1)[-1]} at {b.collision_t:.2f} s" in row.inner_text()
    page.wait_for_function("() => Array.from(document.querySelectorAll('img.thumb')).every(i => i.complete && "
                           "i.naturalWidth > 0)")
    assert page.locator("img.thumb").count() == len(samples)
    page.select_option("select[data-filter=collided]", "yes" if collided else "no")
    assert page.locator("#samples tbody tr:not([hidden])").count() == (len(collided) or len(samples))
    page.select_option("select[data-filter=collided]", "")
    # Sorting by validity, both ways.
    head = page.locator("#samples thead th", has_text="validity")
    column = page.eval_on_selector_all("#samples thead th", "hs => hs.findIndex(h => h.textContent === 'validity')")

    def validities() -> list[float]:
        return [float(x) for x in page.eval_on_selector_all(
            "#samples tbody tr", f"rs => rs.map(r => r.children[{column}].textContent.trim())")]
    head.click()
    assert validities() == sorted(validities())
    head.click()
    assert validities() == sorted(validities(), reverse=True)

    page.click("#samples tbody tr a")
    assert page.url in {s.review_page.as_uri() for s in samples}
    page.close()


def test_review_pages_fit_a_1600_px_screen(suite, browser):
    """Issue 28: no table runs past the right edge of a 1600 px window, on the index and on a sample's page."""
    _, _, artifacts, _ = suite
    layout = ArtifactLayout(artifacts)
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    for target in (layout.review_index, *(s.review_page for s in layout.batch(TLA, "b0000").samples())):
        page.goto(target.as_uri())
        overflow = page.evaluate("() => Array.from(document.querySelectorAll('table')).map(t => "
                                 "[t.id || t.className, Math.round(t.getBoundingClientRect().right)])"
                                 ".filter(([_, right]) => right > window.innerWidth)")
        assert overflow == [], (target.name, overflow)
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth"), target
    page.close()


@pytest.fixture(scope="module")
def dagster_ui(suite):
    """The Dagster UI on the suite's instance (one webserver for the module: each start loads the code location);
    its base URL."""
    _, home, artifacts, _ = suite
    env = {**os.environ, "DAGSTER_HOME": str(home), "SIMREADY_ARTIFACTS": str(artifacts)}
    with dagster_webserver(REPO / "workspace.yaml", env, home / "webserver.log") as base:
        yield base


def test_dagster_ui_renders_the_lineage_and_an_asset_page_with_a_picture_and_a_table(dagster_ui, browser):
    base = dagster_ui
    page = browser.new_page(viewport={"width": 1600, "height": 1000})

    # The lineage graph: every stage's group drawn as a node with edges between them, and an asset's
    # neighbours drawn around it. (Dagster's community dialog may cover the page; nothing here clicks.)
    page.goto(f"{base}/asset-groups", wait_until="domcontentloaded")
    order = ("inputs", "world", "scenario", "simulation", "measurement", "validity", "suite")
    for group in order:
        page.locator("svg foreignObject", has_text=group).first.wait_for(timeout=30_000)
    assert page.locator("svg path").count() >= 5
    # It reads left to right in the order data flows, the input files first.
    x = dict(page.eval_on_selector_all("svg foreignObject", "els => els.map(e => [e.textContent.trim().split(/\\s/)[0], "
                                                            "e.getBoundingClientRect().x])"))
    assert [x[g] for g in order] == sorted(x[g] for g in order), x
    page.goto(f"{base}/assets/validity_reports?view=lineage", wait_until="domcontentloaded")
    for name in ("action_branches", "sensor_observations", "reference_pools", "coverage_report"):
        page.locator("svg foreignObject", has_text=name).first.wait_for(timeout=30_000)
    page.goto(f"{base}/assets/world_templates?view=lineage", wait_until="domcontentloaded")
    page.locator("svg foreignObject", has_text="template_sources").first.wait_for(timeout=30_000)

    # An asset page: the template's top-down picture inline (a thumbnail that loaded), a table inline.
    page.goto(f"{base}/assets/world_templates", wait_until="domcontentloaded")
    picture = page.locator("img[alt*='top-down']").first
    picture.wait_for(timeout=30_000)
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=picture.element_handle())
    width = picture.evaluate("img => img.getBoundingClientRect().width")
    assert 0 < width <= 640, width  # a thumbnail, not the full-size plot cut off at the page's edge
    contents = page.locator("table", has=page.locator("th", has_text="count")).last
    contents.wait_for(timeout=10_000)
    assert contents.locator("th").all_inner_texts() == ["what", "count"]
    assert contents.locator("td", has_text="lanes").count() == 1
    page.close()


def test_the_asset_pages_wide_tables_fit_a_1600_px_window(dagster_ui, browser):
    """Issue 28 item 4: the tables reviewers read on the asset pages (the gate's verdicts, the branch outcomes, the
    manifests, the observations) keep every column inside a 1600 px window, with ✓/✗ for yes/no."""
    wanted = {"validity_reports": "failed", "action_branches": "impact_mps", "scenario_manifests": "split",
              "sensor_observations": "frames front_camera"}
    base = dagster_ui
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    for asset, column in wanted.items():
        page.goto(f"{base}/assets/{asset}", wait_until="domcontentloaded")
        table = page.locator("table", has=page.locator("th", has_text=column)).first
        table.wait_for(timeout=30_000)
        right = table.evaluate("t => Math.max(...Array.from(t.querySelectorAll('th')).map(h => "
                               "h.getBoundingClientRect().right))")
        assert right <= 1600, (asset, right)
        assert "True" not in table.inner_text() and "False" not in table.inner_text(), asset
    page.close()


def test_coverage_report_rolls_up_what_each_validity_partition_counts(suite):
    """One set of numbers (issue 19 item 3): coverage_report's acceptance per template and batch holds each
    validity_reports partition's counts, and its rows sum to the suite's bases_accepted, bases_rejected and
    branches table (which the run summary prints from the same suite_weights.json)."""
    _, home, artifacts, _ = suite
    instance = dg.DagsterInstance.from_config(str(home))
    cov = instance.get_latest_materialization_event(coverage_report.key).asset_materialization.metadata
    rows = [r.data for r in cov["acceptance_by_template_batch"].value.records]
    assert [(r["template"], r["batch"]) for r in rows] == [(TLA, "b0000")]
    part = instance.get_latest_materialization_event(validity_reports.key).asset_materialization
    assert part.partition == str(dg.MultiPartitionKey({"template": TLA, "batch": "b0000"}))
    for name in ("bases_accepted", "bases_rejected", "branches_accepted", "branches_rejected"):
        assert rows[0][name] == part.metadata[name].value, name
    assert sum(r["bases_accepted"] for r in rows) == cov["bases_accepted"].value
    assert sum(r["bases_rejected"] for r in rows) == cov["bases_rejected"].value
    branches = [r.data for r in cov["branches"].value.records]
    assert sum(r["branches_accepted"] for r in rows) == sum(b["accepted"] for b in branches)
    assert sum(r["branches_rejected"] for r in rows) == sum(b["rejected"] for b in branches)
    assert rows[0]["samples"] == rows[0]["bases_accepted"] + rows[0]["bases_rejected"] == 2
    by_intent = [r.data for r in cov["by_intent"].value.records]
    assert sum(r["cells_with_a_sample"] for r in by_intent) == cov["cells_with_a_sample"].value
    assert sum(r["cells_filled_to_target"] for r in by_intent) == cov["cells_filled_to_target"].value
    instance.dispose()


def test_data_docs_show_when_the_run_validated_the_tables(suite):
    """Issue 28 item 6: the Data Docs index written by coverage_report shows the run's recorded start as each
    validation's time (not the fixed 1970 time its pages' paths are stored under)."""
    import datetime
    import re

    _, home, artifacts, _ = suite
    instance = dg.DagsterInstance.from_config(str(home))
    event = instance.get_latest_materialization_event(coverage_report.key)
    started = instance.get_run_record_by_id(event.run_id).start_time
    instance.dispose()
    html = ArtifactLayout(artifacts).data_docs_index.read_text()
    times = re.findall(r"'run_time': '([^']*)', '_run_time_sort': ([0-9.]+)", html)
    assert times, "no validation listed"
    want = datetime.datetime.fromtimestamp(started, datetime.timezone.utc).replace(microsecond=0).timestamp()
    assert all(not shown.startswith("1970") and float(sort) == want for shown, sort in times), (times, want)
