"""Mechanism descriptions: validation, value semantics, dict and TOML round trips, examples.

Reference values are written out by hand here (expected dicts, messages,
structures) or come from published parameters (the Census allocation, De et
al. 2022); nothing is compared with the output of the same code path.
"""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
import re

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import gaussdp
from gaussdp import InvalidParameterError
from gaussdp.mechanisms import (
    DPSGD,
    ApproxDP,
    Composition,
    DiscreteGaussian,
    Gaussian,
    GaussianMixture,
    Laplace,
    Mechanism,
    Neighbouring,
    Pipeline,
    PipelineFileError,
    PoissonSubsampled,
    PureDP,
    RandomAllocation,
    RandomizedResponse,
    Repeated,
    SubsampledWithoutReplacement,
    TruncatedPoisson,
    dumps,
    from_dict,
    load,
    loads,
    validate_neighbouring,
)

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
DOCS = ROOT / "docs" / "mechanisms.md"

ALL_TYPES = {
    "gaussian": Gaussian,
    "laplace": Laplace,
    "discrete_gaussian": DiscreteGaussian,
    "randomized_response": RandomizedResponse,
    "pure_dp": PureDP,
    "approx_dp": ApproxDP,
    "poisson_subsampled": PoissonSubsampled,
    "subsampled_without_replacement": SubsampledWithoutReplacement,
    "composition": Composition,
    "repeated": Repeated,
    "dpsgd": DPSGD,
}


# --------------------------------------------------------------------------- validation

BAD = [
    # (constructor, args, kwargs, exact message)
    (Gaussian, (0.0,), {}, "sigma must be in (0, inf], got 0.0"),
    (Gaussian, (-1.0,), {}, "sigma must be in (0, inf], got -1.0"),
    (Gaussian, (math.nan,), {}, "sigma must be in (0, inf], got nan"),
    (Gaussian, (1.0,), {"sensitivity": -0.5}, "sensitivity must be in [0, inf), got -0.5"),
    (Gaussian, (1.0,), {"sensitivity": math.inf}, "sensitivity must be in [0, inf), got inf"),
    (Gaussian, ("5",), {}, "sigma must be a real number, got '5'"),
    (Gaussian, (True,), {}, "sigma must be a real number, got True"),
    (Gaussian, (None,), {}, "sigma must be a real number, got None"),
    (Gaussian, ([1.0, 2.0],), {}, "sigma must be a real number, got [1.0, 2.0]"),
    (Gaussian, (1j,), {}, "sigma must be a real number, got 1j"),
    (Laplace, (0.0,), {}, "scale must be in (0, inf], got 0.0"),
    (Laplace, (1.0, -1.0), {}, "sensitivity must be in [0, inf), got -1.0"),
    (DiscreteGaussian, (math.inf,), {}, "sigma must be in (0, inf), got inf"),
    (DiscreteGaussian, (0.0,), {}, "sigma must be in (0, inf), got 0.0"),
    (DiscreteGaussian, (1.0, 0), {}, "sensitivity must be an integer >= 1, got 0"),
    (DiscreteGaussian, (1.0, 1.5), {}, "sensitivity must be an integer >= 1, got 1.5"),
    (RandomizedResponse, (-0.1,), {}, "epsilon must be in [0, inf), got -0.1"),
    (RandomizedResponse, (math.inf,), {}, "epsilon must be in [0, inf), got inf"),
    (PureDP, (-1.0,), {}, "epsilon must be in [0, inf), got -1.0"),
    (ApproxDP, (1.0, 1.5), {}, "delta must be in [0, 1], got 1.5"),
    (ApproxDP, (1.0, -1e-9), {}, "delta must be in [0, 1], got -1e-09"),
    (ApproxDP, (-1.0, 0.1), {}, "epsilon must be in [0, inf), got -1.0"),
    (
        PoissonSubsampled,
        (Gaussian(1.0), 1.5),
        {},
        "sampling_probability must be in (0, 1], got 1.5",
    ),
    (
        PoissonSubsampled,
        (Gaussian(1.0), 0.0),
        {},
        "sampling_probability must be in (0, 1], got 0.0",
    ),
    (
        PoissonSubsampled,
        ("gaussian", 0.5),
        {},
        "mechanism must be a Mechanism (Gaussian, PureDP, Composition, ...), got 'gaussian'",
    ),
    (
        SubsampledWithoutReplacement,
        (Gaussian(1.0), 2000, 1000),
        {},
        "sample_size must be <= dataset_size (1000), got 2000",
    ),
    (
        SubsampledWithoutReplacement,
        (Gaussian(1.0), 0, 1000),
        {},
        "sample_size must be an integer >= 1, got 0",
    ),
    (
        SubsampledWithoutReplacement,
        (Gaussian(1.0), 10, 10.5),
        {},
        "dataset_size must be an integer >= 1, got 10.5",
    ),
    (Composition, ([],), {}, "Composition needs at least one mechanism, got none"),
    (Composition, ((),), {}, "Composition needs at least one mechanism, got none"),
    (
        Composition,
        ([Gaussian(1.0), 3],),
        {},
        "mechanisms[1] must be a Mechanism (Gaussian, PureDP, Composition, ...), got 3",
    ),
    (
        Composition,
        (Gaussian(1.0),),
        {},
        "mechanisms must be an iterable of Mechanism objects, got "
        "Gaussian(sigma=1.0, sensitivity=1.0)",
    ),
    (Repeated, (Gaussian(1.0), 0), {}, "times must be an integer >= 1, got 0"),
    (Repeated, (Gaussian(1.0), 2.5), {}, "times must be an integer >= 1, got 2.5"),
    (Repeated, (Gaussian(1.0), True), {}, "times must be an integer >= 1, got True"),
    (DPSGD, (0.0, 0.1, 10), {}, "noise_multiplier must be in (0, inf], got 0.0"),
    (DPSGD, (1.0, 1.5, 10), {}, "sampling_probability must be in (0, 1], got 1.5"),
    (DPSGD, (1.0, 0.1, 2.5), {}, "steps must be an integer >= 1, got 2.5"),
    (DPSGD, (1.0, 0.1, 0), {}, "steps must be an integer >= 1, got 0"),
]


