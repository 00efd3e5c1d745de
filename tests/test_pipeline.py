"""SynthesisPipeline: sample decodes through the encoders."""

import warnings

import numpy as np
import pandas as pd
import pytest
from _dummy import BootstrapSynthesizer
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.preprocessing import StandardScaler

from skdp_synth import (
    CovarianceLossMicroaggregator,
    ProjectedGaussianRelease,
    SynthesisPipeline,
    make_synthesis_pipeline,
)
from skdp_synth._sklearn_compat import InvalidParameterError
from skdp_synth.blocks import Blocks
from skdp_synth.exceptions import CoarseDomainWarning, PrivacyLeakWarning
from skdp_synth.preprocessing import BooleanEncoder


def _table(n=60):
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "colour": rng.choice(["red", "green"], n),
            "age": rng.integers(18, 90, n),
        }
    )


def test_sample_returns_the_input_schema():
    df = _table()
    enc = BooleanEncoder(
        categories={"colour": ["red", "green", "blue"]},
        bin_edges={"age": [0, 30, 60, 120]},
        random_state=0,
    )
    pipe = make_synthesis_pipeline(
        enc, BootstrapSynthesizer(domain="boolean", random_state=0)
    )
    assert isinstance(pipe, SynthesisPipeline)
    pipe.fit(df)
    out = pipe.sample(25)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == ["colour", "age"]
    assert out.dtypes.tolist() == df.dtypes.tolist()
    assert len(out) == 25
    assert out["colour"].isin(["red", "green", "blue"]).all()
    # reproducible with a fixed random_state
    pd.testing.assert_frame_equal(out, pipe.sample(25))


def test_sample_inverts_numeric_preprocessing():
    rng = np.random.default_rng(1)
    X = rng.uniform(10, 20, size=(80, 3))
    pipe = make_synthesis_pipeline(
        StandardScaler(), BootstrapSynthesizer(domain="box", random_state=0)
    ).fit(X)
    out = pipe.sample(80)
    # a bootstrap of the scaled rows, unscaled: rows of X
    assert all(any(np.allclose(row, x) for x in X) for row in out[:10])


def test_steps_without_inverse_are_reported():
    from sklearn.preprocessing import Binarizer

    pipe = make_synthesis_pipeline(
        Binarizer(), BootstrapSynthesizer(domain="boolean", random_state=0)
    ).fit(np.random.default_rng(0).normal(size=(20, 2)))
    with pytest.raises(TypeError, match="inverse_transform"):
        pipe.sample(3)


# ------------------------------------------------------ blocks hand-over
def _encoder():
    return BooleanEncoder(
        categories={"colour": ["red", "green", "blue"]},
        bin_edges={"age": [0, 30, 60, 120]},
        random_state=0,
    )


def test_the_synthesizer_gets_the_encoders_blocks():
    df = _table()
    pipe = make_synthesis_pipeline(
        _encoder(), BootstrapSynthesizer(domain="boolean", random_state=0)
    ).fit(df)
    enc, synth = pipe[0], pipe[-1]
    assert synth.blocks_ == enc.blocks_
    assert [b.kind for b in synth.blocks_.blocks] == ["onehot", "thermometer"]


def test_a_bare_synthesizer_treats_every_bit_as_binary():
    X = _encoder().fit_transform(_table())
    synth = BootstrapSynthesizer(domain="boolean").fit(X)
    assert synth.blocks_ == Blocks.binary(X.shape[1])
    micro = CovarianceLossMicroaggregator(domain="boolean", k=6).fit(X)
    assert micro.blocks_.is_all_binary


def test_an_explicit_blocks_parameter_wins_and_a_conflict_raises():
    df = _table()
    enc = _encoder().fit(df)
    X = enc.transform(df)
    # bare matrix, explicit blocks
    micro = CovarianceLossMicroaggregator(
        domain="boolean", k=6, blocks=enc.blocks_.to_dict()["blocks"]
    ).fit(X)
    assert micro.blocks_ == enc.blocks_
    # in a pipeline: equal blocks are fine, None means binary, others conflict
    for blocks, expected in [(enc.blocks_, enc.blocks_), (None, Blocks.binary(5))]:
        pipe = make_synthesis_pipeline(
            _encoder(), CovarianceLossMicroaggregator(domain="boolean", blocks=blocks)
        ).fit(df)
        assert pipe[-1].blocks_ == expected
    other = Blocks.from_spec(
        [{"name": "c", "kind": "onehot", "width": 3}]
        + [{"name": f"b{j}", "kind": "binary", "width": 1} for j in range(2)]
    )
    est = CovarianceLossMicroaggregator(domain="boolean", blocks=other)
    with pytest.raises(ValueError, match="differ"):
        make_synthesis_pipeline(_encoder(), est).fit(df)
    assert not hasattr(est, "blocks_")  # the failed fit left it unfitted
    with pytest.raises(ValueError, match="add up to 3 bits, but the data has 5"):
        CovarianceLossMicroaggregator(domain="boolean", blocks=other.blocks[:1]).fit(X)


def test_training_rows_must_be_valid_for_the_blocks():
    blocks = [{"name": "c", "kind": "onehot", "width": 2}]
    X = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])
    est = CovarianceLossMicroaggregator(domain="boolean", k=2, blocks=blocks)
    # the count of invalid rows is not shown (it is the exact count of a
    # cell the caller chose through `blocks`)
    with pytest.raises(ValueError, match=r"training rows are not valid.*\['c'\]"):
        est.fit(X)
    est.fit(X[:2])
    before = est.blocks_
    with pytest.raises(ValueError, match="not valid"):
        est.fit(X)
    assert est.blocks_ is before  # a failed fit changes nothing
    with pytest.raises(InvalidParameterError, match="blocks"):
        CovarianceLossMicroaggregator(blocks="onehot").fit(X[:2])


def test_fit_params_are_routed_and_the_fit_keyword_can_opt_out():
    df = _table()
    pipe = make_synthesis_pipeline(
        _encoder(), BootstrapSynthesizer(domain="boolean", random_state=0)
    )
    pipe.fit(df, bootstrapsynthesizer__blocks=None)
    assert pipe[-1].blocks_.is_all_binary
    with pytest.raises(ValueError, match="does not accept the bogus parameter"):
        pipe.fit(df, bogus=1)
    with pytest.raises(TypeError, match="colour"):
        # an unknown fit parameter of a head step reaches that step
        pipe.fit(df, booleanencoder__colour=1)


