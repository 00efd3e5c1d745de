"""Private domains learned from a Dask DataFrame are the in-memory ones.

``BooleanEncoder.fit`` on a Dask DataFrame reads per-chunk counts
(``preprocessing._domain_stats``) and runs the same private steps on their
sums: the same noise in the same order, so for the same rows and the same
``random_state`` every learned domain -- bins, fine histogram, levels,
missing level -- is identical (exact equality: the counts are integers).
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from _skewed_columns import four_skewed_columns

from skdp_synth import (
    BudgetAccountant,
    ProjectedGaussianRelease,
    make_synthesis_pipeline,
)
from skdp_synth.mechanisms import NoiseSource
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.preprocessing import _chunk_counts as cc
from skdp_synth.preprocessing import _count_grid as cg
from skdp_synth.preprocessing import _domain_stats as ds
from skdp_synth.preprocessing import _refine_bounds as rb
from skdp_synth.preprocessing._numeric_domain import MAX_DEPTH, privtree_histogram

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

pytestmark = [
    pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.PrivacyBudgetWarning"),
    pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.CoarseDomainWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning:distributed.*"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]


@pytest.fixture
def small_grid(monkeypatch):
    """A shallow grid (built in milliseconds): the result does not depend
    on the grid's depth, only the number of refined cells does."""
    monkeypatch.setattr(cg, "GRID_DEPTH", 8)


