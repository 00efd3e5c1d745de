"""``BooleanEncoder(n_bins="auto")``: 10 equal-width bins for an inferred or
public-bounds domain, at most 16 coarse bins for a private one (post-processing
of the released fine histogram; ``_column_domain.PRIVATE_N_BINS``)."""

import numpy as np
import pandas as pd
import pytest

from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.preprocessing import _column_domain as cd
from skdp_synth.preprocessing._numeric_domain import coarse_edges, split_heavy_leaves


def test_the_bin_counts_are_pinned():
    assert cd.PRIVATE_N_BINS == 16
    assert cd.PUBLIC_N_BINS == 10
    assert BooleanEncoder().n_bins == "auto"


def _frame(n=20000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": rng.normal(50.0, 10.0, n), "y": rng.lognormal(3, 1, n)})


def test_an_inferred_domain_keeps_ten_equal_width_bins():
    df = _frame(2000)
    with pytest.warns(UserWarning):
        enc = BooleanEncoder(epsilon=None).fit(df)
    for spec in enc.specs_:
        x = df[spec.name].to_numpy()
        np.testing.assert_array_equal(
            spec.levels, np.linspace(x.min(), x.max(), 11).tolist()
        )
    bounded = BooleanEncoder(bounds={"x": (0.0, 100.0), "y": (0.0, 1e4)}, epsilon=None)
    bounded.fit(df)
    assert [len(s.levels) - 1 for s in bounded.specs_] == [10, 10]


@pytest.mark.parametrize("seed", [0, 1])
def test_a_private_domain_is_cut_into_at_most_sixteen_bins(seed):
    """The same released histogram (the noise does not depend on ``n_bins``)
    cut by ``coarse_edges`` at 16 under ``"auto"`` and at 10 when asked; on
    20,000 rows at ε = 1 the leaves allow more than 10 bins."""
    df = _frame(seed=seed)
    auto = BooleanEncoder(epsilon=1.0, random_state=seed).fit(df)
    ten = BooleanEncoder(epsilon=1.0, random_state=seed, n_bins=10).fit(df)
    wider = 0
    for a, t in zip(auto.specs_, ten.specs_):
        np.testing.assert_array_equal(a.fine.counts, t.fine.counts)
        np.testing.assert_array_equal(a.fine.edges, t.fine.edges)
        for spec, k in ((a, 16), (t, 10)):
            edges, split = split_heavy_leaves(spec.fine, coarse_edges(spec.fine, k), k)
            np.testing.assert_array_equal(spec.levels, edges)
            assert tuple(spec.split) == tuple(
                sorted(set(split) | set(spec.fine.tentative_bins(edges)))
            )
        assert len(t.levels) - 1 <= 10
        wider += len(a.levels) - 1 > 10
    assert wider >= 1
