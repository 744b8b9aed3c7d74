"""The end-to-end audit (examples/audit_dpsgd.py), shortened: Opacus DP-SGD with gradient
canaries; the honest run is consistent with the accountant, the buggy one is a violation."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "audit_dpsgd.py"


@pytest.fixture(scope="module")
def example():
    pytest.importorskip("opacus")  # here, not at import: collecting this file stays cheap
    spec = importlib.util.spec_from_file_location("audit_dpsgd_example", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


def test_honest_run_is_consistent_and_the_audit_is_meaningful(example):
    result = example.audit_run(example.Setting(steps=100, examples=500))
    report = result.report
    assert result.violation is False
    assert 0.0 < report.mu_lower <= report.mu_upper
    assert report.share > 0.2  # the attack realises a real part of the claim


def test_noise_divided_by_four_is_a_violation(example):
    result = example.audit_run(example.Setting(steps=100, examples=500, bug_factor=4.0))
    assert result.violation is True
    assert result.p_value < 0.05
    assert result.report.mu_lower > result.report.mu_upper
