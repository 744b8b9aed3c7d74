"""Rendering the report (text, JSON, Markdown, HTML + SVG) and ``gaussdp report``."""

import html
import json
import math
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from gaussdp import (
    DPSGD,
    ApproxDP,
    Composition,
    Gaussian,
    Laplace,
    PureDP,
    Repeated,
    account,
)
from gaussdp.cli import cli, main
from gaussdp.report import Report, report
from gaussdp.report.render import difference_svg, linear_svg, log_svg

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def reports():
    return {
        "dpsgd": account(DPSGD(9.4, 0.32768, 2000)).gdp(),
        "pure": report(PureDP(1.0)),
        "gaussian": report(Repeated(Gaussian(2.0), 4)),
        # Mass 1e-6 at infinite loss: δ_tail is the floor (the default 1e-10 is below it),
        # and the μ table's rows 1e-6 ... 1e-12 are not certified.
        "approx": report(Composition([Gaussian(1.0), ApproxDP(1.0, 1e-6)])),
        "perfect": report(Gaussian(math.inf)),
        "no-privacy": report(PureDP(50.0)),  # tests within 1e-21 of TPR 1
        # e^ε·α overflows at the table's α* = 0 (advantage 1): was inf·0 = NaN.
        "overflow": report(Repeated(PureDP(50.0), 20)),
    }