def test_pipeline_behaviour_is_kept(tmp_path):
    df = _table()
    synth = CovarianceLossMicroaggregator(domain="boolean", k=6, random_state=0)
    # fit_transform = fit, then the synthesizer's transform of the encoded rows
    pipe = make_synthesis_pipeline(_encoder(), synth)
    Z = pipe.fit_transform(df)
    assert pipe[-1].blocks_ == pipe[0].blocks_
    np.testing.assert_array_equal(Z, pipe.transform(df))
    assert np.isfinite(pipe.fit(df).score(df))
    # passthrough steps, and memory (cached clones are copied back)
    pipe = make_synthesis_pipeline(
        "passthrough", _encoder(), synth, memory=str(tmp_path)
    ).fit(df)
    assert pipe[-1].blocks_ == pipe[1].blocks_ and hasattr(pipe[1], "blocks_")
    pipe.fit(df)  # from the cache
    assert hasattr(pipe[1], "blocks_") and pipe[-1].blocks_ == pipe[1].blocks_
    assert pipe.sample(10)["colour"].isin(["red", "green", "blue"]).all()
    # a passthrough last step
    enc_only = make_synthesis_pipeline(_encoder(), "passthrough")
    assert enc_only.fit(df) is enc_only
    np.testing.assert_array_equal(
        enc_only.fit_transform(df), _encoder().fit_transform(df)
    )


def test_grid_search_over_the_pipeline():
    from sklearn.model_selection import GridSearchCV

    df = _table(120)
    pipe = make_synthesis_pipeline(
        _encoder(),
        CovarianceLossMicroaggregator(domain="boolean", random_state=0),
    )
    search = GridSearchCV(
        pipe, {"covariancelossmicroaggregator__k": [4, 12]}, cv=2
    ).fit(df)
    best = search.best_estimator_
    assert best[-1].blocks_ == best[0].blocks_
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()


class _SlowBootstrap(BootstrapSynthesizer):
    """A bootstrap whose fit takes at least ``_SLEEP`` seconds."""

    def _fit(self, U, plan, source):
        import time

        time.sleep(_SLEEP)
        super()._fit(U, plan, source)


_SLEEP = 0.25


@pytest.mark.parametrize("method", ["fit", "fit_transform"])
def test_verbose_times_every_step_including_the_synthesizer(capsys, method):
    # the log said "(step 2 of 2) Processing <synthesizer>, total=0.0s" --
    # the timing of a placeholder, never of the real fit.
    # time.sleep blocks for at least _SLEEP, so the logged total is at least
    # _SLEEP less sklearn's rounding to 0.1 s (0.05), whatever the load.
    enc = BooleanEncoder(categories={"colour": ["red", "green"]}, random_state=0)
    pipe = make_synthesis_pipeline(
        enc, _SlowBootstrap(domain="boolean", random_state=0), verbose=True
    )
    getattr(pipe, method)(_table()[["colour"]])
    lines = [line for line in capsys.readouterr().out.splitlines() if line]
    assert len(lines) == 2, lines
    assert "(step 1 of 2) Processing booleanencoder" in lines[0]
    assert "(step 2 of 2) Processing _slowbootstrap" in lines[1]
    total = float(lines[1].rsplit("total=", 1)[1].rstrip("s"))
    assert total >= _SLEEP - 0.05


# -------------------------------------------- the one budget of a pipeline
def _mixed_frame(n=600, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "sector": rng.choice(["public", "private"], n),
        }
    )


def test_pipeline_charges_the_whole_epsilon_to_the_accountant():
    from skdp_synth import BudgetAccountant, ProjectedGaussianRelease

    acc = BudgetAccountant(epsilon=2.0, delta=1e-5, neighbouring="add-remove-one")
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories={"sector": ["public", "private"]}, random_state=0),
        ProjectedGaussianRelease(
            epsilon=1.0, delta=1e-6, accountant=acc, random_state=0
        ),
    ).fit(_mixed_frame())
    # the encoder's private domains (a fifth) and the release (the rest)
    assert pipe.epsilon_ == 1.0
    assert acc.total_spent[0] == pytest.approx(1.0, rel=1e-12)
    assert len(acc.spent) == 2
    # no undeclared categorical column: the encoder needs no delta, the
    # release keeps all of it
    assert pipe[0].delta_ == 0.0 and pipe[-1].delta_ == 1e-6
    assert pipe.delta_ == 1e-6


def test_pipeline_refuses_before_any_step_reads_a_value():
    from skdp_synth import BudgetAccountant, ProjectedGaussianRelease
    from skdp_synth.exceptions import BudgetError

    acc = BudgetAccountant(epsilon=0.5, delta=1e-5, neighbouring="add-remove-one")
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories={"sector": ["public", "private"]}, random_state=0),
        ProjectedGaussianRelease(epsilon=1.0, accountant=acc, random_state=0),
    )
    bad = _mixed_frame().assign(sector="unknown")  # a value the encoder refuses
    with pytest.raises(BudgetError):  # the budget, not the value
        pipe.fit(bad)
    assert acc.spent == []


def test_too_few_attributes_says_why_and_what_helps():
    """A column of one bin has no bits and is no attribute; when private
    domains collapse (iris, 150 rows, at epsilon=1 on some seeds) the release
    had only ``d=2 exceeds the number of attributes (1)`` to say. The error
    now names the cause and the remedies, with no value of the data."""
    df = pd.DataFrame({"a": ["x", "y"] * 20, "v": np.linspace(1.0, 9.0, 40)})
    enc = BooleanEncoder(categories={"a": ["x", "y"]}, bin_edges={"v": [0.0, 10.0]})
    release = ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0)
    pipe = make_synthesis_pipeline(enc, release)
    with pytest.raises(ValueError, match="single level or bin carries no attribute"):
        pipe.fit(df)
    with pytest.raises(ValueError, match=r"bounds=, bin_edges=, categories=\)"):
        pipe.fit(df)