def _mixed(n=6000, seed=0):
    """Skewed, zero-inflated, point-mass, integer, missing and categorical."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "income": np.where(rng.random(n) < 0.3, 0.0, rng.lognormal(10, 1, n)),
            "debt": np.where(
                rng.random(n) < 0.1, np.nan, np.round(rng.exponential(1e3, n), 2)
            ),
            "atom": np.where(rng.random(n) < 0.5, 1234.5, rng.normal(1e3, 1, n)),
            "big": rng.integers(0, 2**38, n),
            "colour": rng.choice(
                ["red", "green", "blue", "x", None], n, p=[0.4, 0.3, 0.2, 0.05, 0.05]
            ),
            "town": pd.Categorical(rng.choice(list("abcdefghij"), n)),
            "flag": rng.random(n) < 0.3,
        }
    )


def _spec_state(enc):
    """Everything a spec holds that the fit learned, as plain values."""
    out = []
    for s in enc.specs_:
        d = {
            "name": s.name,
            "kind": s.kind,
            "levels": [str(v) for v in s.levels],
            "missing": s.missing,
            "dtype": str(s.dtype),
            "bits": list(s.bits),
            "split": getattr(s, "split", None),
        }
        f = getattr(s, "fine", None)
        if f is not None:
            d |= {
                "edges": f.edges.tolist(),
                "counts": f.counts.tolist(),
                "missing_count": f.missing_count,
                "finest": f.finest.tolist(),
                "cap": f.cap,
                "found": f.found,
                "tentative": None if f.tentative is None else list(f.tentative),
            }
        out.append(d)
    return out


def _fit_both(frame, npartitions, **params):
    ddf = dd.from_pandas(frame, npartitions=npartitions)
    pdf = ddf.compute()  # the same rows, in the same order and dtypes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = BooleanEncoder(**params).fit(pdf)
        with dask.config.set(scheduler="threads"):
            b = BooleanEncoder(**params).fit(ddf)
    return a, b


#: The two memory modes: exact (the distinct values of the refined grid
#: cells) and bounded (counts of sub-cells, few enough here to take passes
#: on demand on the 8-deep test grid).
MODES = [None, 2**10]


@pytest.mark.parametrize("refine_cells", MODES)
@pytest.mark.parametrize(
    ("seed", "epsilon"), [(0, 0.5), (1, 0.5), (2, 0.5), (3, 0.5), (0, 0.06), (1, 0.06)]
)
def test_dask_fit_learns_the_in_memory_domains(seed, epsilon, refine_cells, small_grid):
    """At ``ε = 0.06`` each column's budget is under 0.016 and the tree's
    share 0.25 (``_privtree_budget.column_tree_share``): the counts-based fit
    and its refinement passes split ``ε_c`` as the in-memory fit does."""
    frame = _mixed(seed=seed)
    a, b = _fit_both(
        frame,
        7,
        epsilon=epsilon,
        delta=1e-6,
        random_state=seed,
        refine_cells=refine_cells,
    )
    assert _spec_state(a) == _spec_state(b)
    assert a.private_domains_ == b.private_domains_
    assert (a.epsilon_, a.delta_) == (b.epsilon_, b.delta_)
    assert a.privacy_guarantee_ == b.privacy_guarantee_
    assert a.get_feature_names_out().tolist() == b.get_feature_names_out().tolist()
    ddf = dd.from_pandas(frame, npartitions=7)
    np.testing.assert_array_equal(
        a.transform(ddf.compute()), b.transform(ddf).compute()
    )


@pytest.mark.parametrize("refine_cells", MODES)
@pytest.mark.parametrize("neighbouring", ["add-remove-one", "replace-one"])
def test_dask_fit_with_bounds_and_times(neighbouring, refine_cells, small_grid):
    rng = np.random.default_rng(5)
    n = 3000
    frame = pd.DataFrame(
        {
            "count": rng.poisson(3, n),
            "share": rng.beta(2, 5, n),
            "when": pd.Timestamp("2020-01-01")
            + pd.to_timedelta(rng.integers(0, 400, n), unit="D"),
            "wage": rng.lognormal(8, 1, n),
        }
    )
    params = dict(
        epsilon=2.0,
        random_state=11,
        neighbouring=neighbouring,
        bounds={"count": (0, None), "share": (0, 1), "wage": (0, 1e5)},
        datetime_unit={"when": "D"},
        refine_cells=refine_cells,
    )
    a, b = _fit_both(frame, 5, **params)
    assert _spec_state(a) == _spec_state(b)


def _counter_for(values, integer, root, depth):
    """A ColumnCounts over in-memory ``values`` whose refinement reads them."""
    edges, _, root_lo, root_hi, floor = ds.grid_for(integer, root, depth)
    top = root_hi - 1.0 if integer else root_hi
    x, n_missing = ds.column_values(pd.Series(values), None, None, root_lo, top)
    refinements = []

    def refine(targets):
        refinements.append(list(targets))
        counter.add_cells(
            targets, *cc.refined_counts(x, targets, integer, floor, root_hi)
        )

    counter = ds.ColumnCounts(
        integer, root, depth, cc.grid_counts(x, edges), n_missing, refine
    )
    return counter, refinements


@pytest.mark.parametrize("integer", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_privtree_from_counts_is_privtree_histogram(integer, seed):
    """No refinement before the noise: every cell the tree enters below the
    grid is read on demand, before that level's noise -- the histogram is
    still the in-memory one, noise draws included."""
    rng = np.random.default_rng(seed)
    n = 5000
    if integer:
        values = np.where(rng.random(n) < 0.4, 7, rng.integers(0, 5000, n))
        values = values.astype(np.float64)
    else:
        values = np.where(rng.random(n) < 0.4, 1234.5, rng.lognormal(3, 2, n))
    values[rng.random(n) < 0.05] = np.nan
    for eps in (0.1, 1.0, 10.0):
        want = privtree_histogram(values, eps, NoiseSource(seed), integer=integer)
        counter, refinements = _counter_for(values, integer, None, 6)
        got = ds.privtree_from_counts(counter, eps, NoiseSource(seed), integer=integer)
        np.testing.assert_array_equal(got.edges, want.edges)
        np.testing.assert_array_equal(got.counts, want.counts)
        np.testing.assert_array_equal(got.finest, want.finest)
        assert got.missing_count == want.missing_count
        assert (got.cap, got.found, got.scale) == (want.cap, want.found, want.scale)
        if eps == 10.0:
            # the point mass is resolved below depth 6: read on demand
            assert refinements


def test_split_probability_is_privtrees():
    """PrivTree splits a node of depth ``d`` with ``c`` rows iff ``max(c - d
    λ ln 2, -λ ln 2) + Lap(λ) > 0`` (Zhang et al. 2016, Algorithm 2): the
    closed form, and at least 1/4 whatever ``c``, checked against draws."""
    lam, d = 50.0, 5
    bias = lam * np.log(2.0)
    c = np.array([0.0, d * bias - 0.5 * lam, d * bias, d * bias + 3 * lam])
    want = np.array([0.25, 0.5 * np.exp(-0.5), 0.5, 1 - 0.5 * np.exp(-3.0)])
    np.testing.assert_allclose(ds.split_probability(c, d, lam), want, rtol=1e-12)
    rng = np.random.default_rng(0)
    draws = np.maximum(c[:, None] - d * bias, -bias) + rng.laplace(0, lam, (4, 40000))
    # binomial sd <= 0.0025; 5 sd
    np.testing.assert_allclose((draws > 0).mean(1), want, atol=0.0125)


def test_refined_cells_leave_little_probability(small_grid):
    """The cells left unrefined are reached and split with probability at
    most REFINE_MISS together (the chance of one more pass)."""
    rng = np.random.default_rng(1)
    values = np.where(rng.random(20000) < 0.5, 9.99, rng.lognormal(3, 1, 20000))
    counter, _ = _counter_for(values, False, None, 8)
    cells = ds.refine_cells(counter, 0.5, 1.0)
    assert len(cells) and rb.REFINE_MISS == 0.001
    # refining them all: the remaining probability is 0, nothing is left
    counter.refined |= set(cells.tolist())
    nonempty = set(np.flatnonzero((counter.depths == 8) & (counter.grid > 0)))
    assert set(cells.tolist()) <= nonempty


def _brute_miss(d, c, r, e, lam):
    """The bound on the tree splitting a cell of depth ``e`` under a target
    of depth ``d``, ``c`` rows, reached and split with probability ``r``,
    level by level: the least of the flat bound (every occupied cell with
    all ``c`` rows) and the split-rows one (at most ``c / ((t - 1) λ ln
    2)`` cells of depth ``t`` split with probability above 1/4)."""
    if e >= MAX_DEPTH:
        return 0.0
    bias = lam * np.log(2.0)
    b = r
    for t in range(d + 1, e + 1):
        q = ds.split_probability(np.full(t - d, c), np.arange(d + 1, t + 1), lam)
        flat = r * min(c, 2.0 ** (t - d)) * np.prod(q)
        heavy = min(np.floor(c / (max(t - 1, 1) * bias)), 2.0 ** (t - d))
        b = min(flat, r * heavy + b / 2)
    return b


def test_refine_stops_are_bounded_and_leave_their_miss():
    """Each target is counted at least one level and at most ``MAX_DEPTH``
    deep, the cells so counted number at most the cap, and the returned
    miss is ``sum_k reach_k min(c_k, 2^(s_k - d_k)) prod q(c_k, d)`` at the
    chosen stops, or the split-rows bound where less (brute force,
    :func:`_brute_miss`); with room to spare it is at most
    REFINE_MISS, and an empty target is counted one level deep."""
    rng = np.random.default_rng(3)
    lam = 50.0
    depth = rng.integers(10, 29, 400)
    count = rng.integers(0, 5000, 400)
    count[:40] = 0
    reach = rng.random(400)
    for cap in (2**10, 2**14, 2**19):
        stop, miss = ds.refine_stops(depth, count, reach, lam, cap)
        assert np.all(stop >= np.minimum(depth + 1, MAX_DEPTH))
        assert np.all(stop <= MAX_DEPTH)
        cells = np.sum(2.0 ** (stop - depth))
        assert cells <= max(cap, 2 * len(depth))
        want = sum(
            _brute_miss(d, c, r, e, lam)
            for d, c, r, e in zip(depth, count, reach, stop)
        )
        assert miss == pytest.approx(want, rel=1e-9, abs=1e-300)
        assert np.all(stop[:40] == depth[:40] + 1)
    # few rows a target (split with probability about 1/4 a level): the cap
    # leaves room, and the miss is brought under REFINE_MISS
    stop, miss = ds.refine_stops(depth, count // 50, reach, lam, 2**19)
    assert miss <= rb.REFINE_MISS
    assert np.sum(2.0 ** (stop - depth)) < 2**19


def test_many_distinct_floats_keep_bounded_counts(monkeypatch):
    """10^6 distinct floats: the refined cells keep counts of hierarchy
    cells, not the values -- at most ``max(REFINE_CELLS, 2 m)`` cells per
    pass of ``m`` targets, whatever the rows -- and the histogram is still
    the in-memory one, noise draws included (extra passes on demand)."""
    monkeypatch.setattr(rb, "REFINE_CELLS", 2**12)
    rng = np.random.default_rng(11)
    values = rng.lognormal(8, 2, 10**6)
    assert np.unique(values).size > 999_000
    for eps in (0.05, 1.0):
        counter, refinements = _counter_for(values, False, None, 10)
        counter.lam = 3.0 / (eps * 0.4)
        cells, reach = ds._chosen(counter, eps, 1.0, limit=rb.REFINE_CELLS // 2)
        targets = counter.grid_targets(cells, reach)
        counter._refine(targets)
        want = privtree_histogram(values, eps, NoiseSource(5))
        got = ds.privtree_from_counts(counter, eps, NoiseSource(5))
        np.testing.assert_array_equal(got.edges, want.edges)
        np.testing.assert_array_equal(got.counts, want.counts)
        assert got.missing_count == want.missing_count
        bound = sum(max(rb.REFINE_CELLS, 2 * len(t)) for t in refinements)
        assert counter.n_kept <= bound
        # what was kept before: every distinct value of the refined cells
        edges = counter.edges
        idx = np.searchsorted(edges, values, "right") - 1
        assert counter.n_kept * 20 < np.unique(values[np.isin(idx, cells)]).size


def test_dask_fit_of_many_distinct_floats(small_grid, monkeypatch):
    """A Dask fit of a column of 10^6 distinct floats (and missing values)
    in bounded mode learns the in-memory domain; every refinement pass
    counts at most ``max(refine_cells, 2 m)`` cells for its ``m``
    targets."""
    cap = 2**14
    counted = []
    real = ds.sub_cells

    def sub_cells(targets, *args):
        out = real(targets, *args)
        counted.append((len(targets), int(np.sum(out[1] >= 0))))
        return out

    monkeypatch.setattr(ds, "sub_cells", sub_cells)
    rng = np.random.default_rng(2)
    x = rng.normal(5e4, 2e4, 10**6)
    x[rng.random(x.size) < 0.05] = np.nan
    frame = pd.DataFrame({"x": x, "k": rng.integers(0, 40, x.size)})
    a, b = _fit_both(frame, 4, epsilon=4.0, random_state=9, refine_cells=cap)
    assert _spec_state(a) == _spec_state(b)
    assert counted
    for m, n_cells in counted:
        assert n_cells <= max(cap, 2 * m)


def test_passes_over_the_data(small_grid, monkeypatch):
    """Pass 1 (counts and contracts), at most one refinement pass before the
    noise; the encoding reuses pass 1's partition lengths."""
    calls = []
    real = ds.chunk_pass
    monkeypatch.setattr(
        ds, "chunk_pass", lambda *a, **k: calls.append(a[1].__name__) or real(*a, **k)
    )
    ddf = dd.from_pandas(_mixed(3000), npartitions=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enc = BooleanEncoder(epsilon=0.2, delta=1e-6, random_state=0).fit(ddf)
    assert calls[0] == "first_chunk"
    assert set(calls[1:]) <= {"_refine_chunk"}
    assert enc._chunk_lengths[1] == (750, 750, 750, 750)


def test_declared_contract_refused_before_any_noise(small_grid, monkeypatch):
    frame = _mixed(2000)
    ddf = dd.from_pandas(frame, npartitions=4)
    drawn = []
    monkeypatch.setattr(NoiseSource, "laplace", lambda self, v, s: drawn.append(1) or v)
    with pytest.raises(ValueError, match=r"chunk \d of the data: .*'debt'") as e:
        BooleanEncoder(
            epsilon=1.0, delta=1e-6, missing={"debt": False}, random_state=0
        ).fit(ddf)
    assert not drawn
    assert not hasattr(e.value, "skdp_spent")  # no noise, nothing spent


def test_budget_checked_before_any_chunk_is_read(small_grid):
    frame = _mixed(500)

    def boom(part):
        raise RuntimeError("a chunk was read")

    ddf = dd.from_pandas(frame, npartitions=2).map_partitions(boom, meta=frame.iloc[:0])
    pipe = make_synthesis_pipeline(
        BooleanEncoder(delta=1e-6, random_state=0),
        ProjectedGaussianRelease(
            epsilon=1.0, delta=1e-6, accountant=BudgetAccountant(0.5, 1e-5)
        ),
    )
    with pytest.raises(Exception, match="budget") as e:
        pipe.fit(ddf)
    assert "a chunk was read" not in str(e.value)


@pytest.mark.parametrize("refine_cells", MODES)
def test_pipeline_on_dask_learns_the_in_memory_domains(refine_cells, small_grid):
    frame = _mixed(4000, seed=3)
    ddf = dd.from_pandas(frame, npartitions=5)
    pdf = ddf.compute()

    def pipe():
        return make_synthesis_pipeline(
            BooleanEncoder(random_state=1, refine_cells=refine_cells),
            ProjectedGaussianRelease(epsilon=2.0, delta=1e-6, random_state=2),
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = pipe().fit(pdf)
        with dask.config.set(scheduler="threads"):
            b = pipe().fit(ddf)
    assert _spec_state(a[0]) == _spec_state(b[0])
    assert a.privacy_guarantee_ == b.privacy_guarantee_
    np.testing.assert_array_equal(a[-1].released_, b[-1].released_)


@pytest.mark.parametrize("refine_cells", MODES)
def test_local_cluster_gives_the_threaded_result(refine_cells, small_grid):
    distributed = pytest.importorskip("distributed")
    frame = _mixed(3000, seed=4)
    ddf = dd.from_pandas(frame, npartitions=4)

    def run():
        pipe = make_synthesis_pipeline(
            BooleanEncoder(random_state=1, refine_cells=refine_cells),
            ProjectedGaussianRelease(epsilon=2.0, delta=1e-6, random_state=2),
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe.fit(ddf)
            return pipe, pipe.sample(200, random_state=3)

    with dask.config.set(scheduler="threads"):
        p1, s1 = run()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            processes=False, n_workers=2, threads_per_worker=1, dashboard_address=":0"
        )
        client = distributed.Client(cluster)
    try:
        p2, s2 = run()
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            client.close()
            cluster.close()
    assert _spec_state(p1[0]) == _spec_state(p2[0])
    np.testing.assert_array_equal(p1[-1].released_, p2[-1].released_)
    pd.testing.assert_frame_equal(s1, s2)


# ------------------------------------------------------------- the CLI
def _people_csv(tmp_path, n=3000):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "wage": rng.lognormal(6.5, 0.5, n).round(2),
            "sector": rng.choice(["public", "private", "none"], n, p=[0.3, 0.6, 0.1]),
            "debt": np.where(rng.random(n) < 0.7, 0.0, rng.exponential(1e3, n)),
        }
    )
    df.loc[rng.random(n) < 0.05, "wage"] = np.nan
    df.loc[rng.random(n) < 0.05, "sector"] = None
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    types = {
        "columns": {
            "age": {"type": "numeric", "integer": True},
            "wage": "numeric",
            "sector": "categorical",
            "debt": {"type": "numeric", "bounds": [0, None]},
        }
    }
    return src, types