@pytest.mark.parametrize(
    ("constructor", "args", "kwargs", "message"), BAD, ids=[f"{c.__name__}-{m}" for c, *_, m in BAD]
)
def test_bad_parameters_are_refused_with_a_clear_message(constructor, args, kwargs, message):
    with pytest.raises(InvalidParameterError) as info:
        constructor(*args, **kwargs)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "build",
    [
        lambda: Gaussian(math.inf),
        lambda: Gaussian(1.0, sensitivity=0.0),
        lambda: Laplace(math.inf),
        lambda: DiscreteGaussian(1e-3, 7),
        lambda: RandomizedResponse(0.0),
        lambda: PureDP(0.0),
        lambda: ApproxDP(0.0, 0.0),
        lambda: ApproxDP(3.0, 1.0),
        lambda: PoissonSubsampled(PureDP(1.0), 1.0),
        lambda: SubsampledWithoutReplacement(PureDP(1.0), 5, 5),
        lambda: Repeated(PureDP(1.0), 1),
        lambda: DPSGD(math.inf, 1.0, 1),
    ],
)
def test_boundary_values_are_accepted(build):
    assert isinstance(build(), Mechanism)


def test_fields_hold_plain_python_numbers():
    g = Gaussian(np.float32(2.5), sensitivity=np.int64(2))
    assert type(g.sigma) is float and g.sigma == 2.5
    assert type(g.sensitivity) is float and g.sensitivity == 2.0
    d = DiscreteGaussian(np.array(3.0), sensitivity=np.int64(2))
    assert type(d.sigma) is float and type(d.sensitivity) is int
    r = Repeated(Gaussian(1), np.int64(4))
    assert type(r.times) is int and r.times == 4
    s = DPSGD(1, 1, 3.0)  # an integral float is an integer
    assert (type(s.noise_multiplier), type(s.sampling_probability), type(s.steps)) == (
        float,
        float,
        int,
    )
    assert math.copysign(1.0, Gaussian(1.0, sensitivity=-0.0).sensitivity) == 1.0