NAMES = ["dpsgd", "pure", "gaussian", "approx", "perfect", "no-privacy", "overflow"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("output_format", ["text", "json", "markdown", "html"])
def test_every_format_renders_without_nan(reports, name, output_format):
    text = reports[name].render(output_format)
    assert "nan" not in text.lower().replace("nanos", "")
    assert "undefined" not in text
    if output_format == "json":
        payload = json.loads(text)
        # NaN would be written as null; the only null is μ where δ_tail is below the floor.
        assert list(_nulls(payload)) == [
            ("mu_by_delta_tail", i, "mu")
            for i, row in enumerate(payload["mu_by_delta_tail"])
            if row["kind"] == "below the accountant's floor"
        ]
        assert payload["tier"] in (1, 2)
        assert set(payload) >= {
            "mu",
            "delta_tail",
            "delta_tail_default",
            "mu_by_delta_tail",
            "regret",
            "epsilons",
            "table",
            "mu_tail",
        }


def _nulls(value, path=()):
    """The paths of every null (None) in a JSON payload."""
    if value is None:
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _nulls(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _nulls(item, (*path, i))


def test_text_report_reads_as_bounds(reports):
    text = reports["dpsgd"].to_text()
    lines = text.splitlines()
    # μ = 1.567277 at the default δ_tail = 1e-10 is an upper bound: printed rounded up.
    assert lines[1] == (
        "mu = 1.5673  (mu-GDP except with probability delta_tail = 1e-10, the default)"
    )
    assert "advantage = 0.56461 (upper bound" in text
    line = next(x for x in lines if x.startswith("  delta = 1e-05: epsilon = "))
    # An upper bound, printed rounded up: at or above the certified reference 7.42437891
    # (gaussdp at accuracy 1e-8, docs/benchmarks.md) and within the default accuracy.
    printed_upper = float(line.split("epsilon = ")[1].split(" ")[0])
    assert reports["dpsgd"].epsilons[0].epsilon <= printed_upper
    assert 7.42437891 <= printed_upper <= 7.42437891 * (1 + 5e-5)
    printed_lower = float(line.split("(lower ")[1].split(")")[0])
    # A lower bound, printed rounded down, within the default accuracy of dp_accounting's 7.4244.
    assert printed_lower <= reports["dpsgd"].epsilons[0].epsilon_lower
    assert 7.4244 * (1 - 3e-5) <= printed_lower < 7.4244
    assert "except with probability delta_tail" in lines[1]
    assert "upper bound" in text and "lower bound" in text
    assert "Tier I" in text
    assert "far tail needs mu = 4.7576" in text
    assert "alpha*" not in text  # Tier I: no table in text


def test_tier_two_text_has_the_table(reports):
    r = reports["pure"]
    assert r.tier == 2
    text = r.to_text()
    assert "alpha* (max advantage)" in text
    assert len(r.table) == 8
    assert [row.alpha for row in r.table[:7]] == [1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1]
    for row in r.table:
        assert row.beta_mu <= row.beta <= row.beta_optimistic


def test_markdown_is_a_pasteable_table(reports):
    text = reports["pure"].to_markdown()
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert table[0] == "| quantity | value | kind |"
    widths = {line.count("|") for line in table[:8]}
    assert widths == {4}
    assert "| 1e-10 |" in text  # Tier II curve table


def test_json_has_no_infinity_literals(reports):
    payload = reports["gaussian"].to_dict()
    assert payload["epsilon_tail"] == "inf"
    assert payload["regret"] == 0.0
    json.dumps(payload, allow_nan=False)


# ---------------------------------------------------------------------------
# Printed bounds are rounded toward less privacy
# ---------------------------------------------------------------------------

UP, DOWN = "upper", "lower"
NUMBER = r"([-+0-9.e]+|inf)"


def _beta_entry(text, beta, kind):
    """(printed, exact, kind) for a β cell; "1 - x" is checked as x against 1 − β."""
    text = text.strip()
    if text.startswith("1 - "):
        return (text[4:], 1.0 - beta, DOWN if kind == UP else UP)
    return (text, beta, kind)


def _text_entries(r, text):
    entries = [(re.search(rf"^mu = {NUMBER} ", text, re.M).group(1), r.mu, UP)]
    regret_match = re.search(rf"^regret = {NUMBER} \(upper bound\)", text, re.M)
    entries.append((regret_match.group(1), r.regret, UP))
    adv = re.search(
        rf"^advantage = {NUMBER} \(upper bound; lower bound {NUMBER}\); mu implies {NUMBER}, "
        rf"at most 2 x regret = {NUMBER} more",
        text,
        re.M,
    )
    entries += [
        (adv.group(1), r.advantage, UP),
        (adv.group(2), r.advantage_lower, DOWN),
        (adv.group(3), r.advantage_mu, UP),
        (adv.group(4), 2.0 * r.regret, UP),
    ]
    if r.delta_tail > 0.0:
        tail = re.search(
            rf"delta_tail = {NUMBER}, (?:the default|declared; the|the accountant's)", text
        )
        tail = tail.group(1)
        where = re.search(
            rf"certified down to delta = {NUMBER} \(epsilon up to {NUMBER}\);.* floor {NUMBER}$",
            text,
            re.M,
        )
        entries += [
            (tail, r.delta_tail, UP),
            (where.group(1), r.delta_tail, UP),
            (where.group(2), r.epsilon_tail, DOWN),
            (where.group(3), r.delta_floor, UP),
        ]
    if r.mu_tail is not None and math.isfinite(r.mu_tail):
        entries.append((re.search(rf"far tail needs mu = {NUMBER} ", text).group(1), r.mu_tail, UP))
    entries += _mu_table_entries(
        r, re.findall(rf"^  delta_tail = {NUMBER}: (?:mu = {NUMBER}|not certified)", text, re.M)
    )
    rows = re.findall(
        rf"^  delta = \S+: epsilon = {NUMBER} \(lower {NUMBER}\); mu gives {NUMBER}; "
        rf"needs mu = {NUMBER}$",
        text,
        re.M,
    )
    assert len(rows) == len(r.epsilons)
    for row, printed in zip(r.epsilons, rows, strict=True):
        entries += _epsilon_entries(row, printed)
    if r.tier == 2:
        table = text.split("beta from mu\n", 1)[1].splitlines()[: len(r.table)]
        for row, line in zip(r.table, table, strict=True):
            cells = re.split(r"\s{2,}", line.strip())
            entries += _table_entries(row, cells[1:4])
    return entries


def _mu_table_entries(r, printed):
    """(printed, exact, kind) for the μ-by-δ_tail rows: δ_tail and μ are both upper bounds.

    A strict report whose rows all print as μ shows one line instead (no rows).
    """
    certified = [row for row in r.mu_by_delta_tail if row.kind != "tail limit"]
    if r.delta_tail == 0.0:
        printed = [cells for cells in printed if cells[0] != "0"]
        if not printed:
            return []
    assert len(printed) == len(certified), (printed, certified)
    entries = []
    for row, (delta_tail, mu) in zip(certified, printed, strict=True):
        entries.append((delta_tail, row.delta_tail, UP))
        if row.mu is None:
            assert mu == ""
        else:
            entries.append((mu, row.mu, UP))
    return entries


def _epsilon_entries(row, printed):
    exact = (row.epsilon, row.epsilon_lower, row.epsilon_mu, row.mu_at_delta)
    return list(zip(printed, exact, (UP, DOWN, UP, UP), strict=True))


def _table_entries(row, cells):
    exact = (row.beta, row.beta_optimistic, row.beta_mu)
    return [
        _beta_entry(cell, beta, kind)
        for cell, beta, kind in zip(cells, exact, (DOWN, UP, DOWN), strict=True)
    ]


def _markdown_entries(r, text):
    cell = {}
    for line in text.splitlines():
        parts = [part.strip() for part in line.strip("|").split("|")]
        if len(parts) == 3:
            cell[parts[0]] = parts[1:]
    entries = [(cell["μ"][0], r.mu, UP), (cell["regret Δ"][0], r.regret, UP)]
    adv = re.search(rf"lower {NUMBER}; μ implies {NUMBER}\)", cell["advantage"][1])
    entries += [
        (cell["advantage"][0], r.advantage, UP),
        (adv.group(1), r.advantage_lower, DOWN),
        (adv.group(2), r.advantage_mu, UP),
    ]
    if r.delta_tail > 0.0:
        entries.append((cell["δ_tail"][0], r.delta_tail, UP))
        tail_eps = re.search(rf"ε ≤ {NUMBER}\)", cell["δ_tail"][1]).group(1)
        entries.append((tail_eps, r.epsilon_tail, DOWN))
    if r.mu_tail is not None:
        entries.append((cell["μ of the far tail"][0], r.mu_tail, UP))
    mu_rows = re.findall(
        rf"^\| {NUMBER} \| (?:{NUMBER}(?: \([^)]*\))?|not certified .*) \|$", text, re.M
    )
    entries += _mu_table_entries(r, mu_rows)
    rows = [line for line in text.splitlines() if re.match(r"^\| \d[^|]* \| ", line)]
    epsilon_rows = [line for line in rows if line.count("|") == 6]
    assert len([line for line in rows if line.count("|") == 3]) == len(mu_rows)
    assert len(epsilon_rows) == len(r.epsilons)
    for row, line in zip(r.epsilons, epsilon_rows, strict=True):
        entries += _epsilon_entries(row, [part.strip() for part in line.split("|")[2:6]])
    if r.tier == 2:
        curve_rows = [line for line in rows if line.count("|") == 5]
        assert len(curve_rows) == len(r.table)
        for row, line in zip(r.table, curve_rows, strict=True):
            entries += _table_entries(row, line.split("|")[2:5])
    return entries


def _html_entries(r, page):
    def cells(name):
        found = re.search(rf"<tr><th>{name}</th><td>([^<]*)</td><td>([^<]*)</td></tr>", page)
        return html.unescape(found.group(1)), html.unescape(found.group(2))

    mu_cell = cells("μ")
    regret_cell = cells("regret Δ")
    adv_cell = cells("advantage")
    adv = re.search(rf"lower {NUMBER}\); μ implies {NUMBER},", adv_cell[1])
    headline = re.search(rf"μ = {NUMBER}, .*; regret {NUMBER}\.</p>", page)
    entries = [
        (mu_cell[0], r.mu, UP),
        (regret_cell[0], r.regret, UP),
        (adv_cell[0], r.advantage, UP),
        (adv.group(1), r.advantage_lower, DOWN),
        (adv.group(2), r.advantage_mu, UP),
        (headline.group(1), r.mu, UP),
        (headline.group(2), r.regret, UP),
    ]
    if r.delta_tail > 0.0:
        where = cells("certified down to")
        floor = re.search(rf"ε ≤ {NUMBER}; accountant floor {NUMBER}", where[1])
        failure = re.search(rf"δ_tail = {NUMBER}", mu_cell[1]).group(1)
        entries += [
            (where[0].removeprefix("δ = "), r.delta_tail, UP),
            (floor.group(1), r.epsilon_tail, DOWN),
            (floor.group(2), r.delta_floor, UP),
            (failure, r.delta_tail, UP),
        ]
    if r.mu_tail is not None:
        entries.append((cells("μ of the far tail")[0], r.mu_tail, UP))
    mu_section = page.split("<h2>μ by δ_tail</h2>", 1)[1].split("<h2>", 1)[0]
    mu_rows = re.findall(
        rf"<tr(?: class=\"reported\")?><td>{NUMBER}</td><td>(?:{NUMBER}|not certified)</td>",
        mu_section,
    )
    entries += _mu_table_entries(r, mu_rows)
    rows = re.findall(r"<tr><td>([^<]*)</td>((?:<td>[^<]*</td>)+)</tr>", page)
    epsilon_rows = [re.findall(r"<td>([^<]*)</td>", rest) for _, rest in rows]
    epsilon_rows = [row for row in epsilon_rows if len(row) == 4]
    assert len(epsilon_rows) == len(r.epsilons)
    for row, printed in zip(r.epsilons, epsilon_rows, strict=True):
        entries += _epsilon_entries(row, printed)
    curve_rows = [re.findall(r"<td>([^<]*)</td>", rest) for _, rest in rows]
    curve_rows = [row for row in curve_rows if len(row) == 3]
    assert len(curve_rows) == len(r.table)
    for row, printed in zip(r.table, curve_rows, strict=True):
        entries += _table_entries(row, [html.unescape(cell) for cell in printed])
    return entries


@pytest.mark.parametrize("name", ["dpsgd", "pure", "gaussian", "approx", "no-privacy"])
@pytest.mark.parametrize("output_format", ["text", "markdown", "html"])
def test_printed_bounds_are_rounded_toward_less_privacy(reports, name, output_format):
    """Parse every printed bound: printed upper ≥ exact value, printed lower ≤ exact value.

    (Rounding to nearest printed the CIFAR-10 μ 1.568744 as 1.5687, δ_tail
    1.013e-12 as 1e-12, ε 7.424385 as 7.42438, the advantage 0.564605 as 0.5646.)
    """
    r = reports[name]
    parse = {"text": _text_entries, "markdown": _markdown_entries, "html": _html_entries}
    entries = parse[output_format](r, r.render(output_format))
    assert len(entries) >= 10
    for printed, exact, kind in entries:
        value = float(printed)
        if kind == UP:
            assert value >= exact, (printed, exact, kind)
        else:
            assert value <= exact, (printed, exact, kind)


def test_directed_rounding_keeps_readable_digits():
    from gaussdp.report.render import down, up, up_fixed

    assert up_fixed(1.568744) == "1.5688" and up_fixed(2.0) == "2.0000"
    assert up(1.013e-12, 2) == "1.1e-12" and down(1.013e-12, 2) == "1e-12"
    assert up(7.424385) == "7.42439" and down(7.424385) == "7.42438"
    assert up(0.564605, 5) == "0.56461" and down(0.564605, 5) == "0.5646"
    assert up(0.999999999, 3) == "1" and down(0.999999999, 3) == "0.999"
    assert up(1.1, 5) == "1.1"  # the float 1.1000000000000000888 is not pushed to 1.1001
    assert up(math.inf) == "inf" and up(0.0) == "0" and up(None) == "n/a"


@pytest.mark.parametrize("name", ["dpsgd", "pure", "approx"])
def test_svg_figures_parse(reports, name):
    for figure in (linear_svg, log_svg, difference_svg):
        root = ET.fromstring(figure(reports[name]))
        assert root.tag == SVG + "svg"
        assert len(root.findall(SVG + "polyline")) >= 1


def test_html_is_self_contained(reports):
    page = reports["dpsgd"].to_html()
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page
    assert "<link" not in page
    # The only URL is the SVG namespace; nothing is fetched.
    urls = [part for part in page.split('"') if part.startswith("http")]
    assert set(urls) == {"http://www.w3.org/2000/svg"}
    assert page.count("<svg") == 4  # the curve, the ROC, the difference, μ against δ_tail


def test_report_curves_are_ordered(reports):
    r = reports["dpsgd"]
    import numpy as np

    alphas = np.linspace(0.0, 1.0, 1001)
    assert np.all(r.beta_mu(alphas) <= r.beta(alphas) + 1e-12)
    assert np.all(r.beta(alphas) <= r.beta_optimistic(alphas) + 1e-12)
    assert isinstance(r, Report)
    assert r.guarantee().beta(0.1) == pytest.approx(r.beta_mu(0.1), abs=1e-9)


def test_bad_format():
    with pytest.raises(ValueError, match="output_format must be one of"):
        report(PureDP(1.0)).render("pdf")


# ---------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_cli_dpsgd_json():
    result = run(
        "report",
        "dpsgd",
        "--noise-multiplier",
        "9.4",
        "--sampling-probability",
        "0.32768",
        "--steps",
        "2000",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert round(payload["mu"], 2) == 1.57
    assert [row["delta"] for row in payload["epsilons"]] == [1e-5, 1e-6, 1e-9]


def test_cli_pipeline_file_markdown_with_deltas():
    result = run(
        "report",
        str(EXAMPLES / "autodp_example.toml"),
        "--delta",
        "1e-6",
        "--delta",
        "1e-4",
        "--format",
        "markdown",
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("### autodp example")
    assert "| 1e-06 |" in result.output and "| 0.0001 |" in result.output


def test_cli_writes_html(tmp_path):
    target = tmp_path / "report.html"
    result = run(
        "report",
        str(EXAMPLES / "census_topdown.toml"),
        "--format",
        "html",
        "--output",
        str(target),
    )
    assert result.exit_code == 0, result.output
    page = target.read_text(encoding="utf-8")
    assert "2020 Census TopDown" in page
    assert page.count("<svg") == 4
    assert "<h2>μ by δ_tail</h2>" in page


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            [
                "report",
                "dpsgd",
                "--noise-multiplier",
                "1",
                "--sampling-probability",
                "0.1",
                "--steps",
                "10",
                "--delta",
                "0",
            ],
            "delta must be in (0, 1), got 0.0",
        ),
        (
            [
                "report",
                "dpsgd",
                "--noise-multiplier",
                "1",
                "--sampling-probability",
                "0.1",
                "--steps",
                "10",
                "--delta",
                "1.5",
            ],
            "delta must be in (0, 1), got 1.5",
        ),
        (["report", "dpsgd", "--noise-multiplier", "1"], "needs --sampling-probability, --steps"),
        (
            [
                "report",
                "dpsgd",
                "--noise-multiplier",
                "1",
                "--sampling-probability",
                "0.1",
                "--steps",
                "10",
                "--delta-tail",
                "2",
            ],
            "delta_tail must be in (0, 1), got 2.0",
        ),
        (["report", "missing.toml"], "missing.toml"),
        (
            [
                "report",
                "dpsgd",
                "--noise-multiplier",
                "1",
                "--sampling-probability",
                "0.1",
                "--steps",
                "10",
                "--output",
                "/nonexistent-dir/r.html",
            ],
            "does not exist",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("gaussdp: error: ")
    assert message in err


def test_empty_pipeline_is_an_error(tmp_path, capsys):
    empty = tmp_path / "empty.toml"
    empty.write_text('name = "nothing"\n', encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(empty)])
    assert exit_info.value.code == 2
    assert "empty pipeline" in capsys.readouterr().err


def test_unwritable_output_is_an_error(tmp_path, capsys):
    # A path below a regular file cannot be written by anyone, root included
    # (CI runs as root, for whom a read-only folder is no obstacle).
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(EXAMPLES / "autodp_example.toml"), "--output", str(blocker / "r.txt")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "is a file, not a directory" in err


def test_output_without_write_permission_is_an_error(tmp_path, capsys, monkeypatch):
    # The permission check itself, independent of who runs the tests.
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(EXAMPLES / "autodp_example.toml"), "--output", str(tmp_path / "r.txt")])
    assert exit_info.value.code == 2
    assert "permission denied" in capsys.readouterr().err


def test_output_into_a_directory_is_an_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(EXAMPLES / "autodp_example.toml"), "--output", str(tmp_path)])
    assert exit_info.value.code == 2
    assert "is a directory" in capsys.readouterr().err