def test_out_of_core_reader_learns_the_in_memory_domains(tmp_path, small_grid):
    """The CLI's chunked CSV reader and its in-memory reader give frames
    whose private domains are the same (same seed)."""
    from skdp_synth.cli._csv import _read_csv
    from skdp_synth.cli._out_of_core import _read_chunked
    from skdp_synth.cli._schema import parse_schema

    src, types = _people_csv(tmp_path)
    schema = parse_schema(types)
    params = dict(epsilon=1.0, delta=1e-6, random_state=3, **schema.encoder)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = BooleanEncoder(**params).fit(_read_csv(str(src), schema))
        with dask.config.set(scheduler="threads"):
            frame = _read_chunked(str(src), schema, 20_000)
            assert frame.npartitions > 2
            b = BooleanEncoder(**params).fit(frame)
    assert _spec_state(a) == _spec_state(b)


def test_cli_out_of_core_with_a_types_only_schema(tmp_path, capsys, small_grid):
    import json

    from skdp_synth.cli import _main as cli

    src, types = _people_csv(tmp_path)
    schema, out = tmp_path / "s.json", tmp_path / "out.csv"
    schema.write_text(json.dumps(types))
    args = ["synthesize", str(src), "--schema", str(schema), "-o", str(out)]
    args += ["--method", "gaussian-release", "--epsilon", "1", "--delta", "1e-6"]
    args += ["--seed", "0", "--out-of-core", "--blocksize", "20kB", "--rows", "500"]
    assert cli.main(args) == 0, capsys.readouterr().err
    syn = pd.read_csv(out)
    assert list(syn.columns) == ["age", "wage", "sector", "debt"]
    assert len(syn) == 500
    assert "privacy spent: epsilon=1, delta=1e-06" in capsys.readouterr().err


