"""Audit speed (run by hand, not by pytest): issue 21's two goals, fresh processes, interleaved.

Cells, each timed in a fresh child process (imports and data excluded from its times):

``gaussdp``
    ``gaussdp.audit.from_scores(members, non_members, delta=1e-5)`` on ``--size``
    member and ``--size`` non-member scores (N(1, 1) and N(0, 1), seed 0): every
    threshold with a Bonferroni correction, Clopper–Pearson on both error rates,
    the ε and μ lower bounds and the certified points.
``gaussdp_curve``
    The same with ``against=`` the accountant of a DP-SGD run (σ = 1, q = 0.05,
    2,000 steps: μ ≈ 3.06, not violated), its curve and μ computed before the
    clock starts: the audit *and* its test against one curve, report built.
``gaussdp_violation``
    The same against a claim the audit refutes narrowly: the Gaussian mechanism with
    μ = 0.97 (the attack's scores are exactly 1-GDP), so the violation test and its
    p-value search look at thousands of nearly violating thresholds.
``jax_privacy``
    ``jax_privacy.auditing.CanaryScoreAuditor(members, non_members)
    .epsilon_clopper_pearson(0.05, 1e-5, one_sided=False)`` (its default Bonferroni
    over its Pareto thresholds) on the same scores: the goal's yardstick.
``one_run_fdp``
    ``gaussdp.audit.one_run(1000, 200, 180, delta=1e-5, curve=curve)`` with the
    accountant's curve of a 2,000-step DP-SGD run (σ = 1, q = 0.01); the
    accounting (``account(run).tradeoff()``) is timed separately in the same child.

Goals (issue 21): ``gaussdp`` (and with a curve) ≤ 0.5× ``jax_privacy``, and
under 2 s; ``one_run_fdp`` (accounting included) under 5 s.

Timing: ``--rounds`` rounds, the cells interleaved A B C D, D C B A, ...; in each
child the call runs ``--inner`` times (``time.perf_counter`` wall and
``time.process_time`` CPU); the child reports the first (cold) call and the median
of the others (warm). A cell's figure is the median over rounds of its warm
medians; ratios are ratios of those medians.

    python benchmarks/audit.py [--rounds 5] [--inner 3] [--size 1000000]

Writes ``benchmarks/audit.json`` (``--json``) and the audit section of
``docs/benchmarks.md`` (between the ``audit-benchmark`` markers; ``--no-page`` to skip).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

DEFAULT_JSON = ROOT / "benchmarks" / "audit.json"
PAGE = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- audit-benchmark:begin -->", "<!-- audit-benchmark:end -->"

CELLS = ("gaussdp", "gaussdp_curve", "gaussdp_violation", "jax_privacy", "one_run_fdp")
GOALS = {"ratio": 0.5, "scores_seconds": 2.0, "one_run_seconds": 5.0}


class _Precomputed:
    """An Accounting's answers computed once, before the clock (the audit is what is timed)."""

    def __init__(self, accounting, delta):
        self.mechanism = accounting.mechanism
        self._gdp = accounting.gdp()
        self._curve = accounting.tradeoff()
        self._epsilon = float(accounting.epsilon(delta))

    def gdp(self):
        return self._gdp

    def tradeoff(self):
        return self._curve

    def epsilon(self, delta):
        return self._epsilon


