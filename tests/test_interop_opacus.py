"""GaussDPAccountant: the Opacus interface, and Opacus itself training a tiny model with it.

Needs torch and opacus (the test extra installs them: see the final report of the
interop work); the reference for ε is gaussdp's own accountant on the same
schedule and, independently, dp_accounting's PLD accountant.
"""

import dp_accounting
import pytest
from dp_accounting import pld

from gaussdp import DPSGD, Composition, account
from gaussdp.interop.opacus import GaussDPAccountant, register
from tests.lazy import LazyModule

torch = LazyModule("torch")  # imported by the first test that uses it
opacus = LazyModule("opacus")


def dp_accounting_epsilon(phases, delta):
    accountant = pld.PLDAccountant(value_discretization_interval=1e-4)
    for sigma, q, steps in phases:
        event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma))
        accountant.compose(dp_accounting.SelfComposedDpEvent(event, steps))
    return accountant.get_epsilon(delta)


def test_interface_and_phases():
    accountant = GaussDPAccountant()
    assert len(accountant) == 0
    assert accountant.get_epsilon(1e-5) == 0.0
    for _ in range(300):
        accountant.step(noise_multiplier=1.1, sample_rate=0.01)
    for _ in range(200):
        accountant.step(noise_multiplier=0.8, sample_rate=0.02)
    assert len(accountant) == 500
    assert accountant.history == [(1.1, 0.01, 300), (0.8, 0.02, 200)]
    assert accountant.pipeline() == Composition([DPSGD(1.1, 0.01, 300), DPSGD(0.8, 0.02, 200)])
    epsilon = accountant.get_epsilon(1e-5, eps_error=0.01)  # Opacus-style extra kwargs
    assert epsilon == account(accountant.pipeline()).epsilon(1e-5)
    reference = dp_accounting_epsilon(accountant.history, 1e-5)
    assert epsilon <= reference * (1 + 1e-6)
    assert epsilon == pytest.approx(reference, rel=5e-3)
    lower, upper = accountant.get_epsilon_bounds(1e-5)
    assert lower <= upper == epsilon
    assert GaussDPAccountant.mechanism() == "gaussdp"


def test_get_mu_and_report_match_gaussdp_report():
    from gaussdp.report import Report, report

    accountant = GaussDPAccountant()
    assert accountant.get_mu() == 0.0  # no step yet: perfect privacy
    for _ in range(300):
        accountant.step(noise_multiplier=1.1, sample_rate=0.01)
    for _ in range(200):
        accountant.step(noise_multiplier=0.8, sample_rate=0.02)
    schedule = Composition([DPSGD(1.1, 0.01, 300), DPSGD(0.8, 0.02, 200)])
    # The same schedule reported by gaussdp directly, from the description alone.
    reference = report(schedule)
    assert accountant.get_mu() == reference.mu
    assert accountant.get_mu() > 0
    run = accountant.report()
    assert isinstance(run, Report)
    assert run.mechanism == schedule
    assert (run.mu, run.regret, run.delta_tail) == (
        reference.mu,
        reference.regret,
        reference.delta_tail,
    )
    assert run.mu == accountant.get_mu()
    # Options go through to the report (here, the δ at which ε is reported).
    assert [row.delta for row in accountant.report(deltas=(1e-7,)).epsilons] == [1e-7]


def test_get_mu_single_phase():
    from gaussdp.report import report

    accountant = GaussDPAccountant()
    for _ in range(50):
        accountant.step(noise_multiplier=2.0, sample_rate=0.05)
    assert accountant.get_mu() == report(DPSGD(2.0, 0.05, 50)).mu
    assert accountant.report().mechanism == DPSGD(2.0, 0.05, 50)


def test_state_dict_round_trip_and_errors():
    accountant = GaussDPAccountant()
    for _ in range(10):
        accountant.step(noise_multiplier=2.0, sample_rate=0.1)
    state = accountant.state_dict()
    assert state == {"history": [(2.0, 0.1, 10)], "mechanism": "gaussdp"}
    restored = GaussDPAccountant()
    restored.load_state_dict(state)
    assert restored.history == accountant.history
    assert restored.get_epsilon(1e-5) == accountant.get_epsilon(1e-5)
    with pytest.raises(ValueError, match="cannot be loaded"):
        restored.load_state_dict({"history": [], "mechanism": "rdp"})
    with pytest.raises(ValueError, match="no 'history' key"):
        restored.load_state_dict({"mechanism": "gaussdp"})
    with pytest.raises(ValueError, match="noise_multiplier must be in"):
        restored.load_state_dict({"history": [(-1.0, 0.1, 3)], "mechanism": "gaussdp"})
    with pytest.raises(ValueError, match="noise_multiplier must be in"):
        accountant.step(noise_multiplier=0.0, sample_rate=0.1)


def _tiny_training(engine, steps_wanted=6):
    torch.manual_seed(0)
    features = torch.randn(64, 4)
    labels = (features[:, 0] > 0).long()
    dataset = torch.utils.data.TensorDataset(features, labels)
    loader = torch.utils.data.DataLoader(dataset, batch_size=8)
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer, loader = engine.make_private(
        module=model,
        optimizer=optimizer,
        data_loader=loader,
        noise_multiplier=1.3,
        max_grad_norm=1.0,
        poisson_sampling=True,
    )
    criterion = torch.nn.CrossEntropyLoss()
    steps = 0
    while steps < steps_wanted:
        for x, y in loader:
            optimizer.zero_grad()
            if len(x):
                criterion(model(x), y).backward()
            optimizer.step()
            steps += 1
            if steps == steps_wanted:
                break
    return steps


def test_opacus_privacy_engine_uses_it():
    register()
    engine = opacus.PrivacyEngine(accountant="gaussdp")
    assert isinstance(engine.accountant, GaussDPAccountant)
    steps = _tiny_training(engine)
    accountant = engine.accountant
    assert len(accountant) == steps
    assert accountant.history == [(1.3, 8 / 64, steps)]
    epsilon = engine.get_epsilon(1e-5)
    assert epsilon == account(DPSGD(1.3, 8 / 64, steps)).epsilon(1e-5)
    assert epsilon == pytest.approx(dp_accounting_epsilon(accountant.history, 1e-5), rel=5e-3)
    # ... and μ-GDP of the same run, as docs/interop.md shows.
    from gaussdp.report import report

    assert accountant.get_mu() == report(DPSGD(1.3, 8 / 64, steps)).mu


def test_opacus_calibrates_with_it():
    register()
    engine = opacus.PrivacyEngine(accountant="gaussdp")
    torch.manual_seed(0)
    dataset = torch.utils.data.TensorDataset(torch.randn(64, 4), torch.zeros(64).long())
    model = torch.nn.Linear(4, 2)
    _, optimizer, _ = engine.make_private_with_epsilon(
        module=model,
        optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        data_loader=torch.utils.data.DataLoader(dataset, batch_size=8),
        target_epsilon=2.0,
        target_delta=1e-5,
        epochs=2,
        max_grad_norm=1.0,
    )
    sigma = optimizer.noise_multiplier
    # Opacus's search stops within its epsilon_tolerance (0.01) below the target.
    achieved = account(DPSGD(sigma, 8 / 64, 16)).epsilon(1e-5)
    assert 1.99 <= achieved <= 2.0