@pytest.mark.parametrize("refine_cells", MODES)
def test_cells_entered_by_the_noise_are_read_on_demand(
    refine_cells, small_grid, monkeypatch
):
    """With no cell refined before the noise, every cell the tree enters is
    read by a further pass before that level's noise: still the in-memory
    domains."""
    monkeypatch.setattr(rb, "REFINE_MISS", np.inf)
    monkeypatch.setattr(ds, "VALUES_MISS", np.inf)
    calls = []
    real = ds.chunk_pass
    monkeypatch.setattr(
        ds, "chunk_pass", lambda *a, **k: calls.append(a[1].__name__) or real(*a, **k)
    )
    a, b = _fit_both(
        _mixed(seed=6),
        4,
        epsilon=2.0,
        delta=1e-6,
        random_state=6,
        refine_cells=refine_cells,
    )
    assert _spec_state(a) == _spec_state(b)
    assert calls[0] == "first_chunk" and calls.count("_refine_chunk") >= 1


# ------------------------------------------------- datetime columns, chunked
def _dated_csv(tmp_path, *, missing, offsets=None, n=3000):
    """A CSV of dates and times (one per row, some missing) and a number."""
    rng = np.random.default_rng(1)
    when = pd.Timestamp("2015-01-01") + pd.to_timedelta(
        rng.integers(0, 3 * 365 * 86400, n), unit="s"
    )
    text = pd.Series(when.strftime("%Y-%m-%dT%H:%M:%S"), dtype=object)
    if offsets is not None:
        text = text + pd.Series(rng.choice(offsets, n), dtype=object)
    if missing:
        text[rng.random(n) < 0.1] = None
    df = pd.DataFrame({"when": text, "x": rng.normal(0, 1, n).round(3)})
    src = tmp_path / "dated.csv"
    df.to_csv(src, index=False)
    return src