def test_descriptions_are_immutable():
    g = Gaussian(1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.sigma = 2.0
    c = Composition([g])
    assert isinstance(c.mechanisms, tuple)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.mechanisms = ()


def test_value_semantics_and_hashing():
    a = Composition([Repeated(Gaussian(5), 3), DPSGD(1.1, 0.01, 5000)])
    b = Composition(iter([Repeated(Gaussian(5.0), 3), DPSGD(1.1, 0.01, 5000.0)]))
    assert a == b and hash(a) == hash(b)
    assert len({a, b, Gaussian(1.0), Gaussian(1)}) == 2
    # same fields, different mathematics: never equal
    assert PureDP(1.0) != RandomizedResponse(1.0)
    assert Gaussian(1.0) != DiscreteGaussian(1.0)
    assert Composition([Gaussian(1.0)]) != Gaussian(1.0)


def test_mechanism_base_class_cannot_be_instantiated():
    with pytest.raises(TypeError, match="abstract base class"):
        Mechanism()


def test_dpsgd_expands_to_repeated_poisson_gaussian():
    run = DPSGD(noise_multiplier=9.4, sampling_probability=0.32768, steps=2000)
    expanded = run.expand()
    assert isinstance(expanded, Repeated) and expanded.times == 2000
    inner = expanded.mechanism
    assert isinstance(inner, PoissonSubsampled) and inner.sampling_probability == 0.32768
    assert inner.mechanism == Gaussian(sigma=9.4, sensitivity=1.0)


def test_without_replacement_sampling_probability():
    s = SubsampledWithoutReplacement(PureDP(1.0), sample_size=16384, dataset_size=1281167)
    assert s.sampling_probability == 16384 / 1281167
    with pytest.raises(AttributeError):
        s.sampling_probability = 0.5


# --------------------------------------------------------------------------- descriptions


@pytest.mark.parametrize(
    ("mechanism", "text"),
    [
        (DPSGD(9.4, 0.32768, 2000), "DP-SGD: σ=9.4, q=0.32768, 2000 steps"),
        (DPSGD(1.0, 1.0, 1), "DP-SGD: σ=1, q=1, 1 step"),
        (Gaussian(math.inf), "Gaussian(σ=∞)"),
        (Gaussian(2.0, 0.5), "Gaussian(σ=2, Δ=0.5)"),
        (Laplace(1.5), "Laplace(b=1.5)"),
        (DiscreteGaussian(3.0, 2), "DiscreteGaussian(σ=3, Δ=2)"),
        (RandomizedResponse(0.5), "RandomizedResponse(ε=0.5)"),
        (ApproxDP(1.0, 1e-6), "ApproxDP(ε=1, δ=1e-06)"),
        (Repeated(PureDP(0.1), 7), "7 × PureDP(ε=0.1)"),
        (
            PoissonSubsampled(Composition([Gaussian(1.0), Laplace(2.0)]), 0.25),
            "PoissonSubsampled(q=0.25, Composition[Gaussian(σ=1), Laplace(b=2)])",
        ),
        (
            SubsampledWithoutReplacement(Gaussian(1.0), 10, 100),
            "SubsampledWithoutReplacement(m=10, n=100, Gaussian(σ=1))",
        ),
        (
            Composition([DPSGD(1.1, 0.01, 5000), DPSGD(0.8, 0.02, 1000)]),
            "Composition of 2: DPSGD(σ=1.1, q=0.01, 5000 steps), DPSGD(σ=0.8, q=0.02, 1000 steps)",
        ),
    ],
)
def test_one_line_descriptions(mechanism, text):
    assert str(mechanism) == text == mechanism.describe()
    assert "\n" not in text


def test_pipeline_description_names_the_relation():
    p = Pipeline(PureDP(1.0), "replace", name="survey")
    assert str(p) == "survey: PureDP(ε=1) [replace one record]"
    assert str(Pipeline(PureDP(1.0))) == "PureDP(ε=1) [add/remove one record]"


# --------------------------------------------------------------------------- dicts


def test_to_dict_is_the_documented_structure():
    mechanism = Composition(
        [
            Repeated(Gaussian(5.0), 3),
            PoissonSubsampled(Laplace(2.0, 0.5), 0.01),
            DPSGD(9.4, 0.32768, 2000),
        ]
    )
    expected = {
        "type": "composition",
        "mechanisms": [
            {
                "type": "repeated",
                "mechanism": {"type": "gaussian", "sigma": 5.0, "sensitivity": 1.0},
                "times": 3,
            },
            {
                "type": "poisson_subsampled",
                "mechanism": {"type": "laplace", "scale": 2.0, "sensitivity": 0.5},
                "sampling_probability": 0.01,
            },
            {
                "type": "dpsgd",
                "noise_multiplier": 9.4,
                "sampling_probability": 0.32768,
                "steps": 2000,
            },
        ],
    }
    assert mechanism.to_dict() == expected
    assert from_dict(expected) == mechanism


def test_from_dict_fills_defaults_and_applies_repeat():
    assert from_dict({"type": "gaussian", "sigma": 2}) == Gaussian(2.0, 1.0)
    assert from_dict({"type": "discrete_gaussian", "sigma": 2}) == DiscreteGaussian(2.0, 1)
    assert from_dict({"type": "pure_dp", "epsilon": 1, "repeat": 4}) == Repeated(PureDP(1.0), 4)
    assert from_dict({"type": "pure_dp", "epsilon": 1, "repeat": 1}) == PureDP(1.0)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"sigma": 1}, "type is missing; known types: amplified_bandmf, approx_dp, "),
        ({"type": "gausian", "sigma": 1}, "type: unknown mechanism type 'gausian' (did you mean"),
        ({"type": 3}, "type must be a string, got int 3"),
        ({"type": "gaussian"}, "sigma is missing (required for type 'gaussian')"),
        ({"type": "gaussian", "sigma": 1, "mu": 2}, "mu: unknown field for type 'gaussian'"),
        ({"type": "gaussian", "sigma": "1"}, "sigma must be a number, got a string '1'"),
        ({"type": "gaussian", "sigma": True}, "sigma must be a number, got a boolean True"),
        ({"type": "repeated", "times": 2, "mechanism": 5}, "mechanism must be a table"),
        (
            {"type": "repeated", "times": 2, "mechanism": {"type": "pure_dp", "epsilon": -1}},
            "mechanism.epsilon must be in [0, inf), got -1.0",
        ),
        (
            {"type": "composition", "mechanisms": []},
            "mechanisms: Composition needs at least one mechanism, got none",
        ),
        (
            {"type": "composition", "mechanisms": {"type": "pure_dp", "epsilon": 1}},
            "mechanisms must be an array of mechanism tables",
        ),
        (
            {
                "type": "composition",
                "mechanisms": [{"type": "pure_dp", "epsilon": 1}, {"type": "laplace"}],
            },
            "mechanisms[1].scale is missing (required for type 'laplace')",
        ),
        ({"type": "pure_dp", "epsilon": 1, "repeat": 0}, "repeat must be an integer >= 1, got 0"),
        ({"type": "pure_dp", "epsilon": 1, "repeat": "3"}, "repeat must be an integer >= 1"),
        ("gaussian", "mechanism must be a table with a 'type' key, got a string"),
    ],
)
def test_from_dict_errors_name_the_place(data, message):
    with pytest.raises(InvalidParameterError) as info:
        from_dict(data)
    assert str(info.value).startswith(message)