@pytest.mark.parametrize(
    "params, name, shown",
    [
        ({"epsilon": -1.0}, "epsilon", "-1.0"),
        ({"epsilon": 0.0}, "epsilon", "0.0"),
        ({"epsilon": 1.0, "delta": 0.0}, "delta", "0.0"),
    ],
)
def test_an_invalid_budget_is_reported_on_the_step_it_was_written_on(
    params, name, shown
):
    """The pipeline splits ε between the encoder and the synthesizer; an
    invalid ε or δ must be reported as written, on the synthesizer, not as
    the encoder's share (``BooleanEncoder ... Got -0.4``) -- and before the
    encoder reads a value or warns about its domains."""
    df = pd.DataFrame({"a": np.arange(200.0), "g": ["x", "y"] * 100})
    pipe = make_synthesis_pipeline(
        BooleanEncoder(), ProjectedGaussianRelease(random_state=0, **params)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no domain warning comes first
        with pytest.raises(InvalidParameterError) as err:
            pipe.fit(df)
    message = str(err.value)
    assert f"'{name}' parameter of ProjectedGaussianRelease" in message
    assert f"Got {shown} instead" in message
    assert not hasattr(pipe[0], "specs_")


def test_sample_before_fit_says_not_fitted():
    pipe = make_synthesis_pipeline(
        BooleanEncoder(), ProjectedGaussianRelease(epsilon=1.0)
    )
    with pytest.raises(NotFittedError, match="ProjectedGaussianRelease"):
        pipe.sample(10)


def test_a_numpy_array_gets_the_private_domains_a_dataframe_gets():
    """An array's schema is its shape and dtype (public), so the pipeline
    pays its domains from the budget as for a DataFrame of that dtype: no
    domain learned without privacy, the recorded ε is the one written, and
    a float array comes back float (it was an object array, its domains
    learned from the data with a PrivacyLeakWarning)."""
    from skdp_synth.exceptions import PrivacyLeakWarning

    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(50, 10, 3000), rng.lognormal(3, 1, 3000)])
    frame = pd.DataFrame(X)
    fits = {}
    for label, data in (("array", X), ("frame", frame)):
        pipe = make_synthesis_pipeline(
            BooleanEncoder(random_state=0),
            ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
        )
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyLeakWarning)
            pipe.fit(data)
        assert pipe.epsilon_ == pytest.approx(1.0, rel=1e-12)
        assert pipe[0].inferred_ == []
        assert list(pipe[0].private_domains_) == [0, 1]
        fits[label] = pipe
    out = fits["array"].sample(100, random_state=0)
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    assert out.shape == (100, 2)
    # the same domains (same noise, same schema) as the DataFrame's
    for a, b in zip(fits["array"][0].specs_, fits["frame"][0].specs_):
        assert a.levels == b.levels
    # an object array: every column's levels are discovered (δ), none inferred
    obj = np.column_stack([rng.choice(["a", "b"], 3000), rng.choice(["x", "y"], 3000)])
    pipe = make_synthesis_pipeline(
        BooleanEncoder(random_state=0),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        pipe.fit(obj.astype(object))
    assert pipe[0].inferred_ == [] and pipe.delta_ == pytest.approx(1e-6)
    assert pipe.sample(10, random_state=0).dtype == object


def test_an_encoders_own_epsilon_is_checked_and_charged():
    """An encoder given its own ``epsilon`` spends it on its domains: the
    pipeline checks that and the last step's together before any value is
    read, and charges both (the encoder's 0.5 was never charged, so a
    budget of 1 paid for 1.5)."""
    from skdp_synth import BudgetAccountant
    from skdp_synth.exceptions import BudgetError

    def pipe(acc):
        return make_synthesis_pipeline(
            BooleanEncoder(
                categories={"sector": ["public", "private"]},
                epsilon=0.5,
                random_state=0,
            ),
            ProjectedGaussianRelease(
                epsilon=1.0, delta=1e-6, accountant=acc, random_state=0
            ),
        )

    small = BudgetAccountant(epsilon=1.0, delta=1e-6, neighbouring="add-remove-one")
    with pytest.raises(BudgetError):
        pipe(small).fit(_mixed_frame().assign(sector="unknown"))  # not the value
    assert small.spent == []
    big = BudgetAccountant(epsilon=2.0, delta=1e-6, neighbouring="add-remove-one")
    fitted = pipe(big).fit(_mixed_frame())
    assert fitted.epsilon_ == pytest.approx(1.5)
    assert big.total_spent == pytest.approx((1.5, 1e-6))


@pytest.mark.parametrize("bad", [False, True])
def test_every_domain_declared_the_budget_is_still_checked_first(bad):
    """With every domain declared the encoder learns nothing, but it reads
    (and refuses) the values: the pipeline refuses an unaffordable fit
    before that, so the error cannot depend on the data."""
    from skdp_synth import BudgetAccountant
    from skdp_synth.exceptions import BudgetError

    acc = BudgetAccountant(epsilon=1e-3, delta=1e-9, neighbouring="add-remove-one")
    df = _mixed_frame()
    if bad:
        df.loc[0, "sector"] = "a level nobody declared"
    pipe = make_synthesis_pipeline(
        BooleanEncoder(
            categories={"sector": ["public", "private"]},
            bin_edges={"age": [18, 40, 60, 80]},
        ),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, accountant=acc),
    )
    with pytest.raises(BudgetError):
        pipe.fit(df)
    assert acc.spent == []