@pytest.mark.parametrize(
    "missing, offsets, zone",
    [
        (False, None, None),
        (True, None, None),
        (True, ["-05:00", "-04:00"], "America/New_York"),
        (False, ["+01:00"], "Europe/Paris"),
    ],
)
def test_out_of_core_reader_learns_the_in_memory_date_domains(
    tmp_path, small_grid, missing, offsets, zone
):
    """A types-only schema's datetime column (with and without missing
    cells, with a declared time zone): the chunked reader gives every chunk
    one dtype, the Dask meta's and the in-memory reader's, and the same
    private domains as in memory (same seed)."""
    from skdp_synth.cli._csv import _read_csv
    from skdp_synth.cli._out_of_core import _read_chunked
    from skdp_synth.cli._schema import parse_schema

    src = _dated_csv(tmp_path, missing=missing, offsets=offsets)
    when = {"type": "datetime"} | ({"timezone": zone} if zone else {})
    schema = parse_schema({"columns": {"when": when, "x": "numeric"}})
    params = dict(epsilon=1.0, delta=1e-6, random_state=5, **schema.encoder)
    whole = _read_csv(str(src), schema)
    dtype = "datetime64[ns]" if zone is None else f"datetime64[ns, {zone}]"
    assert str(whole["when"].dtype) == dtype
    with dask.config.set(scheduler="threads"):
        frame = _read_chunked(str(src), schema, 20_000)
        assert frame.npartitions > 2
        assert str(frame["when"].dtype) == dtype
        parts = [frame.get_partition(i).compute() for i in range(frame.npartitions)]
    assert {str(p["when"].dtype) for p in parts} == {dtype}
    pd.testing.assert_series_equal(
        pd.concat(parts)["when"].reset_index(drop=True), whole["when"]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = BooleanEncoder(**params).fit(whole)
        with dask.config.set(scheduler="threads"):
            b = BooleanEncoder(**params).fit(frame)
    assert _spec_state(a) == _spec_state(b)
    assert a.specs_[0].kind == b.specs_[0].kind


def test_a_chunk_without_dates_takes_the_first_chunks_zone(tmp_path):
    """A chunk whose date cells are all missing is read in the first chunk's
    dtype (with a declared zone: not a naive column of NaT)."""
    from skdp_synth.cli._out_of_core import _read_chunked
    from skdp_synth.cli._schema import parse_schema

    src = tmp_path / "gap.csv"
    rows = ["2020-01-01T00:00:00+00:00,1"] * 400 + [",2"] * 2000
    src.write_text("when,x\n" + "\n".join(rows) + "\n")
    when = {"type": "datetime", "timezone": "Europe/Paris", "missing": True}
    schema = parse_schema({"columns": {"when": when, "x": "numeric"}})
    with dask.config.set(scheduler="threads"):
        frame = _read_chunked(str(src), schema, 4_000)
        assert frame.npartitions > 2
        parts = [frame.get_partition(i).compute() for i in range(frame.npartitions)]
    assert parts[-1]["when"].isna().all()
    assert {str(p["when"].dtype) for p in parts} == {"datetime64[ns, Europe/Paris]"}


def _bad_date_at(tmp_path, cell, row=2500, n=3000):
    src = tmp_path / "bad.csv"
    rows = [f"2020-01-{1 + i % 28:02d}T10:00:00,{i}" for i in range(n)]
    rows[row] = f"{cell},{row}"
    src.write_text("when,x\n" + "\n".join(rows) + "\n")
    return src


@pytest.mark.parametrize(
    "cell", ["not-a-date-31337", "2020-01-05T10:00:00+03:00", "9999-12-31T00:00:00"]
)
def test_a_bad_date_cell_is_refused_naming_chunk_and_column(tmp_path, cell):
    """A cell that is not an ISO date (or is in another offset than its
    column's other cells, or out of the datetime64[ns] range) in a later
    chunk: refused, naming the chunk and the column, never the value -- as
    the in-memory reader refuses it."""
    from skdp_synth.cli._console import CLIError
    from skdp_synth.cli._csv import _read_csv
    from skdp_synth.cli._out_of_core import _read_chunked
    from skdp_synth.cli._schema import parse_schema

    src = _bad_date_at(tmp_path, cell)
    schema = parse_schema({"columns": {"when": "datetime", "x": "numeric"}})
    with pytest.raises(CLIError, match="column 'when' is declared datetime"):
        _read_csv(str(src), schema)
    frame = _read_chunked(str(src), schema, 20_000)
    assert frame.npartitions > 3
    with pytest.raises(CLIError) as err, dask.config.set(scheduler="sync"):
        frame.compute()
    text = str(err.value)
    last = frame.npartitions - 1  # the bad row is in the last chunk
    assert text.startswith(
        f"{src}, chunk {last}: column 'when' is declared datetime in the schema"
    )
    assert "(not shown: they may be private)" in text
    shown = text.replace(str(src), "")
    assert cell not in shown and "31337" not in shown and "9999" not in shown
    assert "+03:00" not in shown and "2500" not in shown


def test_a_zone_read_from_the_cells_warns_once_as_in_memory(tmp_path):
    """No declared zone, one offset on every cell: in memory the zone is read
    from the cells with a PrivacyLeakWarning; out of core the same dtype and
    the same warning (from the first chunk, once). A later chunk of another
    zone -- or without one, when the first chunk has none -- is refused
    asking for the "timezone", as in memory cells of two offsets are."""
    from skdp_synth.cli._console import CLIError
    from skdp_synth.cli._csv import _read_csv
    from skdp_synth.cli._out_of_core import _read_chunked
    from skdp_synth.cli._schema import parse_schema
    from skdp_synth.exceptions import PrivacyLeakWarning

    src = _dated_csv(tmp_path, missing=True, offsets=["+02:00"])
    schema = parse_schema({"columns": {"when": "datetime", "x": "numeric"}})
    with pytest.warns(PrivacyLeakWarning, match="time zone was read from"):
        whole = _read_csv(str(src), schema)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        frame = _read_chunked(str(src), schema, 20_000)
        with dask.config.set(scheduler="threads"):
            chunked = frame.compute()
    leaks = [w for w in seen if issubclass(w.category, PrivacyLeakWarning)]
    assert len(leaks) == 1 and "'when'" in str(leaks[0].message)
    assert frame["when"].dtype == whole["when"].dtype
    pd.testing.assert_series_equal(
        chunked["when"].reset_index(drop=True), whole["when"]
    )
    # the first chunk without dates, later ones with an offset: refused
    src = tmp_path / "late.csv"
    rows = [",1"] * 4000 + ["2020-01-01T00:00:00+02:00,2"] * 2000
    src.write_text("when,x\n" + "\n".join(rows) + "\n")
    missing = {"type": "datetime", "missing": True}
    schema = parse_schema({"columns": {"when": missing, "x": "numeric"}})
    frame = _read_chunked(str(src), schema, 8_000)
    with pytest.raises(CLIError, match='declare the column\'s "timezone"') as err:
        with dask.config.set(scheduler="sync"):
            frame.compute()
    assert "column 'when'" in str(err.value) and "+02:00" not in str(err.value)


def test_cli_out_of_core_writes_dates_as_iso_text(tmp_path, capsys, small_grid):
    """``synthesize --out-of-core`` with a datetime column (unit "h"): it
    runs, as in memory, and writes the dates back as ISO 8601 text, whole
    hours within the input's years."""
    import json

    from skdp_synth.cli import _main as cli

    src = _dated_csv(tmp_path, missing=True)
    types = {"columns": {"when": {"type": "datetime", "unit": "h"}, "x": "numeric"}}
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps(types))
    outs = {}
    for mode in ("in-memory", "out-of-core"):
        out = tmp_path / f"{mode}.csv"
        args = ["synthesize", str(src), "--schema", str(schema), "-o", str(out)]
        args += ["--method", "gaussian-release", "--epsilon", "1", "--delta", "1e-6"]
        args += ["--seed", "0", "--rows", "500"]
        if mode == "out-of-core":
            args += ["--out-of-core", "--blocksize", "20kB"]
        assert cli.main(args) == 0, capsys.readouterr().err
        outs[mode] = pd.read_csv(out, dtype=str, keep_default_na=False)
    syn = outs["out-of-core"]
    assert list(syn.columns) == ["when", "x"] and len(syn) == 500
    dates = syn["when"][syn["when"] != ""]
    assert len(dates) > 0
    assert dates.str.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d").all()
    parsed = pd.to_datetime(dates, format="ISO8601")
    assert parsed.min() >= pd.Timestamp("2014-01-01")
    assert parsed.max() <= pd.Timestamp("2019-01-01")
    assert (parsed.dt.minute == 0).all() and (parsed.dt.second == 0).all()


