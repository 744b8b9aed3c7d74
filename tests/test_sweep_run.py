"""gaussdp.sweep: rows equal single calls, the error column, outputs and resuming."""

import json
import math
import os

import pytest

import gaussdp
from gaussdp import DPSGD, Gaussian, InvalidParameterError, Laplace, Repeated, account, sweep
from gaussdp.sweeps.output import ResultsMismatchError

GRID = """
name = "small grid"
[sweep]
deltas = [1e-5, 1e-6]
[[mechanism]]
type = "dpsgd"
noise_multiplier = [1.0, 2.0]
sampling_probability = 0.01
steps = [100, 300, 1000]
"""


def _close(a, b, rtol):
    return a == b or abs(a - b) <= rtol * abs(b)


@pytest.fixture(scope="module")
def reference_rows():
    """Every point of GRID accounted by single account() calls, independently of sweep()."""
    rows = []
    for point, (sigma, steps) in enumerate((s, t) for s in (1.0, 2.0) for t in (100, 300, 1000)):
        result = account(DPSGD(sigma, 0.01, steps))
        for delta in (1e-5, 1e-6):
            lower, upper = result.epsilon_bounds(delta)
            rows.append((point, sigma, steps, delta, lower, upper))
    return rows


def test_rows_equal_single_calls_exactly_without_step_reuse(reference_rows):
    rows = sweep(GRID, workers=1, along_steps=False)
    assert [
        (r["point"], r["noise_multiplier"], r["steps"], r["delta"], r["epsilon_lower"],
         r["epsilon_upper"]) for r in rows
    ] == reference_rows  # fmt: skip
    assert all(r["error"] is None for r in rows)
    assert list(rows[0]) == [
        "point", "noise_multiplier", "steps", "delta", "epsilon_lower", "epsilon_upper", "error"
    ]  # fmt: skip


def test_rows_with_step_reuse_equal_single_calls(reference_rows):
    # Reuse computes each T on a transform of another length than account() does:
    # the numbers agree up to that rounding (both are certified bounds).
    rows = sweep(GRID, workers=1)
    assert len(rows) == len(reference_rows)
    for row, (point, sigma, steps, delta, lower, upper) in zip(rows, reference_rows, strict=True):
        assert (row["point"], row["noise_multiplier"], row["steps"], row["delta"]) == (
            point, sigma, steps, delta
        )  # fmt: skip
        rtol = 1e-8 if delta == 1e-5 else 1e-7
        assert _close(row["epsilon_lower"], lower, rtol), (row, lower)
        assert _close(row["epsilon_upper"], upper, rtol), (row, upper)
        # Each pair brackets the true ε, so each lower bound is below the other upper bound.
        assert row["epsilon_lower"] <= row["epsilon_upper"]
        assert row["epsilon_lower"] <= upper and lower <= row["epsilon_upper"]


def test_a_failing_shared_computation_leaves_its_points_to_single_calls(
    reference_rows, monkeypatch
):
    # The steps' shared transforms fail after the first T of each group: the points
    # already yielded keep their (reused) rows, the others are accounted one by one,
    # exactly. (Which T comes first depends on the grouping: σ = 2, T = 100 has an upper
    # grid of its own, 1e-4/16, and its group is one point.)
    from gaussdp.sweeps import run as sweep_run

    real = sweep_run.account_steps
    shared = set()

    def failing(*args, **kwargs):
        results = real(*args, **kwargs)
        steps, accounting = next(results)
        shared.add((accounting.mechanism.noise_multiplier, steps))
        yield steps, accounting
        raise MemoryError("the shared transform did not fit")

    monkeypatch.setattr(sweep_run, "account_steps", failing)
    rows = sweep(GRID, workers=1)
    assert all(r["error"] is None for r in rows)
    assert len(shared) >= 2  # one per group, at least one per noise multiplier
    by_key = {(r["point"], r["delta"]): r for r in rows}
    for point, sigma, steps, delta, lower, upper in reference_rows:
        row = by_key[point, delta]
        if (sigma, steps) in shared:  # from the shared computation: within its rounding
            assert _close(row["epsilon_upper"], upper, 1e-7)
        else:  # after the failure: single account() calls
            assert (row["epsilon_lower"], row["epsilon_upper"]) == (lower, upper)


def test_two_local_workers_give_the_same_rows(reference_rows):
    serial = sweep(GRID, workers=1)
    parallel = sweep(GRID, workers=2)
    assert parallel == serial