def test_fitting_through_the_pipeline_does_not_warn_about_clipped_training_rows():
    """Clipping the training rows to public ``bounds`` is part of the
    mechanism: ``fit`` does not warn, and neither may the pipeline's
    ``fit_transform`` of the encoder -- the warning's presence told whether
    some training row lay outside the bounds. ``transform`` of rows still
    warns, with the same bits."""
    df = _mixed_frame()
    outside = df.copy()
    outside.loc[0, "age"] = 150
    for data in (df, outside):
        pipe = make_synthesis_pipeline(
            BooleanEncoder(
                categories={"sector": ["public", "private"]},
                bounds={"age": (0, 120)},
                random_state=0,
            ),
            ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
        )
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            pipe.fit(data)
            bits = pipe[0].fit_transform(data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            np.testing.assert_array_equal(bits, pipe[0].transform(data))
    with pytest.warns(UserWarning, match="outside their bounds"):
        pipe[0].transform(outside)


def _budgeted_pipe(acc, *head, encoder_eps=0.5, neighbouring="add-remove-one"):
    return SynthesisPipeline(
        [
            *[(f"pre{i}", step) for i, step in enumerate(head)],
            (
                "encode",
                BooleanEncoder(
                    categories={"sector": ["public", "private"]},
                    epsilon=encoder_eps,
                    neighbouring=neighbouring,
                    random_state=0,
                ),
            ),
            (
                "release",
                ProjectedGaussianRelease(
                    epsilon=1.0, delta=1e-6, accountant=acc, random_state=0
                ),
            ),
        ]
    )


def test_metadata_routing_keeps_the_budget_handling():
    """With scikit-learn's metadata routing on, ``fit`` used the plain
    ``Pipeline.fit``: no check before reading, no split, the encoder's ε not
    charged -- a budget of 1 paid for 1.5."""
    import sklearn

    from skdp_synth import BudgetAccountant
    from skdp_synth.exceptions import BudgetError

    for method in ("fit", "fit_transform"):
        small = BudgetAccountant(epsilon=1.0, delta=1e-5, neighbouring="add-remove-one")
        big = BudgetAccountant(epsilon=2.0, delta=1e-5, neighbouring="add-remove-one")
        with sklearn.config_context(enable_metadata_routing=True):
            with pytest.raises(BudgetError):
                getattr(_budgeted_pipe(small), method)(_mixed_frame())
            pipe = _budgeted_pipe(big)
            getattr(pipe, method)(_mixed_frame())
        assert small.spent == []
        assert big.total_spent == pytest.approx((1.5, 1e-6))
        assert pipe.epsilon_ == pytest.approx(1.5)


@pytest.mark.parametrize("before", ["transformer", "passthrough"])
def test_an_encoder_with_a_budget_after_another_step(before):
    """Only the first step's budget was checked and charged: an encoder after
    a ``FunctionTransformer`` overspent the accountant by its ε. It is
    refused before any value is read; a ``"passthrough"`` before it changes
    nothing and is looked through."""
    from sklearn.preprocessing import FunctionTransformer

    from skdp_synth import BudgetAccountant
    from skdp_synth.exceptions import BudgetError

    acc = BudgetAccountant(epsilon=1.0, delta=1e-5, neighbouring="add-remove-one")
    if before == "transformer":
        head = FunctionTransformer(lambda d: d.assign(age=d["age"]))
        with pytest.raises(ValueError, match="is not the pipeline's first step"):
            _budgeted_pipe(acc, head).fit(_mixed_frame())
    else:
        with pytest.raises(BudgetError):  # 0.5 + 1 > 1, checked before reading
            _budgeted_pipe(acc, "passthrough").fit(_mixed_frame())
    assert acc.spent == []


def test_an_encoder_whose_relation_differs_is_refused_before_reading():
    """An encoder's own ``neighbouring`` must be the last step's: the
    accountant refused the mismatch only after both steps had read the data
    (and without one, the pipeline silently recorded no guarantee)."""
    from skdp_synth import BudgetAccountant

    acc = BudgetAccountant(epsilon=5.0, delta=1e-5, neighbouring="replace-one")
    pipe = _budgeted_pipe(acc, neighbouring="add-remove-one")
    pipe.steps[-1][1].set_params(neighbouring="replace-one")
    with pytest.raises(ValueError, match="do not compose"):
        pipe.fit(_mixed_frame())
    assert acc.spent == []
    assert not hasattr(pipe[0], "specs_")  # the encoder read nothing


def test_a_list_is_refused_when_a_domain_would_be_learned():
    """A list has no public column types (they are inferred from its
    values), so the check before reading could not see that the encoder
    would learn a domain: it was refused after PrivTree ran."""
    from skdp_synth import BudgetAccountant

    acc = BudgetAccountant(epsilon=5.0, delta=1e-5, neighbouring="add-remove-one")
    rows = _mixed_frame().to_numpy().tolist()
    pipe = SynthesisPipeline(
        [
            ("encode", BooleanEncoder(epsilon=0.5, delta=1e-7, random_state=0)),
            (
                "release",
                ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, accountant=acc),
            ),
        ]
    )
    with pytest.raises(TypeError, match="pass a pandas DataFrame or a NumPy array"):
        pipe.fit(rows)
    assert acc.spent == []


def test_an_encoder_with_a_budget_refuses_a_list_on_its_own_too():
    """Fitted alone with a budget, the encoder took a list's column types
    from its values: one added ``["n/a", "x"]`` row turned a numeric column
    (PrivTree bins) into a categorical one (level discovery), another bit
    layout under the same stated guarantee, with no warning: neighbouring
    tables gave different layouts. It refuses as the pipeline does;
    with ``epsilon="auto"`` (no guarantee) a list still fits."""
    rng = np.random.default_rng(0)
    rows = [
        [int(v), str(c)]
        for v, c in zip(rng.integers(0, 50, 300), rng.choice(list("xyz"), 300))
    ]
    for data in (rows, rows + [["n/a", "x"]]):
        enc = BooleanEncoder(epsilon=1.0, delta=1e-6, random_state=0)
        with pytest.raises(TypeError, match="pass a pandas DataFrame or a NumPy array"):
            enc.fit(data)
        assert not hasattr(enc, "specs_")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        enc = BooleanEncoder(random_state=0).fit(rows)
        # epsilon=None (learned without privacy, warned) fits a list as before
        # (an earlier form of the guard wrongly refused it too)
        none = BooleanEncoder(epsilon=None, random_state=0).fit(rows)
    assert len(enc.specs_) == 2 and len(none.specs_) == 2