@pytest.mark.parametrize("stored", ["datetime64[ms]", "datetime64[us]", "text"])
@pytest.mark.parametrize("zone", [None, "Asia/Tokyo"])
def test_parquet_dates_learn_the_in_memory_csv_domains(
    tmp_path, small_grid, stored, zone
):
    """Parquet row groups of timestamps (any stored unit) or of ISO text, as
    a datetime column of a types-only schema: one ``datetime64[ns]`` dtype
    for every chunk, and the domains the in-memory CSV reader learns from
    the same dates (a naive timestamp is UTC, as a cell without an offset)."""
    pytest.importorskip("pyarrow")
    from skdp_synth.cli._csv import _read_csv
    from skdp_synth.cli._out_of_core import _read_chunked
    from skdp_synth.cli._schema import parse_schema

    src = _dated_csv(tmp_path, missing=True)
    df = pd.read_csv(src)
    if stored != "text":
        df["when"] = pd.to_datetime(df["when"]).astype(stored)
    df.to_parquet(tmp_path / "dated.parquet", row_group_size=700)
    when = {"type": "datetime"} | ({"timezone": zone} if zone else {})
    schema = parse_schema({"columns": {"when": when, "x": "numeric"}})
    params = dict(epsilon=1.0, delta=1e-6, random_state=7, **schema.encoder)
    dtype = "datetime64[ns]" if zone is None else f"datetime64[ns, {zone}]"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = BooleanEncoder(**params).fit(_read_csv(str(src), schema))
        with dask.config.set(scheduler="threads"):
            frame = _read_chunked(str(tmp_path / "dated.parquet"), schema, 20_000)
            assert frame.npartitions > 2 and str(frame["when"].dtype) == dtype
            parts = [frame.get_partition(i).compute() for i in range(3)]
            assert {str(p["when"].dtype) for p in parts} == {dtype}
            b = BooleanEncoder(**params).fit(frame)
    assert _spec_state(a) == _spec_state(b)


def test_cli_out_of_core_says_a_zone_read_from_the_cells(tmp_path, capsys, small_grid):
    """No declared zone, one offset on every cell: ``synthesize
    --out-of-core`` says the PrivacyLeakWarning once, as in memory, and the
    privacy line says it does not cover it; the dates come back in that
    offset."""
    import json

    from skdp_synth.cli import _main as cli

    src = _dated_csv(tmp_path, missing=False, offsets=["+02:00"])
    schema = tmp_path / "s.json"
    types = {"columns": {"when": {"type": "datetime", "unit": "h"}, "x": "numeric"}}
    schema.write_text(json.dumps(types))
    out = tmp_path / "out.csv"
    args = ["synthesize", str(src), "--schema", str(schema), "-o", str(out)]
    args += ["--method", "gaussian-release", "--epsilon", "1", "--delta", "1e-6"]
    args += ["--seed", "0", "--rows", "300", "--out-of-core", "--blocksize", "20kB"]
    from skdp_synth.exceptions import PrivacyLeakWarning

    with warnings.catch_warnings(record=True) as seen:
        assert cli.main(args) == 0
    err = capsys.readouterr().err
    leaks = [str(w.message) for w in seen if w.category is PrivacyLeakWarning]
    assert len(leaks) == 1 and "time zone was read from the cells" in leaks[0]
    assert "it does not cover what the warnings above say" in err
    dates = pd.read_csv(out, dtype=str)["when"]
    assert dates.str.fullmatch(r"\d{4}-\d\d-\d\d \d\d:00:00\+02:00").all()


def test_kept_values_answer_every_depth():
    """A target given :data:`VALUES` keeps its distinct values and their
    counts (point cells): every node inside it is answered at any depth, so
    the tree never asks for a pass on demand there, and the histogram is
    the in-memory one, noise draws included."""
    rng = np.random.default_rng(4)
    values = np.concatenate([rng.lognormal(5, 1.5, 3000), np.full(500, 12.5)])
    values[rng.random(values.size) < 0.05] = np.nan
    for eps in (0.3, 3.0):
        for seed in range(4):
            counter, refinements = _counter_for(values, False, None, 6)
            occupied = np.flatnonzero(counter.grid > 0)
            counter._refine(
                [
                    (
                        float(counter.edges[k]),
                        float(counter.edges[k + 1]),
                        int(counter.depths[k]),
                        ds.VALUES,
                    )
                    for k in occupied
                ]
            )
            kept = counter.cell_depth == ds.VALUES
            assert kept.all()
            x = values[~np.isnan(values)]
            assert counter.n_kept == np.unique(x).size
            want = privtree_histogram(values, eps, NoiseSource(seed))
            got = ds.privtree_from_counts(counter, eps, NoiseSource(seed))
            np.testing.assert_array_equal(got.edges, want.edges)
            np.testing.assert_array_equal(got.counts, want.counts)
            assert got.missing_count == want.missing_count
            assert len(refinements) == 1  # no pass on demand


def test_stops_with_values_are_bounded_and_leave_their_miss(monkeypatch):
    """With kept values allowed, a pass costs ``VALUE_COST count`` for a
    target whose values are kept and ``2^(s - d)`` for one counted to depth
    ``s``, in all at most the cap (where one level each fits); the miss is
    the cells-only formula with 0 for the kept values (brute force); a
    target with a single row keeps it as soon as a level would cost as
    much; and across columns :func:`joint_stops` gives the shared cap to
    the column whose tree goes deep."""
    rng = np.random.default_rng(5)
    lam = 50.0
    depth = rng.integers(10, 29, 400)
    count = rng.integers(1, 5000, 400)
    count[:30] = 1
    reach = rng.random(400)
    for cap in (2**12, 2**16, 2**19):
        stop, miss = ds._stops(depth, count, reach, lam, cap, values=True)
        values = stop == ds.VALUES
        cells = np.where(values, rb.VALUE_COST * count, 2.0 ** (stop - depth))
        assert cells.sum() <= cap
        assert np.all(values | (stop >= np.minimum(depth + 1, MAX_DEPTH)))
        assert np.all(values | (stop <= MAX_DEPTH))
        want = [
            0.0 if e == ds.VALUES else _brute_miss(d, c, r, e, lam)
            for d, c, r, e in zip(depth, count, reach, stop)
        ]
        np.testing.assert_allclose(miss, want, rtol=1e-9, atol=1e-300)
        assert np.all(values[:30])
    # two columns, one shared cap: the shallow column (few rows a cell,
    # little reach) leaves cells to the deep one (more rows, likely split)
    monkeypatch.setattr(rb, "REFINE_CELLS", 2**10)

    class _Counts:
        def __init__(self, rows):
            self.depths = np.full(64, 10)
            self.grid = np.full(64, rows)

        def distinct_of(self, cells):
            return self.grid[cells]

    counters = {"deep": _Counts(300), "shallow": _Counts(3)}
    chosen = {
        "deep": (np.arange(40), np.full(40, 0.9)),
        "shallow": (np.arange(64), np.full(64, 1e-4)),
    }
    stops = ds.joint_stops(counters, chosen, lam)
    cost = {
        c: np.where(
            stops[c] == ds.VALUES,
            rb.VALUE_COST * counters[c].grid[chosen[c][0]],
            2.0 ** (stops[c] - counters[c].depths[chosen[c][0]]),
        ).sum()
        for c in stops
    }
    assert cost["deep"] + cost["shallow"] <= rb.REFINE_CELLS * 2
    assert cost["deep"] > rb.REFINE_CELLS  # more than one column's share
    assert counters["deep"].miss > counters["shallow"].miss