POSITIVE = st.floats(min_value=1e-300, max_value=1e300) | st.just(math.inf)
PROBABILITY = st.floats(min_value=1e-12, max_value=1.0)
EPSILON = st.floats(min_value=0.0, max_value=1e3)
LEAVES = st.one_of(
    st.builds(Gaussian, POSITIVE, st.floats(min_value=0.0, max_value=1e6)),
    st.builds(Laplace, POSITIVE, st.floats(min_value=0.0, max_value=1e6)),
    st.builds(DiscreteGaussian, st.floats(min_value=1e-6, max_value=1e6), st.integers(1, 1000)),
    st.builds(RandomizedResponse, EPSILON),
    st.builds(PureDP, EPSILON),
    st.builds(ApproxDP, EPSILON, st.floats(min_value=0.0, max_value=1.0)),
    st.builds(DPSGD, POSITIVE, PROBABILITY, st.integers(1, 10**7)),
)


def _without_replacement(mechanism, a, b):
    return SubsampledWithoutReplacement(mechanism, min(a, b), max(a, b))


MECHANISMS = st.recursive(
    LEAVES,
    lambda children: st.one_of(
        st.builds(PoissonSubsampled, children, PROBABILITY),
        st.builds(_without_replacement, children, st.integers(1, 10**7), st.integers(1, 10**7)),
        st.builds(Repeated, children, st.integers(1, 10**7)),
        st.builds(Composition, st.lists(children, min_size=1, max_size=4)),
    ),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(MECHANISMS)
def test_dict_round_trip(mechanism):
    data = mechanism.to_dict()
    assert from_dict(data) == mechanism
    # the dict is plain JSON (up to infinities, which JSON writes as Infinity)
    assert from_dict(json.loads(json.dumps(data))) == mechanism
    assert hash(from_dict(data)) == hash(mechanism)


# --------------------------------------------------------------------------- neighbouring


def test_neighbouring_values():
    assert Neighbouring("add_remove") is Neighbouring.ADD_REMOVE
    assert Neighbouring("replace") is Neighbouring.REPLACE
    assert Pipeline(PureDP(1.0)).neighbouring is Neighbouring.ADD_REMOVE
    assert Pipeline(PureDP(1.0), "replace").neighbouring is Neighbouring.REPLACE


def test_without_replacement_needs_replace():
    fixed_size = Repeated(SubsampledWithoutReplacement(Gaussian(1.0), 256, 60000), 100)
    with pytest.raises(InvalidParameterError, match="neighbouring must be 'replace'"):
        Pipeline(fixed_size)
    assert Pipeline(fixed_size, Neighbouring.REPLACE).mechanism == fixed_size


def test_poisson_under_replace_needs_additive_noise_inside():
    allowed = PoissonSubsampled(Composition([Gaussian(1.0), Repeated(Laplace(1.0), 2)]), 0.1)
    assert validate_neighbouring(allowed, "replace") is Neighbouring.REPLACE
    assert validate_neighbouring(DPSGD(1.0, 0.1, 5), "replace") is Neighbouring.REPLACE
    with pytest.raises(InvalidParameterError, match="got PoissonSubsampled over PureDP"):
        Pipeline(Composition([Gaussian(1.0), PoissonSubsampled(PureDP(1.0), 0.1)]), "replace")
    assert validate_neighbouring(PoissonSubsampled(PureDP(1.0), 0.1)) is Neighbouring.ADD_REMOVE


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("replcae", "neighbouring must be one of 'add_remove', 'replace', got 'replcae' (did"),
        (1, "neighbouring must be one of 'add_remove', 'replace', got 1"),
    ],
)
def test_bad_neighbouring(value, message):
    with pytest.raises(InvalidParameterError) as info:
        Pipeline(PureDP(1.0), value)
    assert str(info.value).startswith(message)