def test_accuracy_help_states_the_real_default():
    from gaussdp.accountant import DEFAULT_ACCURACY

    result = run("report", "--help")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())  # click wraps the help text
    assert f"(default {DEFAULT_ACCURACY:g})" in text
    assert "4e-5" not in text


@pytest.mark.parametrize("deltas", ["abc", "1e-5", ["abc"], [[1e-5]], None])
def test_deltas_that_are_not_numbers_name_the_parameter(deltas):
    with pytest.raises(ValueError) as info:
        report(Gaussian(1.0), deltas=deltas)
    message = str(info.value)
    assert message.startswith("deltas must be a real number in (0, 1)")
    assert repr(deltas) in message


def test_json_of_a_mechanism_holding_a_callable():
    """A Profile cannot be written as a dict: the JSON report carries its description."""
    from gaussdp import Profile, gdp

    mechanism = Profile(lambda e: gdp.delta(1.0, e), name="1-GDP profile")
    r = report(mechanism)
    payload = json.loads(r.to_json())
    assert payload["mechanism"] == "Profile(1-GDP profile)"
    assert payload["mechanism_serialisable"] is False
    assert payload["mu"] == r.mu
    plain = report(PureDP(1.0)).to_dict()
    assert plain["mechanism"] == {"type": "pure_dp", "epsilon": 1.0}
    assert plain["mechanism_serialisable"] is True