def _child(cell: str, size: int, inner: int) -> dict:
    """Run one cell ``inner`` times in this (fresh) process; print a JSON line."""
    import numpy as np

    rng = np.random.default_rng(0)
    members = rng.normal(1.0, 1.0, size)
    non_members = rng.normal(0.0, 1.0, size)
    extra: dict = {}
    if cell == "jax_privacy":
        from jax_privacy import auditing

        def work():
            auditor = auditing.CanaryScoreAuditor(members, non_members)
            return {"epsilon_lower": auditor.epsilon_clopper_pearson(0.05, 1e-5, one_sided=False)}

    else:
        import gaussdp
        from gaussdp import audit

        if cell == "gaussdp":

            def work():
                result = audit.from_scores(members, non_members, delta=1e-5)
                return {"epsilon_lower": result.epsilon_lower, "mu_lower": result.mu_lower}

        elif cell in ("gaussdp_curve", "gaussdp_violation"):
            if cell == "gaussdp_curve":
                run = gaussdp.DPSGD(noise_multiplier=1.0, sampling_probability=0.05, steps=2000)
            else:
                run = gaussdp.Gaussian(1.0 / 0.97)
            against = _Precomputed(gaussdp.account(run), 1e-5)

            def work():
                result = audit.from_scores(members, non_members, delta=1e-5, against=against)
                return {
                    "epsilon_lower": result.epsilon_lower,
                    "mu_lower": result.mu_lower,
                    "mu_upper": result.report.mu_upper,
                    "violation": result.violation,
                    "p_value": result.p_value,
                }

        elif cell == "one_run_fdp":
            run = gaussdp.DPSGD(noise_multiplier=1.0, sampling_probability=0.01, steps=2000)
            start = time.perf_counter()
            curve = gaussdp.account(run).tradeoff()
            extra["accounting_seconds"] = time.perf_counter() - start

            def work():
                tested = audit.one_run(1000, 200, 180, delta=1e-5, curve=curve)
                return {
                    "mu_lower": tested.mu_lower,
                    "curve_rejected": tested.used["curve_rejected"],
                    "curve_p_value": tested.used["curve_p_value"],
                }

        else:
            raise SystemExit(f"unknown cell {cell!r}")
    wall, cpu, value = [], [], None
    for _ in range(inner):
        start, start_cpu = time.perf_counter(), time.process_time()
        value = work()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    warm_wall = wall[1:] or wall
    warm_cpu = cpu[1:] or cpu
    return {
        "cold_wall": wall[0],
        "wall": statistics.median(warm_wall),
        "cpu": statistics.median(warm_cpu),
        "value": {
            k: (bool(v) if isinstance(v, (bool, np.bool_)) else float(v)) for k, v in value.items()
        },
        **extra,
    }


