"""μ by δ_tail in every rendering: the declared failure probability and the pasteable table."""

import dataclasses
import json
import math
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from gaussdp import DPSGD, ApproxDP, Composition, Gaussian, Repeated, account
from gaussdp.cli import cli, main
from gaussdp.report import report
from gaussdp.report.core import DEFAULT_DELTA_TAIL, MuRow
from gaussdp.report.render import mu_delta_svg

SVG = "{http://www.w3.org/2000/svg}"
TABLE = (1e-6, 1e-8, 1e-10, 1e-12)


@pytest.fixture(scope="module")
def dpsgd():
    return account(DPSGD(1.0, 0.01, 1000)).gdp()


@pytest.fixture(scope="module")
def declared():
    return report(DPSGD(1.0, 0.01, 1000), delta_tail=1e-7)


@pytest.fixture(scope="module")
def gaussian():
    return report(Repeated(Gaussian(2.0), 4))


def test_json_table(dpsgd):
    payload = json.loads(dpsgd.to_json())
    assert payload["delta_tail"] == DEFAULT_DELTA_TAIL == payload["delta_tail_default"] == 1e-10
    rows = payload["mu_by_delta_tail"]
    certified = [row for row in rows if row["kind"] == "certified"]
    assert [row["delta_tail"] for row in certified] == list(TABLE)
    for row in certified:
        assert row["mu"] == dpsgd.mu_for(row["delta_tail"])
    mus = [row["mu"] for row in certified]
    assert mus == sorted(mus)  # δ_tail decreasing, so μ non-decreasing down the table
    assert certified[2]["mu"] == payload["mu"]
    # The δ_tail → 0 end: the GDPT tail limit, above every certified μ.
    assert rows[-1] == {"delta_tail": 0.0, "mu": payload["mu_tail"], "kind": "tail limit"}
    assert rows[-1]["mu"] > mus[-1]


def test_json_table_with_a_declared_delta_tail(declared):
    payload = declared.to_dict()
    assert payload["delta_tail"] == 1e-7 and payload["delta_tail_default"] == 1e-10
    certified = [row for row in payload["mu_by_delta_tail"] if row["kind"] == "certified"]
    assert [row["delta_tail"] for row in certified] == [1e-6, 1e-7, 1e-8, 1e-10, 1e-12]
    assert certified[1]["mu"] == payload["mu"] == declared.mu_for(1e-7)
    mus = [row["mu"] for row in certified]
    assert mus == sorted(mus)


def _rounded_up(dpsgd):
    """μ of the certified rows, rounded up to 4 decimals as an upper bound must be."""
    rows = [row for row in dpsgd.mu_by_delta_tail if row.kind == "certified"]
    values = {row.delta_tail: math.ceil(row.mu * 1e4) / 1e4 for row in rows}
    return {key: f"{value:.4f}" for key, value in values.items()}


def test_text_states_the_failure_probability_and_the_table(dpsgd):
    lines = dpsgd.to_text().splitlines()
    up4 = _rounded_up(dpsgd)
    assert lines[1] == (
        f"mu = {up4[1e-10]}  (mu-GDP except with probability delta_tail = 1e-10, the default)"
    )
    assert lines[2] == (
        "mu by delta_tail (upper bounds; the mechanism is mu-GDP except with probability "
        "delta_tail):"
    )
    assert lines[3:7] == [
        f"  delta_tail = 1e-06: mu = {up4[1e-6]}",
        f"  delta_tail = 1e-08: mu = {up4[1e-8]}",
        f"  delta_tail = 1e-10: mu = {up4[1e-10]} (reported, the default)",
        f"  delta_tail = 1e-12: mu = {up4[1e-12]}",
    ]
    assert lines[7].startswith("  delta_tail -> 0: mu >= 31.623 (GDPT tail limit")
    assert "not certified" in lines[7] and "subsampling does not amplify the tail" in lines[7]
    text = "\n".join(lines)
    assert "is a declared failure probability (the default)" in text
    assert "the accountant resolves nothing below its floor" in text