def test_the_encoders_domains_are_charged_even_when_the_last_step_fails():
    """The last step can refuse the structure of the encoder's private
    domains (one bin left: ``d`` exceeds the attributes): charged only on
    success, such fits could be repeated for free and their failure rate
    told a constant column from a spread one. Here ``d=3`` on two columns
    fails after the encoder."""
    from skdp_synth import BudgetAccountant

    acc = BudgetAccountant(epsilon=5.0, delta=1e-5, neighbouring="add-remove-one")
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories={"sector": ["public", "private"]}, random_state=0),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, accountant=acc, d=3),
    )
    with pytest.raises(ValueError, match="exceeds the number of attributes"):
        pipe.fit(_mixed_frame())
    # domain_share "auto": a fifth of ε for the one learned domain (age)
    assert acc.total_spent == pytest.approx((0.2, 0.0))
    assert not hasattr(pipe, "epsilon_")  # the pipeline itself rolled back


def test_the_last_steps_release_states_the_encoders_guarantee_too():
    """``pipe[-1].to_release()`` holds the encoder's private domains (bit
    names name the private bin edges, the blocks its levels): its guarantee
    is the composition, 1.0, not the last step's own 0.8."""
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories={"sector": ["public", "private"]}, random_state=0),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
    ).fit(_mixed_frame())
    release = pipe.steps[-1][1].to_release()
    assert pipe.steps[-1][1].epsilon_ == pytest.approx(0.8)
    assert release.guarantee.epsilon == pytest.approx(1.0) == pipe.epsilon_
    assert release.guarantee.delta == pytest.approx(1e-6)
    # refitted on its own, the step's release is its own again
    bits = pipe[0].transform(_mixed_frame())
    alone = ProjectedGaussianRelease(epsilon=0.5, delta=1e-6, random_state=0)
    pipe.steps[-1] = ("release", alone)
    assert alone.fit(bits).to_release().guarantee.epsilon == pytest.approx(0.5)


def test_the_fits_clipping_is_not_kept_on_the_encoder():
    """``fit`` is silent about clipping to public bounds, but kept the list
    of clipped columns on the encoder (and in its pickle): whether a
    training value lay outside the bounds."""
    import pickle

    df = _mixed_frame()
    df.loc[0, "age"] = 150
    enc = BooleanEncoder(
        categories={"sector": ["public", "private"]},
        bounds={"age": (0, 120)},
        epsilon=1.0,
        random_state=0,
    ).fit(df)
    assert "clipped" not in " ".join(vars(enc))
    assert "clipped" not in " ".join(vars(pickle.loads(pickle.dumps(enc))))


def test_a_budgeted_encoder_nested_in_a_step_is_refused():
    """Inside a nested ``Pipeline`` an encoder's ε was neither checked nor
    charged nor in the guarantee (a budget of 1 paid for 6): refused before
    any value is read."""
    from sklearn.pipeline import Pipeline

    from skdp_synth import BudgetAccountant

    acc = BudgetAccountant(epsilon=1.0, delta=1e-6, neighbouring="add-remove-one")
    inner = Pipeline([("enc", BooleanEncoder(epsilon=5.0, random_state=0))])
    pipe = make_synthesis_pipeline(
        inner, ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, accountant=acc)
    )
    with pytest.raises(ValueError, match="inside another step"):
        pipe.fit(_mixed_frame())
    assert acc.spent == [] and not hasattr(inner[0], "specs_")


def test_a_non_private_last_step_gives_no_guarantee_and_no_copula():
    """Ending in the microaggregator ((n/k)-anonymity, not DP) the pipeline
    claimed its encoder's ε for the rows, and fitted the copula from the
    exact group means: now no guarantee, a warning, no copula."""
    from skdp_synth.exceptions import PrivacyLeakWarning

    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories={"sector": ["public", "private"]}, epsilon=1.0),
        CovarianceLossMicroaggregator(k=20, random_state=0),
    )
    with pytest.warns(PrivacyLeakWarning, match="not differentially private"):
        pipe.fit(_mixed_frame())
    assert pipe.privacy_guarantee_ is None
    assert pipe.epsilon_ == 1.0  # what the private domains spent
    assert pipe[0].copula_ is None


def test_routing_charges_the_encoder_when_the_last_step_fails():
    """With metadata routing the encoder was charged only when the whole fit
    succeeded: a last step refusing the encoder's output (PrivateSampler:
    its ε pays for no row at the released width) could be retried for
    free. Charged with or without routing."""
    import sklearn

    from skdp_synth import BudgetAccountant, PrivateSampler

    for routing in (False, True):
        acc = BudgetAccountant(epsilon=10.0)
        pipe = make_synthesis_pipeline(
            BooleanEncoder(
                categories={"sector": ["public", "private"]},
                epsilon=1.0,
                neighbouring="replace-one",
                random_state=0,
            ),
            PrivateSampler(epsilon=0.5, accountant=acc, random_state=0),
        )
        with sklearn.config_context(enable_metadata_routing=routing):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the domains' own warnings
                with pytest.raises(ValueError, match="does not pay for a single row"):
                    pipe.fit(_mixed_frame(n=400))
        assert acc.total_spent == pytest.approx((1.0, 0.0))


def test_a_declared_refusal_comes_before_the_private_domains():
    """An undeclared level of a declared column was refused only after the
    private numeric domains had been drawn and warned about (their
    ``CoarseDomainWarning`` came first): now before any noise."""
    df = _mixed_frame(n=60)
    df.loc[0, "sector"] = "a level nobody declared"
    enc = BooleanEncoder(
        categories={"sector": ["public", "private"]}, epsilon=0.01, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no CoarseDomainWarning before it
        with pytest.raises(ValueError, match="not among its declared categories"):
            enc.fit(df)
    assert not hasattr(enc, "specs_")


def test_a_refit_encoder_drops_its_old_copula():
    df = _mixed_frame()
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories={"sector": ["public", "private"]}, random_state=0),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
    ).fit(df.assign(other=df["age"] * 2))
    assert pipe[0].copula_ is not None
    pipe[0].set_params(epsilon=1.0).fit(df)
    assert not hasattr(pipe[0], "copula_")


