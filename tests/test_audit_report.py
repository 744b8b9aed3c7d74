"""The audit beside the accountant: interval, share, violation and p-value, renderings, figure."""

from __future__ import annotations

import json

import numpy as np
import pytest

import gaussdp
from gaussdp import gdp
from gaussdp.audit import AuditReport, from_counts, from_scores, one_run


@pytest.fixture(scope="module")
def gaussian_run():
    return gaussdp.Gaussian(2.0)  # exactly 0.5-GDP


def test_consistent_audit_has_no_violation(gaussian_run):
    rng = np.random.default_rng(11)
    result = from_scores(
        rng.normal(0.5, 1, 4000), rng.normal(0, 1, 4000), delta=1e-5, against=gaussian_run
    )
    report = result.report
    assert isinstance(report, AuditReport)
    assert result.violation is False and report.violation is False
    assert result.p_value >= 0.05
    assert report.mu_upper == pytest.approx(0.5)
    assert report.mu_lower <= report.mu_upper
    assert report.share == pytest.approx(report.mu_lower / 0.5)
    assert report.epsilon_upper == pytest.approx(gdp.epsilon(0.5, 1e-5), rel=1e-6)


def test_bug_is_a_violation_with_small_p(gaussian_run):
    rng = np.random.default_rng(12)
    # the code that ran adds a quarter of the noise: mu = 2 instead of 0.5
    result = from_scores(
        rng.normal(2.0, 1, 4000), rng.normal(0, 1, 4000), delta=1e-5, against=gaussian_run
    )
    assert result.violation is True
    assert result.p_value < 1e-6
    assert "VIOLATION" in result.report.to_text()


def test_p_value_is_the_smallest_violating_alpha(gaussian_run):
    # one threshold: the violation flips exactly at the p-value
    result = from_counts(700, 300, 200, 800, against=gaussian_run)
    p = result.p_value
    assert 0.0 < p < 1.0
    assert from_counts(
        700, 300, 200, 800, alpha=min(p * 1.01, 0.99), against=gaussian_run
    ).violation
    assert not from_counts(700, 300, 200, 800, alpha=p * 0.99, against=gaussian_run).violation


def test_accounting_or_mechanism_give_the_same_report(gaussian_run):
    accounting = gaussdp.account(gaussian_run)
    a = from_counts(700, 300, 200, 800, against=gaussian_run).report
    b = from_counts(700, 300, 200, 800, against=accounting).report
    assert (a.mu_upper, a.violation, a.p_value) == (b.mu_upper, b.violation, b.p_value)


def test_one_run_against_the_accountants_curve():
    run = gaussdp.DPSGD(noise_multiplier=1.0, sampling_probability=0.05, steps=100)
    accounting = gaussdp.account(run)
    fine = one_run(1000, 100, 60, delta=1e-5, against=accounting)
    broken = one_run(1000, 300, 298, delta=1e-5, against=accounting)
    assert fine.violation is False
    assert broken.violation is True and broken.p_value < 0.05


@pytest.mark.parametrize("output_format", ["text", "json", "markdown", "html"])
def test_renderings(gaussian_run, output_format):
    report = from_counts(700, 300, 200, 800, delta=1e-5, against=gaussian_run).report
    text = report.render(output_format)
    assert "0.5" in text
    if output_format == "json":
        payload = json.loads(text)
        assert payload["mu_interval"][1] == pytest.approx(0.5)
        assert payload["violation"] in (True, False)
        assert "model-based" in payload["audit"]["epsilon_from_mu_lower_kind"]
    if output_format == "html":
        assert "<svg" in text and "</html>" in text
    if output_format == "text":
        assert "lower bound" in text and "upper bound" in text


def test_bad_format(gaussian_run):
    report = from_counts(7, 3, 2, 8, against=gaussian_run).report
    with pytest.raises(ValueError, match="output_format must be one of"):
        report.render("pdf")