def test_pipeline_validates_its_fields():
    with pytest.raises(InvalidParameterError, match="mechanism must be a Mechanism"):
        Pipeline("gaussian")
    with pytest.raises(InvalidParameterError, match="name must be a string or None, got 3"):
        Pipeline(PureDP(1.0), name=3)


# --------------------------------------------------------------------------- TOML

AUTODP = Composition([Repeated(Gaussian(5.0), 3), Repeated(Gaussian(8.0), 5), PureDP(0.1)])


def test_loads_the_documented_format():
    text = """
    name = "autodp example"
    neighbouring = "add_remove"      # optional

    [[mechanism]]
    type = "gaussian"
    sigma = 5.0
    repeat = 3

    [[mechanism]]
    type = "gaussian"
    sigma = 8
    repeat = 5

    [[mechanism]]
    type = "pure_dp"
    epsilon = 0.1
    """
    assert loads(text) == Pipeline(AUTODP, Neighbouring.ADD_REMOVE, "autodp example")


def test_nested_tables_in_both_spellings():
    inline = """
    [[mechanism]]
    type = "poisson_subsampled"
    sampling_probability = 0.01
    repeat = 1000
    mechanism = { type = "gaussian", sigma = 1.0 }
    """
    subtable = """
    [[mechanism]]
    type = "poisson_subsampled"
    sampling_probability = 0.01
    repeat = 1000
    [mechanism.mechanism]
    type = "gaussian"
    sigma = 1.0
    """
    expected = Repeated(PoissonSubsampled(Gaussian(1.0), 0.01), 1000)
    assert loads(inline).mechanism == expected == loads(subtable).mechanism


def test_single_entry_and_single_table():
    one = loads('[[mechanism]]\ntype = "pure_dp"\nepsilon = 1').mechanism
    table = loads('[mechanism]\ntype = "pure_dp"\nepsilon = 1').mechanism
    assert one == table == PureDP(1.0)