def test_text_with_a_declared_delta_tail(declared):
    text = declared.to_text()
    assert "delta_tail = 1e-07, declared; the default is 1e-10)" in text.splitlines()[1]
    assert "  delta_tail = 1e-07: mu = " in text and "(reported)" in text
    assert "  delta_tail = 1e-10: mu = " in text and "(the default)" in text
    assert "(not the default)" in text


def test_strict_gaussian_says_mu_holds_for_every_delta_tail(gaussian):
    text = gaussian.to_text()
    assert "strict mu-GDP: no failure probability" in text.splitlines()[1]
    assert "mu by delta_tail: mu = 1.0000 for every delta_tail, including 0" in text
    assert "delta_tail -> 0" not in text
    assert "μ = 1.0000 for every δ_tail, including 0 (strict, closed form)." in (
        gaussian.to_markdown()
    )
    assert gaussian.to_dict()["delta_tail"] == 0.0


def test_markdown_table_can_be_pasted(dpsgd):
    text = dpsgd.to_markdown()
    assert "| δ_tail | 1e-10 | declared failure probability (default 1e-10);" in text
    block = text.split("| δ_tail | μ (upper bound) |\n", 1)[1].split("\n\n", 1)[0]
    up4 = _rounded_up(dpsgd)
    assert block.splitlines() == [
        "|---|---|",
        f"| 1e-06 | {up4[1e-6]} |",
        f"| 1e-08 | {up4[1e-8]} |",
        f"| 1e-10 | {up4[1e-10]} (reported, the default) |",
        f"| 1e-12 | {up4[1e-12]} |",
        "| → 0 | ≥ 31.623 (tail limit) |",
    ]
    assert "lower bound on the strict μ, not a certified μ" in text


def test_html_table_and_plot(dpsgd):
    page = dpsgd.to_html()
    assert "<script" not in page and "<link" not in page
    assert {part for part in page.split('"') if part.startswith("http")} == {
        "http://www.w3.org/2000/svg"
    }
    assert "except with probability δ_tail = 1e-10 (the default)" in page
    section = page.split("<h2>μ by δ_tail</h2>", 1)[1].split("<h2>", 1)[0]
    reported = _rounded_up(dpsgd)[1e-10]
    assert f'<tr class="reported"><td>1e-10</td><td>{reported}</td>' in section
    assert "<td>→ 0</td><td>≥ 31.623</td>" in section
    assert section.count("<svg") == 1
    root = ET.fromstring(mu_delta_svg(dpsgd))
    assert root.attrib["aria-label"] == "mu against delta_tail on a log axis"
    circles = root.findall(SVG + "circle")
    assert len(circles) == 5  # four rows and the reported one ringed
    ticks = [text.text for text in root.findall(SVG + "text")]
    assert {"1e-12", "1e-10", "1e-8", "1e-6"} <= set(ticks)
    # 31.6 is far above μ ≈ 0.5: the tail limit is in the caption, not on the plot.
    assert "tail limit (lower bound)" not in ET.tostring(root, encoding="unicode")
    assert "μ ≥ 31.623 (off the plotted range)" in section


def test_html_plot_draws_a_near_tail_limit(dpsgd):
    rows = (*dpsgd.mu_by_delta_tail[:-1], MuRow(0.0, 0.6, "tail limit"))
    near = dataclasses.replace(dpsgd, mu_tail=0.6, mu_by_delta_tail=rows)
    figure = mu_delta_svg(near)
    assert "tail limit (lower bound)" in figure and "mu &gt;= 0.6" in figure
    ET.fromstring(figure)
    assert "(dashed line)" in near.to_html()