def test_the_pipelines_score_compares_candidates_in_the_tables_own_schema():
    """The last step's score read the rows in each fit's own private bins, so
    candidates of a search did not compare (GridSearchCV chose ε = 0.5 over
    2 on credit). A decoding
    pipeline now scores as ``make_marginal_scorer(kind="tv")`` exactly, and
    the search prefers the larger budget (fixed seeds)."""
    from sklearn.model_selection import GridSearchCV, KFold

    from skdp_synth.metrics import make_marginal_scorer

    rng = np.random.default_rng(0)
    n = 3000
    age = rng.integers(18, 80, n)
    df = pd.DataFrame(
        {
            "age": age,
            "wage": np.round(age * 20 + rng.normal(0, 200, n), 2),
            "sector": rng.choice(["public", "private"], n),
        }
    )
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories={"sector": ["public", "private"]}, random_state=0),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
    ).fit(df[:2000])
    held = df[2000:]
    assert pipe.score(held) == make_marginal_scorer(d=2, kind="tv")(pipe, held)
    from skdp_synth.exceptions import CoarseDomainWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoarseDomainWarning)  # the small ε's
        search = GridSearchCV(
            pipe,
            {"projectedgaussianrelease__epsilon": [0.3, 4.0]},
            cv=KFold(3, shuffle=True, random_state=0),
        ).fit(df)
    assert search.best_params_ == {"projectedgaussianrelease__epsilon": 4.0}


def test_the_pipelines_score_matches_columns_by_name():
    """The sampled rows were given the held-out table's column names by
    position: the same rows with their columns in another order scored
    -0.97 against -0.14, silently, and a missing column raised pandas'
    "Length mismatch". Columns are now matched by name; a column that one
    side lacks is refused by name."""
    rng = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame(
        {
            "x": rng.normal(50, 10, n),
            "g": rng.choice(list("abc"), n),
            "k": rng.integers(0, 10, n),
        }
    )
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories={"g": list("abc")}, random_state=0),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
    ).fit(df[:2000])
    held = df[2000:]
    # the same rows sampled (a fixed seed), the same cells scored: equal
    assert pipe.score(held[["k", "g", "x"]]) == pytest.approx(
        pipe.score(held), rel=1e-12
    )
    with pytest.raises(ValueError, match=r"not in the scored table \['k'\]"):
        pipe.score(held.drop(columns="k"))
    with pytest.raises(ValueError, match=r"not sampled \['extra'\]"):
        pipe.score(held.assign(extra=1))


def test_a_domain_learned_without_privacy_is_outside_the_recorded_guarantee(tmp_path):
    """A pipeline whose encoder learned a domain from the data (no budget for
    it: the damped release has no δ to discover levels with) recorded
    ``ε = 1`` as if it covered the rows, while a level seen in one row came
    back in them; only the fit's warning said otherwise. The guarantee, and
    the release file's, now name what they do not cover."""
    from skdp_synth import DampedPrivateSynthesizer
    from skdp_synth.release import Release

    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {"city": rng.choice(list("abc"), 3000), "x": rng.integers(0, 5, 3000)}
    )
    X.loc[0, "city"] = "UNIQUE_CITY"
    with pytest.warns(PrivacyLeakWarning, match="city"):
        pipe = make_synthesis_pipeline(
            BooleanEncoder(bin_edges={"x": [0, 2, 5]}),
            DampedPrivateSynthesizer(epsilon=1.0, random_state=0),
        ).fit(X)
    gap = ("the domain of column 'city' (read from the data)",)
    assert pipe.privacy_guarantee_.not_covered == gap
    assert pipe.epsilon_ == 1.0  # what was spent, as before
    # declared, nothing is left out
    declared = make_synthesis_pipeline(
        BooleanEncoder(
            categories={"city": ["a", "b", "c", "UNIQUE_CITY"]},
            bin_edges={"x": [0, 2, 5]},
        ),
        DampedPrivateSynthesizer(epsilon=1.0, random_state=0),
    ).fit(X)
    assert declared.privacy_guarantee_.not_covered == ()
    release = make_synthesis_pipeline(
        BooleanEncoder(bin_edges={"x": [0, 2, 5]}),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
        domain_share=None,
    )
    with pytest.warns(PrivacyLeakWarning):
        release.fit(X)
    with pytest.warns(PrivacyLeakWarning, match="not covered by its guarantee"):
        saved = release.to_release()
    assert saved.guarantee.not_covered == gap
    saved.save(tmp_path / "release.npz")
    assert Release.load(tmp_path / "release.npz").guarantee.not_covered == gap


def test_an_undeclared_bool_column_is_public_in_a_pipeline():
    """With every other column declared the pipeline gives the encoder no
    budget, and a bool column was learned as a numeric range from the
    data with a PrivacyLeakWarning; its domain is its dtype's."""
    df = _mixed_frame().assign(flag=lambda d: d["age"] > 50)
    pipe = make_synthesis_pipeline(
        BooleanEncoder(
            categories={"sector": ["public", "private"]},
            bin_edges={"age": [0, 40, 60, 100]},
            random_state=0,
        ),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        pipe.fit(df)
    assert pipe[0].inferred_ == []
    rows = pipe.sample(50, random_state=0)
    assert rows["flag"].dtype == bool


def test_no_share_of_epsilon_is_split_off_for_levels_that_need_a_delta():
    """An ε-DP last step gives the encoder no δ, so an undeclared
    categorical column cannot be discovered privately; the pipeline still
    split off a share of ε for it, spent nothing on it, and recorded 0.8 of
    the 1 written."""
    from skdp_synth import DampedPrivateSynthesizer

    df = _mixed_frame()
    pipe = make_synthesis_pipeline(
        BooleanEncoder(bin_edges={"age": [0, 40, 60, 100]}, random_state=0),
        DampedPrivateSynthesizer(epsilon=1.0, random_state=0),
    )
    with pytest.warns(PrivacyLeakWarning, match="sector"):
        pipe.fit(df)
    assert pipe.epsilon_ == 1.0 and pipe[-1].epsilon_ == 1.0


def test_sample_with_a_seed_gives_the_same_rows_with_an_unseeded_encoder():
    """``pipe.sample(n, random_state=1)`` decoded numbers with the encoder's
    own ``random_state``: left unseeded (as the README advises for a
    release), two identical calls gave other ages. The seed now reaches the
    decoding too; ``None`` still draws afresh."""
    from skdp_synth import ProjectedGaussianRelease
    from skdp_synth.exceptions import CoarseDomainWarning

    frame = _mixed_frame().assign(income=np.random.default_rng(1).lognormal(8, 1, 600))
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories={"sector": ["public", "private"]}),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
    )
    # the unseeded encoder draws its private domains afresh on each run: in
    # 2 of 150 runs one of them came back coarse and said so (a warning, an
    # error under this suite's filterwarnings), which is not what this test
    # is about
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoarseDomainWarning)
        pipe.fit(frame)
    a, b = pipe.sample(300, random_state=1), pipe.sample(300, random_state=1)
    pd.testing.assert_frame_equal(a, b)
    c = pipe.sample(300, random_state=2)
    assert not a["income"].equals(c["income"])
    # a Generator: the same state gives the same rows
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    pd.testing.assert_frame_equal(
        pipe.sample(300, random_state=g1), pipe.sample(300, random_state=g2)
    )
    # the decoding steps are not changed by a seeded call
    assert pipe[0].random_state is None


