"""GaussDPAccountant and the sampler: told, or read from Opacus's make_private.

References: gaussdp's own accounting of the described run (the Opacus side is
wiring: which description is accounted), and Opacus itself deciding the sampler.
"""

import warnings

import pytest

from gaussdp import DPSGD, Gaussian, InvalidParameterError, Repeated, Shuffled, account
from gaussdp.interop.opacus import GaussDPAccountant, ShufflingWarning, register
from tests.lazy import LazyModule

torch = LazyModule("torch")  # imported by the first test that uses it
opacus = LazyModule("opacus")


def _train(engine, *, poisson_sampling, steps_wanted=8):
    torch.manual_seed(0)
    features = torch.randn(64, 4)
    dataset = torch.utils.data.TensorDataset(features, (features[:, 0] > 0).long())
    loader = torch.utils.data.DataLoader(dataset, batch_size=16, shuffle=True)
    model = torch.nn.Linear(4, 2)
    model, optimizer, loader = engine.make_private(
        module=model,
        optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        data_loader=loader,
        noise_multiplier=1.0,
        max_grad_norm=1.0,
        poisson_sampling=poisson_sampling,
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
    return loader


def test_poisson_sampling_false_is_accounted_as_shuffling_with_a_warning():
    register()
    engine = opacus.PrivacyEngine(accountant="gaussdp")
    with pytest.warns(ShufflingWarning, match="not as Poisson"):
        loader = _train(engine, poisson_sampling=False)
    accountant = engine.accountant
    assert accountant.sampler.value == "shuffling"
    assert accountant.history == [(1.0, 1 / 4, 8)]
    shuffled = DPSGD(1.0, steps=8, sampler="shuffling", steps_per_epoch=4)
    assert accountant.pipeline() == shuffled
    assert shuffled.expand() == Repeated(Shuffled(Gaussian(1.0), 4), 2)
    lower, upper = accountant.get_epsilon_bounds(1e-5)
    assert lower < upper
    # never Poisson in disguise: the lower bound alone exceeds the Poisson figure
    assert lower > account(DPSGD(1.0, 1 / 4, 8)).epsilon(1e-5)
    assert accountant.detect_sampler(loader).value == "shuffling"


def test_poisson_sampling_true_stays_poisson_without_warning():
    register()
    engine = opacus.PrivacyEngine(accountant="gaussdp")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ShufflingWarning)
        loader = _train(engine, poisson_sampling=True, steps_wanted=3)
    assert engine.accountant.sampler.value == "poisson"
    assert engine.accountant.pipeline() == DPSGD(1.0, 1 / 4, 3)
    assert GaussDPAccountant().detect_sampler(loader).value == "poisson"


def test_told_sampler_and_unfinished_epochs():
    accountant = GaussDPAccountant(sampler="shuffling")
    for _ in range(6):  # one epoch of 4 and half of the next
        accountant.step(noise_multiplier=1.0, sample_rate=0.25)
    up = DPSGD(1.0, steps=8, sampler="shuffling", steps_per_epoch=4)
    down = DPSGD(1.0, steps=4, sampler="shuffling", steps_per_epoch=4)
    assert accountant.pipeline() == up
    assert accountant.pipeline(whole_epochs="down") == down
    lower, upper = accountant.get_epsilon_bounds(1e-5)
    assert upper == accountant.get_epsilon(1e-5)
    assert lower == account(down).epsilon_bounds(1e-5)[0] < upper
    state = accountant.state_dict()
    assert state["sampler"] == "shuffling"
    restored = GaussDPAccountant()
    restored.load_state_dict(state)
    assert restored.pipeline() == up


def test_bad_samplers_are_refused_in_one_line():
    with pytest.raises(InvalidParameterError, match="did you mean 'shuffling'"):
        GaussDPAccountant(sampler="shufle")
    with pytest.raises(InvalidParameterError, match="for an Opacus run"):
        GaussDPAccountant(sampler="truncated-poisson")
    accountant = GaussDPAccountant(sampler="balls-in-bins")
    accountant.step(noise_multiplier=1.0, sample_rate=0.3)
    with pytest.raises(InvalidParameterError, match="sample_rate must be 1/"):
        accountant.pipeline()


def test_make_private_with_epsilon_calibrates_shuffled_batches_as_shuffling():
    # Opacus calibrates σ with a fresh accountant of this kind; with poisson_sampling=False
    # the σ must reach the target for shuffled batches (no amplification), not for Poisson.
    register()

    def calibrated(poisson_sampling):
        torch.manual_seed(0)
        features = torch.randn(64, 4)
        dataset = torch.utils.data.TensorDataset(features, (features[:, 0] > 0).long())
        loader = torch.utils.data.DataLoader(dataset, batch_size=16, shuffle=True)
        model = torch.nn.Linear(4, 2)
        engine = opacus.PrivacyEngine(accountant="gaussdp")
        _, optimizer, _ = engine.make_private_with_epsilon(
            module=model,
            optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
            data_loader=loader,
            target_epsilon=4.0,
            target_delta=1e-5,
            epochs=2,
            max_grad_norm=1.0,
            poisson_sampling=poisson_sampling,
        )
        return optimizer.noise_multiplier

    with pytest.warns(ShufflingWarning):
        shuffled = calibrated(False)
    poisson = calibrated(True)
    # the shuffled run's σ meets ε ≤ 4 by the certified upper bound (two Gaussians of 1/σ)
    assert account(Repeated(Gaussian(shuffled), 2)).epsilon(1e-5) <= 4.0 + 0.01
    assert shuffled > poisson