def test_delta_for_epsilon_and_report_columns_equal_single_calls():
    grid = {
        "sweep": {"epsilons": [1.0, 2.0], "report": True},
        "mechanism": [{"type": "laplace", "scale": [1.0, 2.0], "repeat": 3}],
    }
    rows = sweep(grid, workers=1)
    assert [r["scale"] for r in rows] == [1.0, 1.0, 2.0, 2.0]
    for row in rows:
        result = account(Repeated(Laplace(row["scale"]), 3))
        lower, upper = result.delta_bounds(row["epsilon"])
        assert (row["delta_lower"], row["delta_upper"]) == (lower, upper)
        report = result.gdp()
        assert (row["delta_tail"], row["tier"]) == (report.delta_tail, report.tier)
        # Up to the last digits: the worker's FFTs run on one thread, this process's on all.
        assert row["mu"] == pytest.approx(report.mu, rel=1e-12)
        assert row["regret"] == pytest.approx(report.regret, rel=1e-12)
        assert "delta" not in row


def test_report_rows_along_steps_equal_single_calls_exactly():
    grid = GRID.replace("deltas = [1e-5, 1e-6]", "deltas = [1e-5]\nreport = true")
    rows = sweep(grid.replace("[100, 300, 1000]", "[100, 300]"), workers=1)
    for row in rows:
        result = account(DPSGD(row["noise_multiplier"], 0.01, row["steps"]))
        report = result.gdp()
        assert (row["mu"], row["regret"], row["delta_tail"], row["tier"]) == (
            report.mu, report.regret, report.delta_tail, report.tier
        )  # fmt: skip
        assert (row["epsilon_lower"], row["epsilon_upper"]) == result.epsilon_bounds(1e-5)


def test_a_failing_point_is_recorded_and_the_rest_goes_on():
    # 10⁹ steps of a heavily sampled Gaussian need hundreds of GB: account() refuses it.
    grid = {
        "sweep": {"deltas": [1e-5]},
        "mechanism": [
            {"type": "dpsgd", "noise_multiplier": 1.0, "sampling_probability": 0.5,
             "steps": [10, 1_000_000_000]}
        ],
    }  # fmt: skip
    rows = sweep(grid, workers=1)
    assert rows[0]["error"] is None and rows[0]["epsilon_upper"] > 0
    assert rows[1]["epsilon_upper"] is None and rows[1]["epsilon_lower"] is None
    assert rows[1]["error"].startswith("InvalidParameterError: ")
    assert "GB" in rows[1]["error"]


def _csv_lines(path):
    return path.read_text().splitlines()


def test_csv_output_resume_after_interrupt_with_partial_line(tmp_path):
    output = tmp_path / "results.csv"
    full = sweep(GRID, output=output, workers=1)
    complete_text = output.read_text()
    lines = complete_text.splitlines(keepends=True)
    assert len(lines) == 1 + 12
    record = json.loads((tmp_path / "results.csv.sweep.json").read_text())
    assert record["points"] == 6 and record["format"] == "csv"

    # Simulate a sweep killed while writing: 2 whole points, one row of a third, half a line.
    header, body = lines[0], lines[1:]
    by_point = {}
    for line in body:
        by_point.setdefault(int(line.split(",")[0]), []).append(line)
    first, second, third = list(by_point)[:3]
    cut = header + "".join(by_point[first] + by_point[second]) + by_point[third][0]
    cut += by_point[third][1][:7]  # a partial last line
    output.write_text(cut)

    computed = []
    original = gaussdp.sweeps.run.iter_task

    def counting(task):
        for point, rows in original(task):
            computed.append(point)
            yield point, rows

    gaussdp.sweeps.run.iter_task = counting
    try:
        resumed = sweep(GRID, output=output, workers=1)
    finally:
        gaussdp.sweeps.run.iter_task = original
    assert sorted(computed) == sorted(set(range(6)) - {first, second})
    assert resumed == full
    lines_after = _csv_lines(output)
    assert len(lines_after) == 13 and len(set(lines_after)) == 13  # no duplicates
    assert output.read_text().endswith("\n")

    # Running again computes nothing.
    computed.clear()
    gaussdp.sweeps.run.iter_task = counting
    try:
        again = sweep(GRID, output=output, workers=1)
    finally:
        gaussdp.sweeps.run.iter_task = original
    assert computed == [] and again == full


def test_changed_grid_is_refused_and_restart_recomputes(tmp_path):
    output = tmp_path / "results.csv"
    small = GRID.replace("[100, 300, 1000]", "[100, 300]")
    sweep(small, output=output, workers=1)
    changed = small.replace("[1.0, 2.0]", "[1.0, 3.0]")
    with pytest.raises(ResultsMismatchError, match=r"different grid .*--restart"):
        sweep(changed, output=output, workers=1)
    rows = sweep(changed, output=output, workers=1, restart=True)
    assert [r["noise_multiplier"] for r in rows] == [1.0] * 4 + [3.0] * 4
    assert len(_csv_lines(output)) == 9


