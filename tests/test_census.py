"""Census-style releases (issue 25): counts in, exact invariants over attributes,
the guarantee that says what it is, and rows that hold the invariants.

:cite:`Gao2022` (subspace differential privacy) for the invariants; the
derivations are in ``doc/privacy.md`` ("Census-style releases").
"""

import numpy as np
import pandas as pd
import pytest

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth.preprocessing import BooleanEncoder


def _cells(X):
    """The distinct rows of ``X`` and their counts (a contingency table)."""
    cells, counts = np.unique(X, axis=0, return_counts=True)
    return cells, counts


def _boolean(n=300, p=5, seed=0):
    rng = np.random.default_rng(seed)
    base = rng.random((n, 1))
    return (rng.random((n, p)) < 0.2 + 0.5 * base).astype(np.int64)


# ------------------------------------------------------------- counts in
@pytest.mark.parametrize(
    "params",
    [
        {"mechanism": "residual"},
        {"mechanism": "residual", "d": 3},
        {"mechanism": "correlated-weighted"},
        {"mechanism": "isotropic-gaussian", "neighbouring": "replace-one"},
        {"mechanism": "laplace"},
        {"workload": np.tril(np.ones((32, 32)))},
    ],
)
def test_counts_give_the_release_of_the_expanded_rows(params):
    X = _boolean()
    cells, counts = _cells(X)
    a = ProjectedGaussianRelease(random_state=3, **params).fit(X)
    b = ProjectedGaussianRelease(random_state=3, **params).fit(
        cells, sample_weight=counts
    )
    # exact: the sufficient statistics are the same integers (< 2^53, so every
    # order of summation gives them exactly) and everything after them is the
    # same code path in the same process on equal inputs with the same seed
    np.testing.assert_array_equal(a.released_, b.released_)
    np.testing.assert_array_equal(a.sample(50), b.sample(50))
    assert a.privacy_guarantee_ == b.privacy_guarantee_
    assert a.plan_.n_samples == b.plan_.n_samples


def test_counts_with_categorical_blocks_and_replace_one():
    rng = np.random.default_rng(1)
    df = pd.DataFrame(
        {
            "region": rng.choice(["n", "s", "e", "w"], 400),
            "age": rng.choice(["0-17", "18-64", "65+"], 400),
            "sex": rng.choice(["f", "m"], 400),
        }
    )
    cats = {
        "region": ["n", "s", "e", "w"],
        "age": ["0-17", "18-64", "65+"],
        "sex": ["f", "m"],
    }
    table = df.value_counts().rename("count").reset_index()
    kw = {"neighbouring": "replace-one", "random_state": 0}
    a = make_synthesis_pipeline(
        BooleanEncoder(categories=cats), ProjectedGaussianRelease(**kw)
    ).fit(df)
    b = make_synthesis_pipeline(
        BooleanEncoder(categories=cats), ProjectedGaussianRelease(**kw)
    ).fit(table[["region", "age", "sex"]], sample_weight=table["count"])
    ra, rb = a[-1], b[-1]
    np.testing.assert_array_equal(ra.released_, rb.released_)
    assert rb.n_samples_fit_ == 400 and rb.plan_.n_samples == 400
    pd.testing.assert_frame_equal(a.sample(30), b.sample(30))


def test_memory_does_not_grow_with_the_total_count():
    # 10^12 records in 32 cells: only possible without expanding them
    cells = np.array([[int(b) for b in f"{k:05b}"] for k in range(32)])
    counts = np.full(32, 10**12 // 32)
    est = ProjectedGaussianRelease(random_state=0, max_model_rows=500).fit(
        cells, sample_weight=counts
    )
    # the released total is within 10 noise sd of the true one (false-failure
    # rate < 1e-20 for a Gaussian)
    sd = est.residual_scales_[0]
    assert abs(est.n_estimate_ - counts.sum()) < 10 * sd
    assert est.sample(100).shape == (100, 5)


@pytest.mark.parametrize(
    "weights, match",
    [
        ([1.5] * 4, "whole counts"),
        ([-1, 2, 3, 4], "whole counts"),
        ([np.nan, 2, 3, 4], "whole counts"),
        ([1, 2, 3], "one count per row"),
        ([[1, 2, 3, 4]], "one count per row"),
        ([True, True, True, True], "not booleans"),
    ],
)
def test_bad_counts_are_refused_without_their_values(weights, match):
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]])
    est = ProjectedGaussianRelease(d=1, random_state=0)
    with pytest.raises(ValueError, match=match) as info:
        est.fit(X, sample_weight=weights)
    assert "1.5" not in str(info.value) and "-1" not in str(info.value)
    assert not hasattr(est, "released_")


def test_cli_takes_a_counts_column(tmp_path):
    from skdp_synth import cli

    rng = np.random.default_rng(2)
    df = pd.DataFrame(
        {"region": rng.choice(["n", "s"], 300), "sex": rng.choice(["f", "m"], 300)}
    )
    table = df.value_counts().rename("n").reset_index()
    src, out = tmp_path / "table.csv", tmp_path / "out.csv"
    table.to_csv(src, index=False)
    schema = tmp_path / "s.json"
    schema.write_text('{"categories": {"region": ["n", "s"], "sex": ["f", "m"]}}')
    args = ["synthesize", str(src), "--method", "gaussian-release", "--schema"]
    args += [str(schema), "--epsilon", "1", "--delta", "1e-6", "--rows", "100"]
    args += ["--seed", "0", "--counts", "n", "-o", str(out)]
    assert cli.main(args) == 0
    synthetic = pd.read_csv(out)
    assert list(synthetic.columns) == ["region", "sex"] and len(synthetic) == 100
    # a bad counts column is one line on stderr, exit status 2, no value shown
    table.loc[0, "n"] = -7
    table.to_csv(src, index=False)
    assert cli.main(args) == 2
    assert cli.main(args[:-4] + ["--counts", "missing", "-o", str(out)]) == 2