def test_one_certified_point_is_no_plot():
    r = report(Composition([Gaussian(1.0), ApproxDP(1.0, 1e-6)]), delta_tail=2e-6)
    assert [row.mu is None for row in r.mu_by_delta_tail[1:5]] == [True] * 4
    assert mu_delta_svg(r) is None
    page = r.to_html()
    assert page.count("<svg") == 3
    assert "below the accountant&#x27;s floor" in page
    text = r.to_text()
    assert "  delta_tail = 1e-12: not certified (below the accountant's floor" in text
    assert "  delta_tail -> 0: mu = inf" in text
    assert r.to_dict()["mu_by_delta_tail"][-1] == {
        "delta_tail": 0.0,
        "mu": "inf",
        "kind": "tail limit",
    }


def test_default_below_the_floor_says_delta_tail_is_the_floor_plus_the_default():
    """Mass 1e-6 at infinite loss: the default 1e-10 cannot be certified; δ_tail is the
    floor plus the default, and μ there is the μ at the floor (a Gaussian needs no more).
    """
    r = report(Composition([Gaussian(1.0), ApproxDP(1.0, 1e-6)]))
    assert r.delta_tail == pytest.approx(r.delta_floor + DEFAULT_DELTA_TAIL, rel=1e-12)
    assert math.isfinite(r.mu) and r.mu == pytest.approx(r.mu_for(r.delta_floor), rel=1e-4)
    text = r.to_text()
    words = "the accountant's floor plus the default 1e-10"
    assert f"{words}: the default alone is below the floor)" in text.splitlines()[1]
    assert "plus the default 1e-10, not a declared choice" in text
    assert "declared failure probability" not in text
    assert f"| {words} (the default alone is below the floor);" in r.to_markdown()
    assert "floor plus the default 1e-10 (the default alone is below the floor)" in r.to_html()


def test_below_the_floor_the_rest_of_the_mechanism_keeps_the_default_failure_probability():
    """DP-SGD with an (ε, 1e-8) part: at δ_tail = the floor no failure probability is left
    for DP-SGD's own tail, and μ is that tail's (0.817); the floor plus the default 1e-10
    leaves it 1e-10, as for DP-SGD alone, and μ is 0.52. The text says which and why.
    """
    r = account(Composition([DPSGD(1.0, 0.01, 1000), ApproxDP(0.1, 1e-8)])).gdp()
    floor = r.delta_floor
    assert 1e-8 <= floor < 1.001e-8
    assert r.delta_tail == pytest.approx(floor + DEFAULT_DELTA_TAIL, rel=1e-12)
    at_floor = r.mu_for(floor)
    assert r.mu < 0.7 * at_floor
    assert r.mu == pytest.approx(r.mu_for(r.delta_tail), rel=1e-12)
    text = r.to_text()
    assert "no failure probability would be left for the rest of the mechanism" in text
    assert "declared failure probability" not in text


def test_cli_help_states_the_default():
    result = CliRunner().invoke(cli, ["report", "--help"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "(default 1e-10)" in text
    assert "μ-GDP except with probability δ_tail" in text
    assert "strict, δ_tail = 0" in text


@pytest.mark.parametrize("value", ["0", "1.5", "1", "-1e-9", "nan"])
def test_cli_bad_delta_tail_is_one_line_and_exit_2(value, capsys):
    argv = ["report", "dpsgd", "--noise-multiplier", "1", "--sampling-probability", "0.1"]
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--steps", "10", "--delta-tail", value])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("gaussdp: error: delta_tail must be in (0, 1), got ")


def test_cli_text_report_has_the_table():
    result = CliRunner().invoke(
        cli,
        [
            *("report", "dpsgd", "--noise-multiplier", "1", "--sampling-probability", "0.01"),
            *("--steps", "1000", "--delta-tail", "1e-8"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "delta_tail = 1e-08, declared; the default is 1e-10)" in result.output
    mu = account(DPSGD(1.0, 0.01, 1000)).gdp(delta_tail=1e-8).mu
    assert f"  delta_tail = 1e-08: mu = {math.ceil(mu * 1e4) / 1e4:.4f} (reported)" in result.output