def test_replace_relation_from_file():
    text = """
    neighbouring = "replace"
    [[mechanism]]
    type = "subsampled_without_replacement"
    sample_size = 256
    dataset_size = 60000
    repeat = 100
    mechanism = { type = "gaussian", sigma = 1.2 }
    """
    pipeline = loads(text)
    assert pipeline.neighbouring is Neighbouring.REPLACE
    assert pipeline.mechanism == Repeated(
        SubsampledWithoutReplacement(Gaussian(1.2), 256, 60000), 100
    )


GOOD_ENTRY = '[[mechanism]]\ntype = "gaussian"\nsigma = 1.0\n'
BAD_FILES = [
    # (text, expected message after "<file>: ")
    ('name = "x\n', r"invalid TOML: .*\(at line 1, column \d+\)"),
    (GOOD_ENTRY + "sigma = 2.0\n", r"invalid TOML: .*line 4"),
    ('name = "nothing"\n', r"empty pipeline: no mechanism entries"),
    ("mechanism = []\n", r"empty pipeline: no mechanism entries"),
    (
        GOOD_ENTRY + '[[mechanism]]\ntype = "gausian"\nsigma = 1\n',
        r"mechanism\[1\]\.type: unknown mechanism type 'gausian' \(did you mean 'gaussian'\?\); "
        r"known types: amplified_bandmf, approx_dp, composition, discrete_gaussian, dpsgd, "
        r"gaussian, gaussian_mixture, gdp, group, "
        r"laplace, matrix, parallel, poisson_subsampled, pure_dp, random_allocation, "
        r"randomized_response, renyi_dp, repeated, shuffled, subsampled_without_replacement, "
        r"truncated_poisson, zcdp$",
    ),
    ("[[mechanism]]\nsigma = 1\n", r"mechanism\[0\]\.type is missing; known types: "),
    (
        GOOD_ENTRY * 2 + '[[mechanism]]\ntype = "gaussian"\nsigma = -1.0\n',
        r"mechanism\[2\]\.sigma must be in \(0, inf\], got -1\.0$",
    ),
    (
        '[[mechanism]]\ntype = "pure_dp"\n',
        r"mechanism\[0\]\.epsilon is missing \(required for type 'pure_dp'\)$",
    ),
    (
        '[[mechanism]]\ntype = "pure_dp"\nepsilon = 1\neps = 2\n',
        r"mechanism\[0\]\.eps: unknown field for type 'pure_dp' \(did you mean 'epsilon'\?\); "
        r"allowed fields: epsilon, repeat$",
    ),
    (
        '[[mechanism]]\ntype = "gaussian"\nsigma = "5"\n',
        r"mechanism\[0\]\.sigma must be a number, got a string '5'$",
    ),
    (
        '[[mechanism]]\ntype = "dpsgd"\nnoise_multiplier = 1.0\nsampling_probability = 1.5\n'
        "steps = 10\n",
        r"mechanism\[0\]\.sampling_probability must be in \(0, 1\], got 1\.5$",
    ),
    (
        '[[mechanism]]\ntype = "dpsgd"\nnoise_multiplier = 1.0\nsampling_probability = 0.5\n'
        "steps = 2.5\n",
        r"mechanism\[0\]\.steps must be an integer >= 1, got 2\.5$",
    ),
    (
        '[[mechanism]]\ntype = "subsampled_without_replacement"\nsample_size = 2000\n'
        'dataset_size = 1000\nmechanism = { type = "gaussian", sigma = 1.0 }\n',
        r"mechanism\[0\]\.sample_size must be <= dataset_size \(1000\), got 2000$",
    ),
    (
        '[[mechanism]]\ntype = "composition"\nmechanisms = [{ type = "pure_dp", epsilon = 1 }, '
        '{ type = "repeated", times = 3, mechanism = { type = "laplace", scale = 0 } }]\n',
        r"mechanism\[0\]\.mechanisms\[1\]\.mechanism\.scale must be in \(0, inf\], got 0\.0$",
    ),
    (
        '[[mechanism]]\ntype = "composition"\nmechanisms = []\n',
        r"mechanism\[0\]\.mechanisms: Composition needs at least one mechanism, got none$",
    ),
    (GOOD_ENTRY + "repeat = -2\n", r"mechanism\[0\]\.repeat must be an integer >= 1, got -2$"),
    ('neighboring = "replace"\n' + GOOD_ENTRY, r"neighboring: unknown top-level key \(did you"),
    (
        'neighbouring = "remove"\n' + GOOD_ENTRY,
        r"neighbouring must be one of 'add_remove', 'replace', got 'remove'",
    ),
    ("name = 3\n" + GOOD_ENTRY, r"name must be a string, got int 3$"),
    ("mechanism = 3\n", r"mechanism must be an array of tables \(\[\[mechanism\]\]\) or a table"),
    ("mechanism = [3]\n", r"mechanism\[0\] must be a table with a 'type' key, got int 3$"),
    (
        '[[mechanism]]\ntype = "subsampled_without_replacement"\nsample_size = 20\n'
        'dataset_size = 1000\nmechanism = { type = "gaussian", sigma = 1.0 }\n',
        r"neighbouring must be 'replace' for SubsampledWithoutReplacement",
    ),
]