# ------------------------------------------------------------ memory modes
def _record_refinements(monkeypatch):
    """The DomainStatistics of each fit and the targets of each of its
    refinement passes, in order."""
    fits = []
    real_first, real_refine = ds.DomainStatistics.first_pass, ds.DomainStatistics.refine

    def first_pass(self):
        fits.append((self, []))
        return real_first(self)

    def refine(self, wanted):
        if wanted:
            fits[-1][1].append({c: list(t) for c, t in wanted.items()})
        return real_refine(self, wanted)

    monkeypatch.setattr(ds.DomainStatistics, "first_pass", first_pass)
    monkeypatch.setattr(ds.DomainStatistics, "refine", refine)
    return fits


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_default_mode_keeps_the_values_in_one_refinement(seed, small_grid, monkeypatch):
    """``refine_cells=None`` (the default) is the exact mode: before the
    noise, the distinct values of the grid cells chosen until those left
    out leave at most VALUES_MISS (0.01), every pass on demand the values
    of the grid cells the tree entered -- so pass 1 and one refinement on
    these tables, and the kept entries are the refined cells' distinct
    values."""
    fits = _record_refinements(monkeypatch)
    calls = []
    real = ds.chunk_pass
    monkeypatch.setattr(
        ds, "chunk_pass", lambda *a, **k: calls.append(a[1].__name__) or real(*a, **k)
    )
    frame = _mixed(seed=seed)
    a, b = _fit_both(frame, 7, epsilon=0.5, delta=1e-6, random_state=seed)
    assert b.refine_cells is None
    assert _spec_state(a) == _spec_state(b)
    assert calls == ["first_chunk", "_refine_chunk"]
    ((stats, passes),) = fits
    assert ds.VALUES_MISS == 0.01
    for col, counter in stats.counters.items():
        cells = ds.refine_cells(counter, stats.eps_col, stats.sens, miss=0.01)
        want = counter.grid_targets(cells, None, np.full(len(cells), ds.VALUES))
        assert passes[0].get(col, []) == want
        # the kept entries are the distinct values of the refined cells
        integer, root, unit, clip, root_lo, top = stats.numeric[col]
        x, _ = ds.column_values(frame[col], unit, clip, root_lo, top)
        idx = np.searchsorted(counter.edges, x, "right") - 1
        inside = x[np.isin(idx, sorted(counter.refined))]
        assert counter.lo.size == 0
        np.testing.assert_array_equal(counter.values, np.unique(inside))
    for wanted in passes:
        for targets in wanted.values():
            assert {t[3] for t in targets} == {ds.VALUES}


def test_bounded_mode_keeps_at_most_its_cells(small_grid, monkeypatch):
    """``refine_cells=K`` bounds what the refinements keep: at most ``K``
    cells per numeric column before the noise (shared), at most ``max(K,
    2 m)`` more for each pass on demand of ``m`` targets -- far fewer
    than the distinct values the exact mode keeps -- with the same
    domains."""
    fits = _record_refinements(monkeypatch)
    rng = np.random.default_rng(8)
    n = 200_000
    frame = pd.DataFrame(
        {
            "x": rng.lognormal(8, 2, n),
            "y": np.where(rng.random(n) < 0.3, 0.0, rng.normal(5e3, 1e3, n)),
        }
    )
    cap = 2**10
    a, exact = _fit_both(frame, 4, epsilon=1.0, random_state=2)
    a2, bounded = _fit_both(frame, 4, epsilon=1.0, random_state=2, refine_cells=cap)
    assert _spec_state(a) == _spec_state(exact) == _spec_state(bounded)
    (s_exact, _), (s_bounded, passes) = fits
    kept = sum(c.n_kept for c in s_bounded.counters.values())
    # each pass: the asking column's targets, and the cells predicted for
    # the columns still to come (at most cap each; here only y is, when x
    # asks)
    bound = 0
    for wanted in passes:
        asking, *predicted = wanted.values()
        bound += max(cap, 2 * len(asking)) + cap * len(predicted)
    assert kept <= bound
    assert all(c.cap == cap and not c.exact for c in s_bounded.counters.values())
    assert sum(c.n_kept for c in s_exact.counters.values()) > 10 * bound


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_bounded_mode_refines_when_a_tree_asks_for_every_column_to_come(
    seed, small_grid, monkeypatch
):
    """``refine_cells=K``: no refinement pass before the noise -- the
    first pass is the first tree's that asks for a count below the grid
    (after noise was drawn) -- and every pass also counts the cells
    predicted for the numeric columns whose trees have not run yet,
    never for one whose tree has run: one pass serves the columns to
    come, with the in-memory domains."""
    draws, seen, start = [], [], []
    real_laplace, real_refine = NoiseSource.laplace, ds.DomainStatistics.refine
    real_first = ds.DomainStatistics.first_pass

    def first_pass(self):
        start.append(len(draws))
        return real_first(self)

    def laplace(self, values, scale):
        draws.append(np.size(values))
        return real_laplace(self, values, scale)

    def refine(self, wanted):
        if wanted:
            started = {
                c: getattr(k, "started", False) for c, k in self.counters.items()
            }
            seen.append((len(draws), list(wanted), started))
        return real_refine(self, wanted)

    monkeypatch.setattr(NoiseSource, "laplace", laplace)
    monkeypatch.setattr(ds.DomainStatistics, "refine", refine)
    monkeypatch.setattr(ds.DomainStatistics, "first_pass", first_pass)
    frame = _mixed(seed=seed).drop(columns=["colour", "town"])
    a, b = _fit_both(
        frame, 4, epsilon=2.0, delta=1e-6, random_state=seed, refine_cells=2**6
    )
    assert _spec_state(a) == _spec_state(b)
    assert seen, "no refinement pass: the test table is too easy"
    numeric = ["age", "income", "debt", "atom", "big"]
    for n_drawn, wanted, started in seen:
        assert n_drawn > start[0]  # after the Dask fit's first noise
        asking = [c for c in wanted if started[c]]
        assert asking == wanted[:1]  # the column whose tree asks, first
        # and the columns still to come that the prediction refines
        assert set(wanted[1:]) <= {c for c in numeric if not started[c]}
    # the first pass serves a later column too
    first = seen[0]
    assert len(first[1]) > 1