def test_foreign_file_is_not_overwritten(tmp_path):
    output = tmp_path / "results.csv"
    output.write_text("something else\n")
    with pytest.raises(ResultsMismatchError, match="no sweep record"):
        sweep(GRID, output=output, workers=1)
    assert output.read_text() == "something else\n"


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_json_lines_and_parquet_outputs(tmp_path, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    grid = GRID.replace("[100, 300, 1000]", "[100, 300]")
    output = tmp_path / f"results{suffix}"
    rows = sweep(grid, output=output, workers=1)
    if suffix == ".jsonl":
        stored = [json.loads(line) for line in output.read_text().splitlines()]
    else:
        import pyarrow.parquet

        stored = pyarrow.parquet.read_table(output).to_pylist()
        assert not os.path.exists(f"{output}.partial.jsonl")
    assert sorted(stored, key=lambda r: r["point"]) == rows  # stable: file order within a point
    assert sweep(grid, output=output, workers=1) == rows  # resumed: nothing left to do


def test_infinite_epsilon_round_trips(tmp_path):
    # δ below the mass at infinite loss of a (1, 1e-3)-DP mechanism: ε = inf.
    grid = {
        "sweep": {"deltas": [1e-4]},
        "mechanism": [{"type": "approx_dp", "epsilon": 1.0, "delta": [1e-3, 1e-6]}],
    }
    for name in ("r.csv", "r.jsonl"):
        rows = sweep(grid, output=tmp_path / name, workers=1)
        assert math.isinf(rows[0]["epsilon_upper"])
        assert sweep(grid, output=tmp_path / name, workers=1) == rows


def test_bad_options():
    with pytest.raises(InvalidParameterError, match="workers must be an integer >= 1, got 0"):
        sweep(GRID, workers=0)
    with pytest.raises(InvalidParameterError, match="format must be one of csv, json, parquet"):
        sweep(GRID, output="x.csv", format="xlsx")
    with pytest.raises(OSError, match="cannot write the results to"):
        sweep(GRID, output="/nonexistent-directory/results.csv", workers=1)


def test_gaussian_points_use_the_closed_form():
    rows = sweep({"sweep": {"deltas": [1e-5]},
                  "mechanism": [{"type": "gaussian", "sigma": [2.0], "repeat": [4, 16]}]},
                 workers=1)  # fmt: skip
    assert rows[1]["epsilon_upper"] == account(Repeated(Gaussian(2.0), 16)).epsilon(1e-5)


_real_run_task = gaussdp.sweeps.run.run_task


def _die_on_point_one(task):
    """Stands in for run_task in a forked worker: the process dies on grid point 1."""
    if any(point == 1 for point, _ in task.points):
        os._exit(1)
    return _real_run_task(task)


def test_a_dead_worker_stops_the_sweep_and_the_next_run_resumes(tmp_path, monkeypatch):
    import multiprocessing

    if multiprocessing.get_start_method() != "fork":
        pytest.skip("the stand-in reaches the workers by fork only")
    from gaussdp.sweeps import SweepError

    output = tmp_path / "results.csv"
    grid = {
        "sweep": {"deltas": [1e-5]},
        "mechanism": [{"type": "laplace", "scale": [1.0, 2.0, 3.0, 4.0], "repeat": 2}],
    }
    monkeypatch.setattr(gaussdp.sweeps.run, "run_task", _die_on_point_one)
    with pytest.raises(SweepError, match="worker process died"):
        sweep(grid, output=output, workers=2)
    monkeypatch.setattr(gaussdp.sweeps.run, "run_task", _real_run_task)
    lines = output.read_text().splitlines()
    assert lines[0].startswith("point,scale,")
    saved = {int(line.split(",")[0]) for line in lines[1:]}
    assert 1 not in saved
    rows = sweep(grid, output=output, workers=1)  # resumes: computes the rest
    assert [row["point"] for row in rows] == [0, 1, 2, 3]
    assert len(output.read_text().splitlines()) == 5


def test_two_sweeps_cannot_write_one_file_at_once(tmp_path):
    from gaussdp.sweeps.grid import read_grid
    from gaussdp.sweeps.output import ResultsFile

    grid = read_grid(GRID)
    first = ResultsFile(tmp_path / "results.csv", "csv", grid, restart=False)
    try:
        with pytest.raises(InvalidParameterError, match="being written by another sweep"):
            ResultsFile(tmp_path / "results.csv", "csv", grid, restart=False)
    finally:
        first.close(complete=False)
    ResultsFile(tmp_path / "results.csv", "csv", grid, restart=False).close(complete=False)