def _run_child(cell: str, size: int, inner: int) -> dict:
    command = [
        sys.executable,
        __file__,
        "--child",
        cell,
        "--size",
        str(size),
        "--inner",
        str(inner),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _available(cell: str) -> bool:
    if cell != "jax_privacy":
        return True
    try:
        import jax_privacy.auditing  # noqa: F401
    except ImportError:
        return False
    return True


def measure(rounds: int, inner: int, size: int) -> dict:
    cells = [cell for cell in CELLS if _available(cell)]
    samples: dict[str, list[dict]] = {cell: [] for cell in cells}
    for index in range(rounds):
        order = cells if index % 2 == 0 else list(reversed(cells))
        for cell in order:
            sample = _run_child(cell, size, inner)
            samples[cell].append(sample)
            shown = f"{sample['wall']:.3f} s" if "wall" in sample else sample["error"]
            print(f"round {index + 1}, {cell}: {shown}", file=sys.stderr)
    summary = {}
    for cell, runs in samples.items():
        good = [run for run in runs if "wall" in run]
        if not good:
            summary[cell] = {"error": runs[0].get("error", "failed")}
            continue
        summary[cell] = {
            "wall": statistics.median(run["wall"] for run in good),
            "cpu": statistics.median(run["cpu"] for run in good),
            "cold_wall": statistics.median(run["cold_wall"] for run in good),
            "rounds": len(good),
            "value": good[-1]["value"],
        }
        if "accounting_seconds" in good[0]:
            summary[cell]["accounting_seconds"] = statistics.median(
                run["accounting_seconds"] for run in good
            )
    ratios = {}
    if "wall" in summary.get("jax_privacy", {}):
        for cell in ("gaussdp", "gaussdp_curve", "gaussdp_violation"):
            if "wall" in summary.get(cell, {}):
                ratios[cell] = {
                    "wall": summary[cell]["wall"] / summary["jax_privacy"]["wall"],
                    "cpu": summary[cell]["cpu"] / summary["jax_privacy"]["cpu"],
                    "cold_wall": summary[cell]["cold_wall"] / summary["jax_privacy"]["cold_wall"],
                }
    from run_accountants import _machine, _versions

    versions = _versions()
    try:
        versions["jax-privacy"] = importlib.metadata.version("jax-privacy")
    except importlib.metadata.PackageNotFoundError:
        versions["jax-privacy"] = "not installed"
    return {
        "date": datetime.date.today().isoformat(),
        "size": size,
        "rounds": rounds,
        "inner": inner,
        "summary": summary,
        "ratios": ratios,
        "samples": samples,
        "machine": _machine(),
        "versions": versions,
    }


def _mark(ok: bool) -> str:
    return "✓" if ok else "✗"


def render(data: dict) -> str:
    """The audit section of docs/benchmarks.md, from the JSON."""
    summary, ratios = data["summary"], data["ratios"]
    size = data["size"]
    lines = [
        BEGIN,
        "## Audit (issue 21)",
        "",
        f"Generated by `benchmarks/audit.py` on {data['date']} ({data['rounds']} rounds, "
        f"interleaved, a fresh process per cell and round; in each process the call runs "
        f"{data['inner']} times, the first is *cold*, the median of the others *warm*; "
        "medians over rounds). "
        f"Scores: {size:,} members N(1, 1) and {size:,} non-members N(0, 1), seed 0.",
        "",
        "| cell | warm wall (s) | warm CPU (s) | cold wall (s) | result |",
        "|---|---|---|---|---|",
    ]
    names = {
        "gaussdp": "gaussdp `from_scores`, Bonferroni over all thresholds",
        "gaussdp_curve": "gaussdp `from_scores` + test against one curve (`against=`)",
        "gaussdp_violation": "gaussdp `from_scores` + test against a narrowly refuted curve",
        "jax_privacy": "jax_privacy `CanaryScoreAuditor.epsilon_clopper_pearson`",
        "one_run_fdp": "gaussdp `one_run` f-DP test, 2,000-step DP-SGD curve",
    }
    for cell, name in names.items():
        entry = summary.get(cell)
        if entry is None:
            continue
        if "error" in entry:
            lines.append(f"| {name} | — | — | — | {entry['error']} |")
            continue
        value = ", ".join(
            f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
            for k, v in entry["value"].items()
        )
        lines.append(
            f"| {name} | {entry['wall']:.3f} | {entry['cpu']:.3f} | {entry['cold_wall']:.3f} "
            f"| {value} |"
        )
    lines += ["", "Goals:", ""]
    for cell in ("gaussdp", "gaussdp_curve", "gaussdp_violation"):
        if cell in ratios:
            ratio = ratios[cell]
            lines.append(
                f"- {names[cell]} / jax_privacy: {ratio['wall']:.2f} wall, {ratio['cpu']:.2f} CPU, "
                f"{ratio['cold_wall']:.2f} cold (goal ≤ {GOALS['ratio']}) "
                f"{_mark(ratio['wall'] <= GOALS['ratio'])}; "
                f"{summary[cell]['wall']:.3f} s (goal < {GOALS['scores_seconds']:g} s) "
                f"{_mark(summary[cell]['wall'] < GOALS['scores_seconds'])}"
            )
    one_run = summary.get("one_run_fdp", {})
    if "wall" in one_run:
        total = one_run["wall"] + one_run.get("accounting_seconds", 0.0)
        lines.append(
            f"- one-run f-DP audit with the accountant's curve: {one_run['wall']:.3f} s "
            f"+ {one_run.get('accounting_seconds', 0.0):.3f} s accounting = {total:.3f} s "
            f"(goal < {GOALS['one_run_seconds']:g} s) {_mark(total < GOALS['one_run_seconds'])}"
        )
    lines += [
        "",
        "The two ε differ by design: jax_privacy divides α by the number of its Pareto "
        "thresholds (chosen after seeing the data) and bounds one direction at a time; "
        "gaussdp divides by every threshold there can be (n + m + 1) and both error rates, "
        "which is valid however the thresholds were found, so its ε is a little smaller.",
        "",
        "Machine: "
        + ", ".join(f"{k} {v}" for k, v in data["machine"].items())
        + ". Versions: "
        + ", ".join(f"{k} {v}" for k, v in data["versions"].items())
        + ".",
        END,
    ]
    return "\n".join(lines)


def write_page(section: str, page: Path = PAGE) -> None:
    text = page.read_text(encoding="utf-8")
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        text = head + section + tail
    else:
        marker = "\n## Machine and versions"
        if marker in text:
            head, tail = text.split(marker, 1)
            text = head.rstrip("\n") + "\n\n" + section + "\n" + marker + tail
        else:
            text = text.rstrip("\n") + "\n\n" + section + "\n"
    page.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--inner", type=int, default=3)
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--no-page", action="store_true")
    parser.add_argument("--render", type=Path, help="rewrite the page from this JSON only")
    parser.add_argument("--child", choices=CELLS, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        print(json.dumps(_child(options.child, options.size, options.inner)))
        return
    if options.render:
        data = json.loads(options.render.read_text(encoding="utf-8"))
    else:
        data = measure(options.rounds, options.inner, options.size)
        options.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    section = render(data)
    print(section)
    if not options.no_page:
        write_page(section)


if __name__ == "__main__":
    main()