@pytest.mark.parametrize("seed, parent", [(1, 10), (2, 11), (4, 10)])
def test_bounded_mode_takes_fewer_passes_than_one_before_the_noise(
    seed, parent, small_grid, monkeypatch
):
    """Four skewed, zero-inflated columns (20,000 rows, 4 chunks; the test
    grid 8 deep, 2^8 cells a column): the refinement passes of the bounded
    mode, where each pass serves the columns still to come, against
    ``parent`` -- the passes of the earlier rule (one pass before the
    noise for every column, then passes on demand for one column each)
    on the same data and noise."""
    calls = []
    real = ds.chunk_pass
    monkeypatch.setattr(
        ds, "chunk_pass", lambda *a, **k: calls.append(a[1].__name__) or real(*a, **k)
    )
    frame = four_skewed_columns(seed, n=20_000)
    a, b = _fit_both(frame, 4, epsilon=2.0, random_state=seed, refine_cells=2**8)
    assert _spec_state(a) == _spec_state(b)
    assert calls.count("_refine_chunk") <= parent - 3


def test_refine_cells_is_validated_and_a_schema_key(tmp_path):
    from sklearn.utils._param_validation import InvalidParameterError

    from skdp_synth.cli._schema import parse_schema

    frame = dd.from_pandas(_mixed(500), npartitions=2)
    with pytest.raises(InvalidParameterError, match="refine_cells"):
        BooleanEncoder(epsilon=1.0, delta=1e-6, refine_cells=0).fit(frame)
    schema = parse_schema({"refine_cells": 4096, "columns": {"x": "numeric"}})
    assert schema.encoder["refine_cells"] == 4096


@pytest.mark.parametrize("shape", ["uniform", "point", "skewed", "few"])
def test_miss_bound_holds_for_the_tree(shape):
    """:func:`_domain_stats._miss` bounds the expected number of occupied
    cells ``j`` levels below a target (reached and split) that PrivTree
    splits: the tree drawn below a cell of 12,000 rows (or 300), the
    split nodes of each depth counted over 4,000 draws, against the bound
    (at most 4 standard errors above)."""
    rng = np.random.default_rng(12)
    lam, d, levels = 60.0, 16, np.arange(1, 9)
    bias = lam * np.log(2.0)
    n = 300 if shape == "few" else 12_000
    x = {
        "uniform": rng.random(n),
        "point": np.full(n, 0.3),
        "skewed": rng.beta(0.3, 3.0, n),
        "few": rng.random(n),
    }[shape]
    x = np.sort(x)
    draws = 4000
    split = np.zeros((draws, levels.size))
    for k in range(draws):
        nodes = [(0.0, 1.0)]  # the target, reached and split
        for j, t in enumerate(d + levels):
            nodes = [c for a, b in nodes for c in ((a, (a + b) / 2), ((a + b) / 2, b))]
            lo = np.searchsorted(x, [a for a, _ in nodes])
            hi = np.searchsorted(x, [b for _, b in nodes])
            c = (hi - lo).astype(float)
            noisy = np.maximum(c - t * bias, -bias) + rng.laplace(0, lam, c.size)
            keep = noisy > 0
            split[k, j] = np.sum(keep & (c > 0))
            nodes = [nd for nd, s in zip(nodes, keep) if s]
    bound = ds._miss(np.array([d]), np.array([float(n)]), np.ones(1), lam, levels)[0]
    mean = split.mean(axis=0)
    se = split.std(axis=0) / np.sqrt(draws)
    assert np.all(mean <= bound + 4 * se + 1e-12)
    if shape in ("uniform", "skewed"):  # the split-rows bound is tighter here
        flat = np.minimum(n, 2.0**levels) * np.cumprod(
            ds.split_probability(np.full(levels.size, n), d + levels, lam)
        )
        assert bound[-1] < flat[-1]


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("seed", [1, 3])
def test_trees_run_ahead_plan_the_passes_in_either_column_order(
    seed, reverse, small_grid, monkeypatch
):
    """Bounded mode, seeded noise: a pass on demand runs the trees ahead on
    a copy of the noise and counts the cells they will enter, so a column
    whose tree comes after the first pass takes no pass of its own, in the
    table's column order or reversed: at most 3 refinement passes on four
    skewed columns (20,000 rows, the 8-deep test grid, ``2^8`` cells), where
    predicting them took 7 or 8 -- and the in-memory domains."""
    calls = []
    real = ds.chunk_pass
    monkeypatch.setattr(
        ds, "chunk_pass", lambda *a, **k: calls.append(a[1].__name__) or real(*a, **k)
    )
    frame = four_skewed_columns(seed, n=20_000)
    if reverse:
        frame = frame[frame.columns[::-1]]
    a, b = _fit_both(frame, 4, epsilon=2.0, random_state=seed, refine_cells=2**8)
    assert _spec_state(a) == _spec_state(b)
    assert 1 <= calls.count("_refine_chunk") <= 3


def test_opendp_noise_is_never_run_ahead(small_grid, monkeypatch):
    """``random_state=None`` (OpenDP's noise, which cannot be drawn twice):
    no tree runs ahead; the passes are planned from the prediction."""

    def never(*args):
        raise AssertionError("ran ahead on noise that cannot be drawn twice")

    monkeypatch.setattr(ds, "run_ahead", never)
    ddf = dd.from_pandas(four_skewed_columns(1, n=20_000), npartitions=4)
    with warnings.catch_warnings(), dask.config.set(scheduler="threads"):
        warnings.simplefilter("ignore")
        enc = BooleanEncoder(epsilon=2.0, refine_cells=2**8).fit(ddf)
    assert len(enc.specs_) == 4


@pytest.mark.parametrize("refine_cells", MODES)
@pytest.mark.parametrize("seed", [0, 1])
def test_dask_fit_learns_the_in_memory_heap_below_the_floor(
    seed, refine_cells, small_grid
):
    """A heap at a value that is not round (60 % of the rows at 1.386294)
    splits below the resolution floor, on its own child stream
    (``_tree_grid.below_floor_leaves``): the out-of-core fit, and its
    look-ahead over bounded counts, learn the same leaves and counts."""
    rng = np.random.default_rng(seed)
    n = 6000
    frame = pd.DataFrame(
        {  # the heap's column after another's histogram: its child stream
            "x": rng.normal(0.0, 1.0, n),  # is the second one spawned
            "g": rng.choice(list("ab"), n),
            "lfam": np.where(rng.random(n) < 0.6, 1.386294, rng.normal(3, 0.5, n)),
        }
    )
    a, b = _fit_both(
        frame, 5, epsilon=2.0, delta=1e-6, random_state=seed, refine_cells=refine_cells
    )
    assert _spec_state(a) == _spec_state(b)
    edges = np.asarray(a.specs_[2].fine.edges)
    j = int(np.searchsorted(edges, 1.386294, "right")) - 1
    assert edges[j + 1] - edges[j] < 1e-6  # the heap's chain was kept