def test_strict_wording_says_closed_form_only_for_closed_forms():
    import dataclasses

    exact = report(Gaussian(2.0))
    assert exact.exact and exact.delta_tail == 0.0
    assert "(closed form)" in exact.to_text()
    # A numerical report whose failure probability is 0 is strict, not a closed form.
    numerical = dataclasses.replace(report(Laplace(1.0)), delta_tail=0.0)
    assert not numerical.exact
    for rendered in (numerical.to_text(), numerical.to_markdown(), numerical.to_html()):
        assert "closed form" not in rendered
    assert "no failure probability needed" in numerical.to_text()


def test_report_rows_are_immutable_named_records(reports):
    """Rows keep what the frozen dataclasses gave: fields by name, no assignment, hashing."""
    r = reports["dpsgd"]
    row, table_row, mu_row = r.epsilons[0], r.table[0], r.mu_by_delta_tail[0]
    assert row._fields == ("delta", "epsilon", "epsilon_lower", "epsilon_mu", "mu_at_delta")
    assert row._asdict()["epsilon"] == row.epsilon > row.epsilon_lower
    for record in (row, table_row, mu_row):
        with pytest.raises(AttributeError):
            setattr(record, record._fields[1], 0.5)
        assert hash(record) == hash(type(record)(*record))
    assert repr(mu_row).startswith("MuRow(delta_tail=")
    assert table_row._replace(label="x").label == "x" and table_row.label != "x"
