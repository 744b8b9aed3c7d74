"""``gaussdp audit``: the library's numbers, one-line errors with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from gaussdp.audit import from_counts, from_scores, one_run
from gaussdp.cli import main


def _run(capsys, *argv):
    try:
        main(list(argv))
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_counts_json_matches_library(capsys):
    code, out, _ = _run(
        capsys, "audit", "counts", "950", "50", "10", "990", "--delta", "1e-5", "--format", "json"
    )
    assert code == 0
    payload = json.loads(out)
    reference = from_counts(950, 50, 10, 990, delta=1e-5)
    assert payload["mu_lower"] == reference.mu_lower
    assert payload["epsilon_lower"] == reference.epsilon_lower


def test_scores_files_and_against(capsys, tmp_path):
    rng = np.random.default_rng(13)
    members, non_members = rng.normal(0.4, 1, 3000), rng.normal(0, 1, 3000)
    np.save(tmp_path / "in.npy", members)
    np.save(tmp_path / "out.npy", non_members)
    code, out, _ = _run(
        capsys,
        "audit",
        "scores",
        str(tmp_path / "in.npy"),
        str(tmp_path / "out.npy"),
        "--against",
        "dpsgd",
        "--noise-multiplier",
        "1.0",
        "--sampling-probability",
        "0.05",
        "--steps",
        "100",
        "--format",
        "json",
    )
    assert code == 0
    payload = json.loads(out)
    assert payload["audit"]["mu_lower"] == from_scores(members, non_members).mu_lower
    assert payload["violation"] is False
    assert payload["mu_interval"][0] <= payload["mu_interval"][1]


def test_one_run_text(capsys):
    code, out, _ = _run(capsys, "audit", "one-run", "1000", "100", "100")
    assert code == 0
    assert "lower bound" in out
    from gaussdp.report.render import down

    assert f"epsilon >= {down(one_run(1000, 100, 100).epsilon_lower, 5)}" in out


def test_html_and_plot_written(capsys, tmp_path):
    html_path, png_path = tmp_path / "audit.html", tmp_path / "audit.png"
    code, _, err = _run(
        capsys,
        "audit",
        "counts",
        "600",
        "400",
        "400",
        "600",
        "--against",
        "dpsgd",
        "--noise-multiplier",
        "1.0",
        "--sampling-probability",
        "0.05",
        "--steps",
        "100",
        "--format",
        "html",
        "--output",
        str(html_path),
        "--plot",
        str(png_path),
    )
    assert code == 0, err
    assert "<svg" in html_path.read_text()
    assert png_path.stat().st_size > 1000


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["audit", "counts", "5", "5", "5", "5", "--alpha", "1.5"], "alpha must be in (0, 1)"),
        (["audit", "counts", "5", "5", "5", "5", "--delta", "1"], "delta must be in [0, 1)"),
        (["audit", "counts", "0", "0", "5", "5"], "members"),
        (["audit", "one-run", "10", "11", "3"], "guesses must be at most canaries"),
        (["audit", "one-run", "10", "5", "6"], "correct must be at most guesses"),
        (["audit", "scores", "missing.npy", "missing2.npy"], "does not exist"),
        (["audit", "scores", "a.npy", "b.npy", "--thresholds", "best"], "--thresholds must be"),
        (["audit", "counts", "5", "5", "5", "5", "--against", "dpsgd"], "needs --noise-multiplier"),
        (["audit", "counts", "5", "5", "5", "5", "--plot", "x.png"], "--plot needs --against"),
        # negative numbers where a count is expected: the parameter and its range, not
        # click's "No such option: -3"
        (["audit", "counts", "-3", "5", "5", "5"], "tp must be an integer >= 0, got -3"),
        (["audit", "counts", "5", "-3", "5", "5"], "fn must be an integer >= 0, got -3"),
        (["audit", "counts", "5", "5", "-3", "5"], "fp must be an integer >= 0, got -3"),
        (["audit", "counts", "5", "5", "5", "-30"], "tn must be an integer >= 0, got -30"),
        (["audit", "one-run", "-10", "5", "3"], "canaries must be an integer >= 1, got -10"),
        (["audit", "one-run", "10", "-5", "3"], "guesses must be an integer >= 0, got -5"),
        (["audit", "one-run", "10", "5", "-3"], "correct must be an integer >= 0, got -3"),
        (["audit", "counts", "5", "5", "5", "5", "--alpha", "-0.1"], "alpha must be in (0, 1)"),
        (["audit", "counts", "5", "5", "5", "5", "--delta=-1e-5"], "delta must be in [0, 1)"),
        # an unknown option is still one
        (["audit", "counts", "5", "5", "5", "5", "--alhpa", "0.1"], "No such option '--alhpa'"),
        (["audit", "counts", "5", "5", "5", "5", "-x"], "No such option '-x'"),
    ],
)
def test_errors_are_one_line_exit_2(capsys, argv, needle):
    code, _out, err = _run(capsys, *argv)
    assert code == 2
    assert needle in err
    assert err.count("\n") == 1 and err.startswith("gaussdp: error:")


def test_csv_without_the_named_column(capsys, tmp_path):
    (tmp_path / "a.csv").write_text("id,score\n1,0.5\n2,0.7\n")
    code, _, err = _run(
        capsys,
        "audit",
        "scores",
        str(tmp_path / "a.csv"),
        str(tmp_path / "a.csv"),
        "--column",
        "logit",
    )
    assert code == 2 and "has no column 'logit'" in err


def test_lazy_registration():
    """`gaussdp account` does not import the audit; `gaussdp audit --help` works."""
    code = (
        "import sys; from gaussdp.cli import main\n"
        "try:\n    main(['convert', '--mu', '1', '--delta', '1e-5'])\n"
        "except SystemExit: pass\n"
        "print('gaussdp.audit' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "False"


@pytest.mark.parametrize(
    ("members", "extra", "needle"),
    [
        ("score\n", [], "members must not be empty"),  # a header and no rows
        ("score\n0.1\nnan\n", [], "members must not contain NaN, got NaN at index 1"),
        ("id,score\n1,0.1\n", [], "has columns id, score; name one"),
        ("score\n0.1\n0.2\n", ["--alpha", "1"], "alpha must be in (0, 1), got 1.0"),
        ("score\n0.1\n0.2\n", ["--delta", "-0.5"], "delta must be in [0, 1), got -0.5"),
        ("score\n0.1\n0.2\n", ["--thresholds", "split", "--seed", "-2"], "seed must be"),
    ],
)
def test_bad_score_files_are_one_line(capsys, tmp_path, members, extra, needle):
    (tmp_path / "in.csv").write_text(members)
    (tmp_path / "out.csv").write_text("score\n0.0\n0.5\n")
    argv = ["audit", "scores", str(tmp_path / "in.csv"), str(tmp_path / "out.csv"), *extra]
    code, _out, err = _run(capsys, *argv)
    assert code == 2
    assert needle in err
    assert err.count("\n") == 1 and err.startswith("gaussdp: error:")


def test_one_run_from_per_canary_scores(capsys, tmp_path):
    """`one-run-scores`: one CSV with a score and an inclusion column, as the library has it."""
    from gaussdp.audit import guesses_from_scores, one_run_from_scores

    rng = np.random.default_rng(17)
    included = rng.random(400) < 0.5
    scores = rng.normal(0.0, 1.0, 400) + 1.5 * included
    lines = [
        "score,included",
        *(f"{s:.17g},{int(i)}" for s, i in zip(scores, included, strict=True)),
    ]
    (tmp_path / "canaries.csv").write_text("\n".join(lines) + "\n")
    path = str(tmp_path / "canaries.csv")
    argv = ["audit", "one-run-scores", path, path, "--column", "score"]
    argv += ["--included-column", "included", "--guesses", "100", "--format", "json"]
    code, out, err = _run(capsys, *argv)
    assert code == 0, err
    counts = guesses_from_scores(scores, included, guesses=100)
    reference = one_run(*counts)
    payload = json.loads(out)
    assert payload["mu_lower"] == reference.mu_lower > 0
    assert payload["used"]["correct"] == counts[2]
    assert one_run_from_scores(scores, included, guesses=100).mu_lower == reference.mu_lower
    code, _, err = _run(capsys, "audit", "one-run-scores", path, path, "--guesses", "-4")
    assert code == 2 and "guesses must be an integer >= 0, got -4" in err
    code, _, err = _run(capsys, *argv[:8], "--guesses", "401")
    assert code == 2 and "guesses must be at most the number of canaries (400)" in err