def test_a_table_of_counts_learns_domains_from_records():
    """With counts (``sample_weight``; the CLI's ``--counts``) the encoder
    learned its private domains from the table's lines, not its records: a
    species on 72 lines of 35,549 records was never found, and every
    synthetic row came back "other". The private domains of a table of
    counts are those of the expanded records -- the same integers, the same
    noise draws, so the same guarantee -- exactly: levels, bin edges, noisy
    fine counts, missing levels."""
    from skdp_synth import BudgetAccountant, ProjectedGaussianRelease

    rng = np.random.default_rng(3)
    lines = pd.DataFrame(
        {
            "species": ["a", "b", "rare", "c", None, "zero", "b"],
            "age": [30.0, 41.0, 55.0, np.nan, 62.0, 70.0, 12.0],
            "kids": np.array([0, 1, 2, 0, 3, 9, 1], dtype=np.int64),
        }
    )
    counts = np.array([900, 400, 120, 60, 80, 0, 300])
    perm = rng.permutation(len(lines))
    lines, counts = lines.iloc[perm].reset_index(drop=True), counts[perm]
    # each line repeated in place: the levels come in the same order, so
    # their noise draws are the same
    expanded = lines.loc[np.repeat(np.arange(len(lines)), counts)].reset_index(
        drop=True
    )

    def encoder():
        return BooleanEncoder(epsilon=1.0, delta=1e-6, random_state=7)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoarseDomainWarning)
        a = encoder().fit(lines, sample_weight=counts)
        b = encoder().fit(expanded)
    for sa, sb in zip(a.specs_, b.specs_, strict=True):
        assert sa.name == sb.name and sa.kind == sb.kind
        assert list(sa.levels) == list(sb.levels)
        assert sa.missing == sb.missing
        if sa.kind == "numeric":
            np.testing.assert_array_equal(sa.fine.edges, sb.fine.edges)
            np.testing.assert_array_equal(sa.fine.counts, sb.fine.counts)
            assert sa.fine.missing_count == sb.fine.missing_count
    species = a.specs_[0]
    # the 120 records of "rare" on one line clear the threshold; "zero",
    # on a line of no record, is not observed (as in the expanded table)
    assert "rare" in species.levels and "zero" not in species.levels
    assert a.epsilon_ == 1.0 and a.delta_ == 1e-6

    # the pipeline hands the counts to the encoder; its domains are charged
    # (with a share of ε = 1 for three columns, "rare" needs more records)
    acc = BudgetAccountant(epsilon=5.0, delta=1e-5, neighbouring="add-remove-one")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoarseDomainWarning)
        pipe = make_synthesis_pipeline(
            BooleanEncoder(random_state=0),
            ProjectedGaussianRelease(
                epsilon=1.0, delta=1e-6, random_state=0, accountant=acc
            ),
        ).fit(lines, sample_weight=10 * counts)
    assert "rare" in pipe[0].specs_[0].levels
    assert pipe.epsilon_ == 1.0
    assert acc.total_spent[0] == pytest.approx(1.0, abs=1e-12)


def test_a_text_cell_of_a_numeric_column_is_not_quoted():
    """A text cell in a column declared numeric (``bin_edges=``) was quoted
    by NumPy's "could not convert string to float: '<the cell>'", by the
    pipeline's fit and the encoder's transform, so a private value reached
    the message; the refusal names the column only."""
    from sklearn.base import clone

    from skdp_synth import ProjectedGaussianRelease

    rng = np.random.default_rng(0)
    m = pd.Series(np.round(rng.normal(50, 10, 300), 3)).astype(object)
    X = pd.DataFrame({"m": m, "c": rng.choice(["a", "b"], 300)})
    enc = BooleanEncoder(bin_edges={"m": [0, 50, 100]}, categories={"c": ["a", "b"]})
    fitted = enc.fit(X)
    X.loc[17, "m"] = "Jane Doe, 555-0199"
    pipe = make_synthesis_pipeline(
        clone(enc), ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0)
    )
    for call in (lambda: pipe.fit(X), lambda: fitted.transform(X)):
        with pytest.raises(ValueError, match="column 'm' is numeric") as info:
            call()
        assert "Jane" not in str(info.value) and "555" not in str(info.value)


def test_the_pipeline_records_rows_a_private_sampler_charges_after_fit():
    """``PrivateSampler`` charges rows drawn past those it paid for; the
    pipeline's ``epsilon_`` and ``privacy_guarantee_`` kept the fit's spend
    (58 recorded of 81 spent). They follow
    the accountant, as ``to_release()`` did."""
    from skdp_synth import BudgetAccountant, PrivateSampler

    rng = np.random.default_rng(3)
    X = pd.DataFrame(
        {"a": rng.choice(["x", "y"], 400), "b": rng.choice(["u", "v"], 400)}
    )
    acc = BudgetAccountant(epsilon=300, neighbouring="replace-one")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # epsilon > 10: PrivacyBudgetWarning
        pipe = make_synthesis_pipeline(
            BooleanEncoder(categories={"a": ["x", "y"], "b": ["u", "v"]}),
            PrivateSampler(epsilon=60, accountant=acc, random_state=0),
        ).fit(X)
        assert pipe.epsilon_ == pytest.approx(acc.total_spent[0], abs=1e-9)
        paid = pipe[-1].n_draws_paid_
        pipe.sample(paid + 10, random_state=1)
    spent = acc.total_spent[0]
    assert spent > pipe[-1].epsilon_per_draw_ * (paid + 10) - 1e-9
    assert pipe.epsilon_ == pytest.approx(spent, abs=1e-9)
    assert pipe.privacy_guarantee_.epsilon == pytest.approx(spent, abs=1e-9)
    assert pipe.to_release().guarantee.epsilon == pytest.approx(spent, abs=1e-9)
    # through the last step's own sample too (it stated 60 of 175 spent,
    # and the report read it)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe[-1].sample(pipe[-1].n_draws_paid_ + 10, random_state=2)
    spent = acc.total_spent[0]
    assert pipe.epsilon_ == pytest.approx(spent, abs=1e-9)
    assert pipe.privacy_guarantee_.epsilon == pytest.approx(spent, abs=1e-9)