def test_plot_returns_axes(gaussian_run, tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    report = from_counts(5800, 4200, 4200, 5800, against=gaussian_run).report
    assert not report.violation
    ax = report.plot()
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    ax.figure.savefig(tmp_path / "audit.png")
    assert (tmp_path / "audit.png").stat().st_size > 1000
    _, accountant, audit, boxes = report.roc_points()
    # the accountant's curve lies above G_mu_lo (mu_lo <= mu_hi here)
    assert np.all(accountant >= audit - 1e-12)
    assert len(boxes) == 1


def test_svg_figure_stays_in_its_frame(gaussian_run):
    import re

    from gaussdp.audit.report import roc_svg

    report = from_counts(5800, 4200, 4200, 5800, against=gaussian_run).report
    svg = roc_svg(report, width=440, height=400)
    frame = re.search(
        r'class="frame" x="([^"]+)" y="([^"]+)" width="([^"]+)" height="([^"]+)"', svg
    )
    x0, y0, w, h = (float(v) for v in frame.groups())
    assert 0 < x0 and x0 + w <= 440 and 0 < y0 and y0 + h <= 400
    points = re.findall(r'points="([^"]+)"', svg)
    assert len(points) == 3  # diagonal, accountant, audit's G_mu
    for polyline in points:
        xy = np.array([[float(v) for v in p.split(",")] for p in polyline.split()])
        assert np.all((xy[:, 0] >= x0 - 1e-9) & (xy[:, 0] <= x0 + w + 1e-9))
        assert np.all((xy[:, 1] >= y0 - 1e-9) & (xy[:, 1] <= y0 + h + 1e-9))
    assert svg.count('class="box"') == svg.count('class="corner"') == 1  # one certified point
    # every number in the legend says what it is
    assert "(upper)" in svg and "(lower)" in svg


@pytest.mark.parametrize("shift", [0.5, 1.2])
def test_violation_search_on_many_thresholds_agrees_with_the_exact_one(
    monkeypatch, gaussian_run, shift
):
    """The bracketed search for violating points (many thresholds) vs every point exactly."""
    from gaussdp.audit import compare

    rng = np.random.default_rng(41)
    members, non_members = rng.normal(shift, 1, 3000), rng.normal(0, 1, 3000)
    exact = from_scores(members, non_members, against=gaussian_run)
    monkeypatch.setattr(compare, "EXACT_LIMIT", 8)
    searched = from_scores(members, non_members, against=gaussian_run)
    assert searched.violation == exact.violation == (shift > 0.5)
    # found violations are real ones, so the p-value can only be larger (conservative)
    assert searched.p_value >= exact.p_value * (1 - 1e-9)
    assert searched.p_value == pytest.approx(exact.p_value, rel=1e-6)


def test_one_run_figure_and_words_have_no_points(gaussian_run):
    """A one-run audit certifies no ROC point: no box in the figure or its legend."""
    from gaussdp.audit.report import roc_svg

    report = one_run(1000, 200, 180, delta=1e-5, against=gaussian_run).report
    svg = roc_svg(report)
    assert 'class="box"' not in svg and "confidence box" not in svg
    assert "certifies no ROC point" in report.caption()
    assert "certified audit point" not in report.verdict()


def test_share_beyond_the_claim_is_written_without_an_exponent(gaussian_run):
    report = from_counts(1000, 0, 0, 1000, against=gaussian_run).report
    assert report.share > 1.0
    row = dict((name, (value, kind)) for name, value, kind in report._rows())["share realised"]
    assert "e+" not in row[0] and row[0].endswith("%")
    assert "beyond the claim" in row[1]
    assert "empty interval" in report.to_text()


@pytest.mark.parametrize("level", [1e-3, 1e-6, 1e-12])
def test_screened_violation_check_is_the_exhaustive_one(level):
    """Runs of front candidates screened by their ideal corner: the same violators."""
    from gaussdp.audit import compare
    from gaussdp.audit.binomial import clopper_pearson_upper

    rng = np.random.default_rng(43)
    members, non_members = rng.normal(1.0, 1, 3000), rng.normal(0, 1, 3000)
    evidence = from_scores(members, non_members)._evidence
    curve = gaussdp.account(gaussdp.Gaussian(1.0 / 0.6)).tradeoff()  # below the attack's mu
    indices = np.arange(evidence.false_positives.size)
    found = evidence._exact(curve, level, indices)
    x = clopper_pearson_upper(evidence.false_positives, evidence.negatives, level)
    y = clopper_pearson_upper(evidence.false_negatives, evidence.positives, level)
    expected = indices[compare._below(curve, x, y)]
    assert np.array_equal(np.sort(found), expected)
    assert 0 < expected.size < indices.size  # some violate, some do not: the check could fail


@pytest.mark.parametrize("claimed_mu", [0.6, 0.75])
def test_p_value_from_champions_is_the_plain_search(claimed_mu):
    """The champions' search, checked against the others, gives the plain bisection's p."""
    from gaussdp.audit import compare

    rng = np.random.default_rng(47)
    members, non_members = rng.normal(1.0, 1, 3000), rng.normal(0, 1, 3000)
    evidence = from_scores(members, non_members)._evidence
    curve = gaussdp.account(gaussdp.Gaussian(1.0 / claimed_mu)).tradeoff()
    violation, p = evidence.test(curve, 0.05)
    candidates = evidence.violating(curve, 0.05)
    assert violation and candidates.size > compare.CHAMPIONS
    plain = compare.p_value(lambda level: evidence.violating(curve, level, candidates), 0.05)
    assert p == plain
    assert 1e-300 < p < 0.05  # a p-value strictly inside the search range: the check could fail


def test_violation_shortlist_is_the_deepest_by_every_estimate(monkeypatch):
    """Many bracket-screened points: the block-pruned shortlist is the exhaustive ranking's."""
    from gaussdp.audit import compare
    from gaussdp.audit.search import Segments

    monkeypatch.setattr(compare, "EXACT_LIMIT", 64)
    rng = np.random.default_rng(53)
    members, non_members = rng.normal(1.0, 1, 4000), rng.normal(0, 1, 4000)
    evidence = from_scores(members, non_members)._evidence
    curve = gaussdp.account(gaussdp.Gaussian(1.0 / 0.6)).tradeoff()
    level = 0.05 / evidence.divisor
    shortlist = evidence._shortlist(curve, level)
    fp, fn = evidence.false_positives, evidence.false_negatives
    segments = Segments(fp, evidence.negatives, fn, evidence.positives, level)
    screened = compare._below(curve, segments.fpr_lo, segments.fnr_lo)
    maybe = np.flatnonzero(np.repeat(screened, segments.lengths))
    depth = compare._depth(
        curve, segments.fp_table.estimate(fp[maybe]), segments.fn_table.estimate(fn[maybe])
    )
    assert maybe.size > 64
    expected = maybe[np.argpartition(-depth, 63)[:64]]
    assert np.array_equal(np.sort(shortlist), np.sort(expected))