@pytest.mark.parametrize(("text", "pattern"), BAD_FILES)
def test_malformed_files_name_file_place_and_problem(tmp_path, text, pattern):
    path = tmp_path / "pipeline.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PipelineFileError) as info:
        load(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ")
    assert re.search(pattern, message[len(f"{path}: ") :]), message
    assert "\n" not in message
    # the same text without a file names its source
    with pytest.raises(PipelineFileError, match=r"^<string>: "):
        loads(text)


def test_unreadable_files(tmp_path):
    missing = tmp_path / "missing.toml"
    with pytest.raises(PipelineFileError, match=r"missing\.toml: file not found$"):
        load(missing)
    with pytest.raises(PipelineFileError, match="is a directory"):
        load(tmp_path)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe\x00name")
    with pytest.raises(PipelineFileError, match="not UTF-8 text"):
        load(binary)
    assert issubclass(PipelineFileError, InvalidParameterError)


def _pipeline_for(mechanism, name):
    for relation in Neighbouring:
        try:
            return Pipeline(mechanism, relation, name)
        except InvalidParameterError:
            continue
    return None


@settings(max_examples=150, deadline=None)
@given(MECHANISMS, st.none() | st.text(max_size=20))
def test_toml_round_trip(mechanism, name):
    pipeline = _pipeline_for(mechanism, name)
    assume(pipeline is not None)
    assert loads(dumps(pipeline)) == pipeline


def test_dumps_writes_the_documented_shape():
    text = dumps(Pipeline(AUTODP, name="autodp example"))
    assert text.splitlines()[:4] == [
        'name = "autodp example"',
        'neighbouring = "add_remove"',
        "",
        "[[mechanism]]",
    ]
    assert text.count("[[mechanism]]") == 3
    assert dumps(PureDP(1.0)) == (
        'neighbouring = "add_remove"\n\n[[mechanism]]\ntype = "pure_dp"\nepsilon = 1.0\n'
    )


# --------------------------------------------------------------------------- examples


def test_every_example_loads():
    files = sorted(EXAMPLES.glob("*.toml"))
    assert {f.name for f in files} >= {
        "dpsgd_cifar10.toml",
        "autodp_example.toml",
        "census_topdown.toml",
        "dpsgd_phases.toml",
    }
    for path in files:
        if "[sweep]" in path.read_text(encoding="utf-8"):
            continue  # a sweep grid (lists of values), read by gaussdp.sweep: tests/test_sweep_*
        pipeline = load(path)
        assert pipeline.name
        assert pipeline.neighbouring is Neighbouring.ADD_REMOVE
        assert loads(dumps(pipeline)) == pipeline
        assert path.name in (EXAMPLES / "README.md").read_text(encoding="utf-8")


def test_example_dpsgd_cifar10():
    # De et al. (2022): batch 16384 of N = 50000, σ = 9.4, 2000 steps
    assert load(EXAMPLES / "dpsgd_cifar10.toml").mechanism == DPSGD(9.4, 16384 / 50000, 2000)


def test_example_autodp():
    assert load(EXAMPLES / "autodp_example.toml").mechanism == AUTODP


def test_example_phases():
    assert load(EXAMPLES / "dpsgd_phases.toml").mechanism == Composition(
        [DPSGD(1.1, 0.01, 5000), DPSGD(0.8, 0.02, 1000)]
    )


# The Census Bureau's 2022 production allocation: level, share of ρ = 3.65 in percent.
CENSUS_LEVELS = [
    ("US", 2.0),
    ("State", 27.4),
    ("County", 8.5),
    ("PEPG", 13.1),
    ("Tract Subset Group", 13.1),
    ("Tract Subset", 23.8),
    ("Block Group", 11.8),
    ("Block", 0.3),
]


def test_example_census_matches_the_allocation():
    mechanism = load(EXAMPLES / "census_topdown.toml").mechanism
    assert isinstance(mechanism, Composition)
    assert len(mechanism.mechanisms) == len(CENSUS_LEVELS)
    total_rho = 0.0
    for (level, percent), part in zip(CENSUS_LEVELS, mechanism.mechanisms, strict=True):
        assert isinstance(part, Repeated) and part.times == 10, level
        query = part.mechanism
        assert isinstance(query, DiscreteGaussian) and query.sensitivity == 1, level
        expected_sigma = math.sqrt(10 / (2 * (percent / 100) * 3.65))
        assert query.sigma == pytest.approx(expected_sigma, rel=1e-15), level
        # a discrete Gaussian with Δ = 1 is 1/(2σ²)-zCDP (Canonne, Kamath & Steinke 2020)
        level_rho = part.times / (2 * query.sigma**2)
        assert level_rho == pytest.approx(percent / 100 * 3.65, rel=1e-12), level
        total_rho += level_rho
    assert total_rho == pytest.approx(3.65, rel=1e-12)


# --------------------------------------------------------------------------- package and docs


def test_top_level_re_exports():
    for name in [
        "Gaussian",
        "Laplace",
        "DiscreteGaussian",
        "RandomizedResponse",
        "PureDP",
        "ApproxDP",
        "PoissonSubsampled",
        "SubsampledWithoutReplacement",
        "Composition",
        "Repeated",
        "DPSGD",
        "Mechanism",
        "Neighbouring",
        "Pipeline",
        "load",
    ]:
        assert getattr(gaussdp, name) is getattr(gaussdp.mechanisms, name)


def test_every_type_is_documented_and_every_docs_example_loads():
    text = DOCS.read_text(encoding="utf-8")
    for type_name in ALL_TYPES:
        assert f'type = "{type_name}"' in text, type_name
    blocks = re.findall(r"```toml\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) >= 5
    for block in blocks:
        assert isinstance(loads(block, source="docs/mechanisms.md"), Pipeline)


def test_type_names_match_to_dict():
    examples = {
        "gaussian": Gaussian(1.0),
        "laplace": Laplace(1.0),
        "discrete_gaussian": DiscreteGaussian(1.0),
        "randomized_response": RandomizedResponse(1.0),
        "pure_dp": PureDP(1.0),
        "approx_dp": ApproxDP(1.0, 1e-6),
        "poisson_subsampled": PoissonSubsampled(PureDP(1.0), 0.5),
        "subsampled_without_replacement": SubsampledWithoutReplacement(PureDP(1.0), 1, 2),
        "composition": Composition([PureDP(1.0)]),
        "repeated": Repeated(PureDP(1.0), 2),
        "dpsgd": DPSGD(1.0, 0.5, 2),
    }
    for type_name, mechanism in examples.items():
        assert mechanism.to_dict()["type"] == type_name
        assert isinstance(mechanism, ALL_TYPES[type_name])


@pytest.mark.parametrize(
    "mechanism",
    [
        RandomAllocation(Gaussian(1.0), 10),
        TruncatedPoisson(Gaussian(1.0), 0.01, 100, 1000),
        GaussianMixture(1.0, [0.0, 1.0], [0.5, 0.5]),
        DPSGD(1.0, steps=20, sampler="balls-in-bins", steps_per_epoch=10),
    ],
)
def test_add_remove_only_samplers_are_refused_under_replace_in_one_line(mechanism):
    with pytest.raises(InvalidParameterError, match="must be 'add_remove' for") as error:
        validate_neighbouring(mechanism, "replace")
    assert "\n" not in str(error.value)
    with pytest.raises(InvalidParameterError, match="must be 'add_remove' for"):
        loads(dumps(Pipeline(mechanism, Neighbouring.REPLACE)))