def test_one_sided_bounds_keep_a_count_non_negative():
    """A count's private range could reach far below 0 on a noise leaf
    (counts came back at -248), and the
    natural declaration ``bounds=(0, None)`` failed with a bare TypeError.
    One side may be ``None``: that end is learned privately, the other is
    public, and no value comes back past it. Without a budget a side left
    to learn is refused."""
    from skdp_synth import ProjectedGaussianRelease

    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "children": rng.poisson(0.2, 5000),
            "stay": rng.integers(1, 30, 5000),
            "x": rng.choice(["a", "b"], 5000),
        }
    )
    lows = []
    for seed in range(6):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CoarseDomainWarning)
            pipe = make_synthesis_pipeline(
                BooleanEncoder(
                    categories={"x": ["a", "b"]},
                    bounds={"children": (0, None), "stay": (None, 30)},
                    random_state=seed,
                ),
                ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=seed),
            ).fit(df)
        out = pipe.sample(5000, random_state=seed)
        assert out["children"].min() >= 0 and out["stay"].max() <= 30
        lows.append(out["stay"].min())
    # the side left to learn is learned: near the data's, not at 2^40
    assert min(lows) > -100
    with pytest.raises(ValueError, match="needs a budget"):
        BooleanEncoder(bounds={"children": (0, None)}, epsilon=None).fit(df)
    with pytest.raises(ValueError, match="lo < hi"):
        BooleanEncoder(bounds={"children": (5, 2)}, epsilon=1.0).fit(df)
    with pytest.raises(ValueError, match="no finite side"):
        BooleanEncoder(bounds={"children": (None, None)}, epsilon=1.0).fit(df)
    # a public side past PrivTree's root (2^40: an epoch in milliseconds)
    # crashed with an IndexError
    ms = pd.DataFrame({"t": 1.7e12 + rng.integers(0, 10**9, 3000).astype(float)})
    enc = BooleanEncoder(bounds={"t": (1.6e12, None)}, epsilon=1.0, random_state=0)
    enc.fit(ms)
    assert enc.specs_[0].levels[0] >= 1.6e12
    # the open side of a refused value is said as None, not as a date
    dates = pd.DataFrame({"d": pd.to_datetime(["2020-01-01", "2018-05-05"] * 50)})
    with pytest.raises(ValueError, match=r"\[2019-01-01.*, None\]"):
        BooleanEncoder(
            bounds={"d": (pd.Timestamp("2019-01-01"), None)},
            out_of_bounds="error",
            datetime_unit="D",
            epsilon=1.0,
        ).fit(dates)


# independent columns: auto may measure the 1-way tables alone and say so
@pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.IndependentColumnsWarning")
def test_a_one_bin_integer_column_is_told_to_be_a_flag():
    """A 0/1 flag stored as int64 pays a numeric domain and often keeps one
    bin, losing its relation to every other column; the warning advised
    bin_edges/bounds/domain_share only. It now says: cast it to bool or
    declare its categories."""
    from skdp_synth import ProjectedGaussianRelease

    rng = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame(
        {"flag": (rng.random(n) < 0.01).astype(int)}
        | {f"c{i}": rng.normal(size=n) for i in range(12)}
    )
    with pytest.warns(CoarseDomainWarning, match=r"\['flag'\] are flags"):
        make_synthesis_pipeline(
            BooleanEncoder(random_state=0),
            ProjectedGaussianRelease(epsilon=1, delta=1e-6, random_state=0),
        ).fit(df)


def test_a_target_whose_private_domain_collapsed_is_dropped_with_a_warning():
    """A ``target`` column whose private domain kept one bin has no bits:
    the release refused it as an "unknown attribute", listing the others,
    and a search over ``target`` failed in the folds whose noise collapsed
    it. It is fitted without the target,
    with a warning saying why; the parameter is kept."""
    from skdp_synth import ProjectedGaussianRelease

    rng = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame(
        {"flag": (rng.random(n) < 0.01).astype(int)}
        | {f"c{i}": rng.normal(size=n) for i in range(12)}
    )
    pipe = make_synthesis_pipeline(
        BooleanEncoder(random_state=0),
        ProjectedGaussianRelease(epsilon=1, delta=1e-6, random_state=0, target="flag"),
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe.fit(df)
    texts = [str(w.message) for w in caught]
    assert any("the target 'flag' kept a single bin" in t for t in texts)
    assert pipe[-1].target == "flag"
    assert pipe.sample(10, random_state=0).shape == (10, 13)


def test_a_table_of_one_column_is_told_to_measure_tables_of_one():
    """A one-column table at the default ``d=2`` was refused with advice about
    collapsed domains only; the refusal now names ``d=1``, which fits it."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"cat": rng.choice(list("abc"), 2000)})
    encoder = BooleanEncoder(categories={"cat": list("abc")}, random_state=0)
    pipe = make_synthesis_pipeline(encoder, ProjectedGaussianRelease(epsilon=1.0))
    with pytest.raises(ValueError, match=r"at most 1 attributes \(d=1\)"):
        pipe.fit(df)
    pipe = make_synthesis_pipeline(
        clone(encoder), ProjectedGaussianRelease(epsilon=1.0, d=1)
    )
    assert set(pipe.fit(df).sample(50)["cat"]) <= {"a", "b", "c"}
