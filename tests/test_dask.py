"""Out-of-core fits: a Dask input gives the in-memory fit .

Every private estimator but the microaggregator reads its data only through
additive statistics (``skdp_synth._stats``) summed over chunks by
``skdp_synth._chunked.reduce_rows``. The in-memory path is the one-chunk
case of the same code, so for the same seed the fitted release must be the
same:

* exactly (``assert_array_equal``) where the statistic is integer-valued --
  Boolean data: marginal counts, Walsh sums, the Gram matrix and per-cell
  sums of 0/1 rows are integers, which float64 sums exactly in any order;
* up to the order of floating-point summation for box data
  (``assert_allclose(rtol=1e-12)``: chunk sums of ~10^3 doubles of size
  <= 1 differ by a few ulps; PROJ and the lattice labels are then stable at
  these seeds, which the test checks by the exact equality of the labels'
  counts through ``weights_``' noise being identical).

All tests run on an in-process ``dask.distributed.LocalCluster`` (one
worker, two threads), started once for the module.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth import (
    BudgetAccountant,
    CovarianceLossMicroaggregator,
    DampedPrivateSynthesizer,
    PrivateSampler,
    ProjectedGaussianRelease,
    make_synthesis_pipeline,
)
from skdp_synth.exceptions import PrivacyLeakWarning, SmallTableWarning
from skdp_synth.preprocessing import BooleanEncoder

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

pytestmark = [
    pytest.mark.filterwarnings("ignore::skdp_synth.exceptions.PrivacyBudgetWarning"),
    # the distributed scheduler's own chatter (port choice, GC timings)
    pytest.mark.filterwarnings("ignore::UserWarning:distributed.*"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]


@pytest.fixture(scope="module")
def client():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            processes=False,
            n_workers=1,
            threads_per_worker=2,
            dashboard_address=":0",
        )
        cl = distributed.Client(cluster, set_as_default=True)
    yield cl
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cl.close()
        cluster.close()


@pytest.fixture(scope="module")
def bits():
    """2000 x 7 correlated Boolean rows, and their Dask array in 5 chunks."""
    rng = np.random.default_rng(7)
    base = rng.random((2000, 1))
    X = (rng.random((2000, 7)) < 0.25 + 0.5 * base).astype(np.uint8)
    return X, da.from_array(X, chunks=(450, 7))


def _fit_both(make, X, dX, client):
    a = make().fit(X)
    b = make().fit(dX)
    return a, b


# ----------------------------------------------------------------- equality
@pytest.mark.parametrize(
    "params",
    [
        {},  # mechanism "auto" = residual, attribute-level tables
        {"mechanism": "correlated-weighted"},
        {"mechanism": "isotropic-gaussian"},
        {"mechanism": "laplace", "d": 1},
    ],
    ids=["residual", "correlated-weighted", "isotropic", "laplace"],
)
def test_release_equal_to_in_memory(params, bits, client):
    X, dX = bits
    a, b = _fit_both(
        lambda: ProjectedGaussianRelease(random_state=3, **params), X, dX, client
    )
    # integer marginal counts: the release is bit-identical
    np.testing.assert_array_equal(a.released_, b.released_)
    assert a.n_estimate_ == b.n_estimate_
    assert a.privacy_guarantee_ == b.privacy_guarantee_
    np.testing.assert_array_equal(
        a.sample(50, random_state=1), b.sample(50, random_state=1)
    )


def test_release_explicit_workload_equal(bits, client):
    X, dX = bits
    X, dX = X[:, :4], dX[:, :4]
    # three linear queries over the 16 record types of {0,1}^4
    W = np.random.default_rng(0).integers(0, 2, size=(3, 16)).astype(float)
    a, b = _fit_both(
        lambda: ProjectedGaussianRelease(workload=W, random_state=3), X, dX, client
    )
    # answers A x from the integer histogram x: the same product in both paths
    np.testing.assert_array_equal(a.released_, b.released_)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"parameters": "paper", "centre": None},
        {"keep_diagnostics": True},
    ],
    ids=["optimal", "paper", "diagnostics"],
)
def test_damped_boolean_equal_to_in_memory(params, bits, client):
    X, dX = bits
    a, b = _fit_both(
        lambda: DampedPrivateSynthesizer(random_state=5, **params), X, dX, client
    )
    # pass 1 (Gram of 0/1 rows) and pass 2 (cell counts and sums) are integers
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.weights_, b.weights_)
    np.testing.assert_array_equal(a.cell_means_, b.cell_means_)
    np.testing.assert_array_equal(
        a.sample(40, random_state=2), b.sample(40, random_state=2)
    )
    if params.get("keep_diagnostics"):
        with pytest.warns(PrivacyLeakWarning):
            assert a.residual_norm_ == b.residual_norm_


def test_damped_box_equal_up_to_summation_order(client):
    rng = np.random.default_rng(11)
    X = rng.normal(size=(1500, 4)).clip(-3, 3) * [1, 2, 3, 4]
    dX = da.from_array(X, chunks=(400, 4))
    bounds = (np.full(4, -12.0), np.full(4, 12.0))
    make = lambda: DampedPrivateSynthesizer(  # noqa: E731
        domain="box", bounds=bounds, random_state=4
    )
    a, b = make().fit(X), make().fit(dX)
    # float sums in another order: equal to 1e-12 (relative)
    np.testing.assert_allclose(b.components_, a.components_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b.weights_, a.weights_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b.cell_means_, a.cell_means_, rtol=1e-12, atol=1e-12)


def test_damped_box_inferred_bounds_warn_and_match(client):
    rng = np.random.default_rng(12)
    X = rng.uniform(-1, 5, size=(800, 3))
    dX = da.from_array(X, chunks=(300, 3))
    with pytest.warns(PrivacyLeakWarning, match="inferred from the data"):
        a = DampedPrivateSynthesizer(domain="box", random_state=1).fit(X)
    with pytest.warns(PrivacyLeakWarning, match="inferred from the data"):
        b = DampedPrivateSynthesizer(domain="box", random_state=1).fit(dX)
    np.testing.assert_array_equal(a.bounds_[0], b.bounds_[0])  # min/max: exact
    np.testing.assert_array_equal(a.bounds_[1], b.bounds_[1])
    np.testing.assert_allclose(b.cell_means_, a.cell_means_, rtol=1e-12, atol=1e-12)


def test_private_sampler_equal_to_in_memory(bits, client):
    X, dX = bits
    a, b = _fit_both(lambda: PrivateSampler(k=30, random_state=2), X, dX, client)
    # integer Walsh sums: the same density, the same paid rows
    np.testing.assert_array_equal(a.reduced_space_, b.reduced_space_)
    np.testing.assert_array_equal(a._density, b._density)
    np.testing.assert_array_equal(a.sample(), b.sample())
    assert a.epsilon_ == b.epsilon_


def test_statistic_is_summed_over_chunks(bits, client):
    """reduce_rows on chunks = the statistic of the whole table (a direct check)."""
    from skdp_synth._chunked import ChunkedRows, reduce_rows
    from skdp_synth._stats import moment_sums, walsh_sums
    from skdp_synth.blocks import Blocks

    X, dX = bits
    U = ChunkedRows(
        dX, "boolean", (np.zeros(7), np.ones(7)), Blocks.binary(7), list("abcdefg")
    )
    assert U.n_chunks == 5 and U.shape == X.shape
    gram, sums = reduce_rows(U, moment_sums)
    Xf = X.astype(np.float64)
    np.testing.assert_array_equal(gram, Xf.T @ Xf)
    np.testing.assert_array_equal(sums, Xf.sum(axis=0))
    np.testing.assert_array_equal(reduce_rows(U, walsh_sums, 2), walsh_sums(X, 2))


def test_unknown_chunk_sizes_and_dask_frame(bits, client):
    X, _ = bits
    frame = pd.DataFrame(X, columns=[f"b{j}" for j in range(7)])
    ddf = dd.from_pandas(frame, npartitions=3)
    a = ProjectedGaussianRelease(random_state=0).fit(frame)
    b = ProjectedGaussianRelease(random_state=0).fit(ddf)
    np.testing.assert_array_equal(a.released_, b.released_)
    assert list(b.feature_names_in_) == list(frame.columns)
    out = b.sample(5, random_state=0)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(frame.columns)
    # an array whose chunk sizes Dask does not know: n is computed first
    unknown = ddf.to_dask_array()
    assert np.isnan(unknown.chunks[0][0])
    c = ProjectedGaussianRelease(neighbouring="replace-one", random_state=0)
    c.fit(unknown)
    assert c.n_samples_fit_ == X.shape[0]
    a.set_params(neighbouring="replace-one").fit(frame)
    np.testing.assert_array_equal(a.released_, c.released_)


# --------------------------------------------------------------- encoder
def _table(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], n),
            "size": rng.choice(["S", "M", "L"], n, p=[0.5, 0.3, 0.2]),
            "age": rng.uniform(0, 90, n).round(),
            "pet": rng.choice(["cat", "dog", None], n),
        }
    )


SCHEMA = {
    "categories": {"colour": ["red", "green", "blue"], "pet": ["cat", "dog", None]},
    "ordinal": {"size": ["S", "M", "L"]},
    "bin_edges": {"age": [0, 18, 30, 45, 65, 90]},
}


@pytest.mark.parametrize(
    "make",
    [
        lambda: ProjectedGaussianRelease(random_state=1),
        lambda: DampedPrivateSynthesizer(random_state=1),
        lambda: CovarianceLossMicroaggregator(k=60, domain="boolean", random_state=1),
        lambda: CovarianceLossMicroaggregator(
            k=60, partition="pinning", domain="boolean", random_state=1
        ),
    ],
    ids=["release", "damped", "microagg", "microagg-pinning"],
)
def test_pipeline_on_dask_frame_equal(make, client):
    frame = _table()
    ddf = dd.from_pandas(frame, npartitions=4)
    p1 = make_synthesis_pipeline(BooleanEncoder(random_state=0, **SCHEMA), make())
    p2 = make_synthesis_pipeline(BooleanEncoder(random_state=0, **SCHEMA), make())
    p1.fit(frame)
    p2.fit(ddf)
    assert p1[-1].blocks_ == p2[-1].blocks_
    np.testing.assert_array_equal(
        p1[-1].sample(30, random_state=4), p2[-1].sample(30, random_state=4)
    )
    got = p2.sample(30, random_state=4)
    want = p1.sample(30, random_state=4)
    assert list(got.columns) == list(frame.columns)
    # same rows; the Dask frame's strings may come back as a string dtype
    np.testing.assert_array_equal(
        got.astype(object).where(got.notna(), None).to_numpy(),
        want.astype(object).where(want.notna(), None).to_numpy(),
    )


def test_encoder_on_dask_frame_needs_a_schema(client):
    ddf = dd.from_pandas(_table(100), npartitions=2)
    with pytest.raises(ValueError, match=r"\['size', 'age'\] have no declared domain"):
        BooleanEncoder(categories=SCHEMA["categories"]).fit(ddf)


def test_encoder_chunk_error_names_chunk_and_column(client):
    frame = _table(400)
    frame.loc[350, "colour"] = "secret-colour"
    ddf = dd.from_pandas(frame, npartitions=4)
    pipe = make_synthesis_pipeline(
        BooleanEncoder(**SCHEMA), DampedPrivateSynthesizer(random_state=0)
    )
    with pytest.raises(ValueError, match=r"chunk 3 of the data: column 'colour'") as e:
        pipe.fit(ddf)
    assert "secret" not in str(e.value) and "350" not in str(e.value)


# -------------------------------------------------------- bad input, state
def _bad(X, row, col, value):
    Y = X.astype(np.float64).copy()
    Y[row, col] = value
    return da.from_array(Y, chunks=(450, 7))


@pytest.mark.parametrize(
    "value, match",
    [
        (np.nan, r"chunk 3 of the training data, column '5': missing \(NaN\)"),
        (np.inf, r"chunk 3 of the training data, column '5': missing \(NaN\)"),
        (0.5, r"chunk 3 of the training data, column '5': values other than 0/1"),
        (7.0, r"chunk 3 of the training data, column '5': values other than 0/1"),
    ],
)
@pytest.mark.parametrize(
    "make",
    [
        lambda: ProjectedGaussianRelease(neighbouring="replace-one", random_state=0),
        lambda: DampedPrivateSynthesizer(random_state=0),
        lambda: PrivateSampler(k=5, random_state=0),
    ],
    ids=["release", "damped", "sampler"],
)
def test_bad_chunk_raises_naming_chunk_and_column(make, value, match, bits, client):
    X, _ = bits
    accountant = BudgetAccountant(epsilon=1e6, delta=0.5)
    est = make().set_params(accountant=accountant)
    with pytest.raises(ValueError, match=match) as e:
        est.fit(_bad(X, 1400, 5, value))
    assert "1400" not in str(e.value) and "7.0" not in str(e.value)
    # nothing fitted, nothing spent
    assert not hasattr(est, "n_features_in_")
    assert accountant.spent == []


def test_bad_chunk_box_bounds(client):
    X = np.random.default_rng(0).uniform(0, 1, size=(600, 3))
    X[590, 2] = 5.0
    est = DampedPrivateSynthesizer(domain="box", bounds=(0.0, 1.0), random_state=0)
    with pytest.raises(
        ValueError, match=r"chunk 2 of the training data, column '2': values outside"
    ):
        est.fit(da.from_array(X, chunks=(250, 3)))


def test_invalid_block_codes_in_a_chunk(client):
    frame = _table(300)
    enc = BooleanEncoder(**SCHEMA).fit(frame)
    B = enc.transform(frame).astype(np.float64)
    B[260, :3] = 0  # no colour: an invalid one-hot code
    est = DampedPrivateSynthesizer(random_state=0, blocks=enc.blocks_)
    match = r"chunk 2 .*invalid codes in blocks \['colour'\]"
    with pytest.raises(ValueError, match=match):
        est.fit(da.from_array(B, chunks=(100, B.shape[1])))


def test_failed_fit_keeps_previous_state(bits, client):
    X, dX = bits
    est = ProjectedGaussianRelease(random_state=0).fit(X)
    before = est.released_.copy()
    with pytest.raises(ValueError, match="chunk 3"):
        est.fit(_bad(X, 1400, 5, 2.0))
    np.testing.assert_array_equal(est.released_, before)


def test_n_is_taken_before_the_data_is_read(bits, client):
    """The budget check uses the public n from the chunk sizes: a refused
    budget raises before any chunk is read (a bad chunk is never reached)."""
    from skdp_synth.exceptions import BudgetError

    X, _ = bits
    accountant = BudgetAccountant(epsilon=0.5)
    est = DampedPrivateSynthesizer(epsilon=1.0, accountant=accountant)
    with pytest.raises(BudgetError):
        est.fit(_bad(X, 10, 0, np.nan))


@pytest.mark.parametrize("source", ["parquet", "parquet-row-groups", "pandas", "csv"])
def test_partition_lengths_public_paths(source, tmp_path):
    """Each partition's length, by the metadata path (Parquet footers,
    pandas) or by counting (any other frame), equals the rows Dask reads
    for that partition; a transformed frame is counted, not guessed."""
    pytest.importorskip("pyarrow")
    from skdp_synth._chunked import partition_lengths

    frame = pd.DataFrame({"a": np.arange(2300) % 2, "b": np.arange(2300) % 3 == 0})
    if source.startswith("parquet"):
        folder = tmp_path / "pq"
        folder.mkdir()
        for i, (lo, hi) in enumerate([(0, 1000), (1000, 1700), (1700, 2300)]):
            frame.iloc[lo:hi].to_parquet(folder / f"p{i}.parquet", row_group_size=300)
        ddf = dd.read_parquet(folder, split_row_groups=source.endswith("groups"))
    elif source == "pandas":
        ddf = dd.from_pandas(frame, npartitions=4)
    else:
        frame.to_csv(tmp_path / "x.csv", index=False)
        ddf = dd.read_csv(tmp_path / "x.csv", blocksize=3000)
    counted = tuple(int(v) for v in ddf.map_partitions(len).compute())
    assert ddf.npartitions > 1 and sum(counted) == 2300
    assert partition_lengths(ddf) == counted
    filtered = ddf[ddf["a"] == 1]
    want = tuple(int(v) for v in filtered.map_partitions(len).compute())
    assert partition_lengths(filtered) == want and sum(want) == 1150


def test_each_pass_returns_pyarrow_pool_memory(bits, client, monkeypatch):
    """After every data pass the reader's pool is asked to return its freed
    buffers (else the sampler's m x D matrix came on top of them: peak
    2.1 GiB at 10^8 x 50)."""
    pa = pytest.importorskip("pyarrow")
    calls = []
    pool = pa.default_memory_pool()

    class Pool:
        def release_unused(self):
            calls.append(1)
            pool.release_unused()

    monkeypatch.setattr(pa, "default_memory_pool", lambda: Pool())
    X, dX = bits
    PrivateSampler(k=5, random_state=0).fit(dX)
    assert len(calls) == 1  # one pass
    DampedPrivateSynthesizer(random_state=0).fit(dX)
    assert len(calls) == 3  # two passes


# -------------------------------------------------------------- chunked CLI
CLI_SCHEMA = {
    "categories": {"colour": ["red", "green", "blue"], "flag": [0, 1]},
    "ordinal": {"size": ["S", "M", "L"]},
    "bin_edges": {"age": [0, 18, 30, 45, 65, 90]},
    "missing": "always",
}


def _cli_table(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], n),
            "size": rng.choice(["S", "M", "L"], n),
            "age": rng.uniform(0, 90, n).round(),
            "flag": rng.choice([0, 1], n),
        }
    )
    frame.loc[5, "age"] = np.nan
    return frame


def _synthesize(tmp_path, src, out, *extra):
    import json

    from skdp_synth.cli import _main as cli

    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(CLI_SCHEMA))
    return cli.main(
        [
            "synthesize",
            str(src),
            "--method",
            "damped",
            "--epsilon",
            "1",
            "--schema",
            str(schema),
            "-o",
            str(out),
            "--seed",
            "0",
            "--chunk-rows",
            "700",
            *extra,
        ]
    )


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_cli_out_of_core_round_trip(fmt, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    frame = _cli_table()
    if fmt == "csv":
        src = tmp_path / "in.csv"
        frame.to_csv(src, index=False)
        extra = ("--out-of-core", "--blocksize", "30kB")
    else:
        src = tmp_path / "in.parquet"
        frame.to_parquet(src, row_group_size=800)
        extra = ()
    out = tmp_path / f"out.{fmt}"
    # the damped method on a small table says so, and the command line shows it
    with pytest.warns(SmallTableWarning, match="fewer than 10,000 records"):
        assert _synthesize(tmp_path, src, out, "--rows", "2000", *extra) == 0
    got = pd.read_csv(out) if fmt == "csv" else pd.read_parquet(out)
    assert list(got.columns) == list(frame.columns) and len(got) == 2000
    # missing="always": every column may come out missing
    assert got["colour"].dropna().isin(["red", "green", "blue"]).all()
    assert set(got["flag"].dropna().unique()) <= {0, 1}
    err = capsys.readouterr().err
    assert "out of core" in err and "epsilon=1" in err
    # not the number of input chunks (row groups, or ceil(bytes / blocksize)):
    # a function of n without noise, which differs between neighbouring tables
    assert "chunks" not in err.replace("fit (chunks)", "")


def test_cli_out_of_core_equals_in_memory_fit(tmp_path):
    """The CLI's chunked fit releases what the in-memory pipeline releases."""
    from skdp_synth.cli._csv import _read_csv
    from skdp_synth.cli._out_of_core import _read_chunked

    frame = _cli_table(1500)
    src = tmp_path / "in.csv"
    frame.to_csv(src, index=False)
    fits = []
    for data in (
        _read_csv(str(src), CLI_SCHEMA),
        _read_chunked(str(src), CLI_SCHEMA, 20_000),
    ):
        pipe = make_synthesis_pipeline(
            BooleanEncoder(**CLI_SCHEMA), DampedPrivateSynthesizer(random_state=0)
        )
        fits.append(pipe.fit(data)[-1])
    np.testing.assert_array_equal(fits[0].weights_, fits[1].weights_)
    np.testing.assert_array_equal(fits[0].cell_means_, fits[1].cell_means_)


def test_cli_bad_chunk_leaves_no_output(tmp_path, capsys):
    frame = _cli_table()
    frame.loc[2900, "colour"] = "mauve"
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    frame.to_csv(src, index=False)
    # the fit starts on the chunks before the bad one (and warns of the size)
    with pytest.warns(SmallTableWarning, match="fewer than 10,000 records"):
        code = _synthesize(tmp_path, src, out, "--out-of-core", "--blocksize", "30kB")
    assert code == 2
    err = capsys.readouterr().err
    assert "chunk" in err and "'colour'" in err and "mauve" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "schema.json"]


def _ragged_csv(tmp_path, bad_line, quoted=False):
    """``_cli_table()`` as CSV with line ``bad_line`` (1-based, after the header)
    replaced by a short or long row; optionally with quoted cells."""
    frame = _cli_table()
    src = tmp_path / "in.csv"
    frame.to_csv(src, index=False, quoting=1 if quoted else 0)
    return src, src.read_text().splitlines(keepends=True)


@pytest.mark.parametrize("quoted", [False, True], ids=["bytes", "csv-module"])
@pytest.mark.parametrize(
    "row, match",
    [
        # neither how many rows nor how many fields (counts of private
        # rows): both short rows say the same
        ("red,S,33\n", r"fewer fields than the header's 4 \(not shown\)"),
        ("red,S\n", r"fewer fields than the header's 4 \(not shown\)"),
        ("red,S,33,1,7\n", r"more fields than the header's 4, past column 'flag'"),
    ],
    ids=["short-1", "short-2", "long"],
)
def test_cli_ragged_row_in_a_chunk(row, match, quoted, tmp_path, capsys):
    """A short row is not read as a row of missing cells (pandas pads it, and
    ``missing="always"`` would accept it): exit 2, chunk and column named,
    no value shown, no output file."""
    import re

    src, lines = _ragged_csv(tmp_path, 2500, quoted)
    if quoted:
        row = ",".join(f'"{v}"' for v in row.strip().split(",")) + "\n"
    lines[2500] = row
    src.write_text("".join(lines))
    out = tmp_path / "out.csv"
    code = _synthesize(tmp_path, src, out, "--out-of-core", "--blocksize", "30kB")
    assert code == 2
    err = capsys.readouterr().err
    assert re.search(r"chunk [1-9]\d*: rows with " + match, err), err
    assert "red" not in err and "33" not in err.split("chunk")[1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "schema.json"]


def test_cli_chunked_csv_blank_lines_and_quotes_are_rows_as_in_memory(tmp_path):
    """Blank lines are skipped and quoted cells read, as in memory: the
    chunked frame holds the rows :func:`_read_csv` reads, chunk by chunk."""
    from skdp_synth.cli._csv import _read_csv
    from skdp_synth.cli._out_of_core import _read_chunked

    src, lines = _ragged_csv(tmp_path, 0, quoted=True)
    lines.insert(700, "\n")
    lines.insert(1500, "\r\n")
    src.write_text("".join(lines))
    whole = _read_csv(str(src), CLI_SCHEMA)
    chunked = _read_chunked(str(src), CLI_SCHEMA, 20_000)
    assert chunked.npartitions > 2
    got = chunked.compute().reset_index(drop=True)
    pd.testing.assert_frame_equal(got, whole, check_dtype=False)
    # unquoted: the byte-counting check, same rows
    frame = _cli_table()
    frame.to_csv(src, index=False)
    got = _read_chunked(str(src), CLI_SCHEMA, 20_000).compute()
    pd.testing.assert_frame_equal(
        got.reset_index(drop=True), _read_csv(str(src), CLI_SCHEMA), check_dtype=False
    )


@pytest.mark.parametrize("piece", [1, 7, 64, 1 << 22])
def test_commas_per_line_exact_across_pieces(piece):
    """The byte-level field count equals :mod:`csv`'s on unquoted lines,
    whatever the piece size of the cumulative count (lines longer than a
    piece, 300 commas: beyond a uint8 count)."""
    import csv
    import io

    from skdp_synth.cli._out_of_core import _commas_per_line

    rng = np.random.default_rng(0)
    lines = [",".join("1" * int(k)) for k in rng.integers(1, 40, 200)] + ["0" * 301]
    lines.insert(50, "," * 300)
    data = ("\n".join(lines) + "\n").encode()
    buf = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(buf == ord("\n"))
    starts = np.concatenate([[0], ends[:-1] + 1])
    got = _commas_per_line(buf, starts, ends, piece=piece) + 1
    want = [len(row) for row in csv.reader(io.StringIO(data.decode()))]
    np.testing.assert_array_equal(got, want)


def test_cli_out_of_core_needs_a_full_schema(tmp_path, capsys):
    import json

    from skdp_synth.cli import _main as cli

    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    _cli_table(200).to_csv(src, index=False)
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({"categories": CLI_SCHEMA["categories"]}))
    args = ["synthesize", str(src), "--method", "damped", "--epsilon", "1"]
    args += ["--schema", str(schema), "-o", str(out), "--out-of-core"]
    assert cli.main(args) == 2
    assert "no declared domain" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("dtype, value", [(np.uint8, 2), (np.int8, -1), (np.int64, 3)])
def test_bad_integer_chunk(dtype, value, bits, client):
    X, _ = bits
    Y = X.astype(dtype)
    Y[1999, 6] = value
    with pytest.raises(ValueError, match=r"chunk 4 .*column '6': values other than"):
        DampedPrivateSynthesizer(random_state=0).fit(da.from_array(Y, chunks=(450, 7)))


def test_empty_and_row_blocked_chunks(bits, client, monkeypatch):
    """Empty chunks add nothing; a chunk reduced in row blocks gives its sum."""
    from skdp_synth import _chunked

    X, _ = bits
    monkeypatch.setattr(_chunked, "SUB_ROWS", 128)  # several blocks per chunk
    dX = da.from_array(X, chunks=((1000, 0, 600, 400), (7,)))
    assert 0 in dX.chunks[0]
    for make in (
        lambda: ProjectedGaussianRelease(random_state=3),
        lambda: DampedPrivateSynthesizer(random_state=5),
        lambda: PrivateSampler(k=30, random_state=2),
    ):
        a, b = make().fit(X), make().fit(dX)
        np.testing.assert_array_equal(
            a.sample(20, random_state=1), b.sample(20, random_state=1)
        )


def test_cli_out_of_core_release_caps_its_model_table(tmp_path, capsys, monkeypatch):
    """Out of core, gaussian-release gets a bounded generator table (said on
    standard error) unless the user sets max_model_rows."""
    import json

    from skdp_synth import ProjectedGaussianRelease
    from skdp_synth.cli import _main as cli
    from skdp_synth.cli import _out_of_core

    seen = []
    fit = ProjectedGaussianRelease._fit_generator

    def spy(self, measurements, source):
        seen.append(self.max_model_rows)
        return fit(self, measurements, source)

    monkeypatch.setattr(ProjectedGaussianRelease, "_fit_generator", spy)
    monkeypatch.setattr(_out_of_core, "OUT_OF_CORE_MODEL_ROWS", 300)
    frame = _cli_table(1500)
    src = tmp_path / "in.csv"
    frame.to_csv(src, index=False)
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(CLI_SCHEMA))
    base = ["synthesize", str(src), "--method", "gaussian-release"]
    base += ["--epsilon", "1", "--delta", "1e-6", "--schema", str(schema)]
    base += ["--seed", "0", "--out-of-core", "--rows", "500"]
    assert cli.main([*base, "-o", str(tmp_path / "a.csv")]) == 0
    assert "capped at 300 rows" in capsys.readouterr().err
    args = [*base, "-o", str(tmp_path / "b.csv"), "--param", "max_model_rows=50"]
    assert cli.main(args) == 0
    assert "capped" not in capsys.readouterr().err
    assert seen == [300, 50]
    assert len(pd.read_csv(tmp_path / "a.csv")) == 500


# ------------------------------------------------------ microaggregator
@pytest.mark.parametrize(
    "params",
    [{"k": 10}, {"k": 200}, {"k": 250, "n_components": 3}, {"k": 1999}],
    ids=["k10", "k200", "k250-t3", "k1999"],
)
def test_microaggregator_input_order_equal_to_in_memory(params, bits, client):
    X, dX = bits

    def make():
        return CovarianceLossMicroaggregator(
            division="input_order", domain="boolean", random_state=0, **params
        )

    a, b = _fit_both(make, X, dX, client)
    np.testing.assert_array_equal(b.labels_, a.labels_)
    np.testing.assert_array_equal(b.centroids_, a.centroids_)
    np.testing.assert_array_equal(b.group_sizes_, a.group_sizes_)
    for name in ("n_cells_", "cell_loss_", "residual_norm_", "residual_mass_"):
        assert getattr(b, name) == getattr(a, name), name
    assert b.covariance_loss_ == a.covariance_loss_
    assert b.covariance_loss_bound_ == a.covariance_loss_bound_
    np.testing.assert_array_equal(b.transform(X), a.transform(X))
    np.testing.assert_array_equal(b.transform(X[::-3]), a.transform(X[::-3]))
    np.testing.assert_array_equal(b.sample(50), a.sample(50))


def test_microaggregator_dask_frame_and_box_data(client):
    rng = np.random.default_rng(3)
    base = rng.random((1500, 1))
    X = rng.random((1500, 4)) * base
    frame = pd.DataFrame(X, columns=list("abcd"))
    ddf = dd.from_pandas(frame, npartitions=4)

    def make():
        return CovarianceLossMicroaggregator(
            k=150, division="input_order", bounds=(0.0, 1.0)
        )

    a, b = make().fit(frame), make().fit(ddf)
    np.testing.assert_array_equal(b.labels_, a.labels_)
    np.testing.assert_allclose(b.centroids_, a.centroids_, rtol=1e-12, atol=1e-15)
    out = b.transform(frame)
    assert list(out.columns) == list("abcd")
    np.testing.assert_allclose(out.to_numpy(), b.centroids_[b.labels_])


def _assert_same_microaggregation(a, b, X):
    np.testing.assert_array_equal(b.labels_, a.labels_)
    np.testing.assert_array_equal(b.centroids_, a.centroids_)
    np.testing.assert_array_equal(b.group_sizes_, a.group_sizes_)
    for name in ("n_cells_", "cell_loss_", "residual_mass_", "n_components_"):
        assert getattr(b, name) == getattr(a, name), name
    np.testing.assert_array_equal(b.residual_norm_, a.residual_norm_)
    np.testing.assert_array_equal(b.pinned_features_, a.pinned_features_)
    assert b.covariance_loss_ == a.covariance_loss_
    assert b.covariance_loss_bound_ == a.covariance_loss_bound_
    np.testing.assert_array_equal(b.transform(X), a.transform(X))
    np.testing.assert_array_equal(b.transform(X[::-3]), a.transform(X[::-3]))
    np.testing.assert_array_equal(b.sample(50), a.sample(50))


@pytest.mark.parametrize(
    "params",
    [
        {"k": 10},
        {"k": 200},
        {"k": 250, "n_components": 3},
        {"k": 300, "n_components": 0},
        {"k": 1999},
    ],
    ids=["k10", "k200", "k250-t3", "k300-t0", "k1999"],
)
def test_microaggregator_bisection_equal_to_in_memory(params, bits, client):
    """The default division from Dask: the sketch gathered on the driver and
    the same equipartition give the in-memory groups exactly (Boolean data)."""
    X, dX = bits

    def make():
        return CovarianceLossMicroaggregator(domain="boolean", random_state=0, **params)

    a, b = _fit_both(make, X, dX, client)
    assert a.division == "bisection"
    _assert_same_microaggregation(a, b, X)


@pytest.mark.parametrize("k", [10, 200, 1999])
def test_microaggregator_kdtree_equal_to_in_memory(k, bits, client):
    """division='kdtree' from Dask: the uint16 sketch is a per-row map (fixed
    blocks of the table's rows, scales from the basis alone), gathered on the
    driver; the same k-d tree gives the in-memory groups exactly."""
    X, dX = bits

    def make():
        return CovarianceLossMicroaggregator(
            k=k, domain="boolean", division="kdtree", random_state=0
        )

    a, b = _fit_both(make, X, dX, client)
    _assert_same_microaggregation(a, b, X)


def test_quantised_sketch_of_chunks_is_the_in_memory_sketch():
    """The k-d tree's uint16 sketch, computed on row blocks of any sizes and
    offsets, is the in-memory sketch (the same fixed BLAS blocks)."""
    from skdp_synth.geometry import second_moment
    from skdp_synth.microaggregation import _partition as _partition

    rng = np.random.default_rng(12)
    U = (rng.random((20_000, 50)) < rng.random(50)).astype(np.float64)
    S_cube, mean = second_moment(U), U.mean(axis=0)
    q = _partition.KDTREE_SKETCH_DIM
    Q = _partition.principal_sketch(U, S_cube, mean, q, quantised=True)
    W = _partition.sketch_basis(S_cube, mean, q)
    cuts = np.unique(
        np.concatenate([[0, 1, 3, 7], rng.choice(20_000, 30, replace=False), [20_000]])
    )
    blocks = [
        _partition.sketch_rows(U[lo:hi], W, mean, lo, quantised=True)
        for lo, hi in zip(cuts, cuts[1:])
    ]
    assert Q.dtype == np.uint16 and Q.shape == (20_000, 32)
    np.testing.assert_array_equal(np.concatenate(blocks), Q)


def test_kdtree_sketch_and_cells_of_chunks_are_the_in_memory_ones():
    """division='kdtree' with spectral cells takes the sketch and the covering
    projection in one pass (products U @ [W V] on fixed row blocks): computed
    on row blocks of any sizes and offsets it gives the in-memory rows bit for
    bit, and the cells of the covering map of Boedihardjo2024 Alg. 1 steps 3-5."""
    from skdp_synth.geometry import second_moment
    from skdp_synth.microaggregation import _partition as _partition

    rng = np.random.default_rng(13)
    U = (rng.random((20_000, 50)) < rng.random(50)).astype(np.float64)
    S_cube, mean = second_moment(U), U.mean(axis=0)
    _, alpha, t = _partition.paper_parameters(2000)
    V, _, covering = _partition.spectral_basis(S_cube, t, alpha)
    W = _partition.sketch_basis(S_cube, mean, _partition.KDTREE_SKETCH_DIM)
    Q, cells = _partition.kdtree_sketch_and_cells(U, W, V, covering)
    cuts = np.unique(
        np.concatenate([[0, 1, 3, 7], rng.choice(20_000, 30, replace=False), [20_000]])
    )
    parts = [
        _partition.kdtree_sketch_and_cells(U[lo:hi], W, V, covering, lo)
        for lo, hi in zip(cuts, cuts[1:])
    ]
    np.testing.assert_array_equal(np.concatenate([p[0] for p in parts]), Q)
    np.testing.assert_array_equal(np.concatenate([p[1] for p in parts]), cells)
    # the same cells as the separate projection U @ V (0/1 data: no row lies
    # within rounding of a cell boundary here)
    np.testing.assert_array_equal(cells, _partition.covering_cells(U, V, covering))
    assert np.unique(cells).size > 1


@pytest.mark.parametrize("division", ["bisection", "kdtree", "input_order"])
@pytest.mark.parametrize("seed, k", [(0, 200), (5, 37), (2, 1000)])
def test_microaggregator_pinning_equal_to_in_memory(seed, k, division, bits, client):
    """Pinning from Dask: the n_draws draws are taken before the data is read,
    all their cell sums come from one pass, and the best draw and the groups
    are the in-memory ones for the same seed."""
    X, dX = bits

    def make():
        return CovarianceLossMicroaggregator(
            k=k,
            partition="pinning",
            division=division,
            domain="boolean",
            random_state=seed,
        )

    a, b = _fit_both(make, X, dX, client)
    assert a.pinned_features_.size >= 1  # a draw with cells, not one cell
    _assert_same_microaggregation(a, b, X)


def test_sketch_of_chunks_is_the_in_memory_sketch_bit_for_bit():
    """The principal sketch is a per-row map: computed on row blocks of any
    sizes and offsets it is the in-memory sketch bit for bit. A plain
    ``U[a:b] @ W`` is not: its last bit depends on the blocking (leftover-row
    kernels, thread splits, ``gemv`` for one row; with OpenBLAS 0.3.27, 460
    of these 480 000 float64 entries differ for the cuts below), which
    ``sketch_rows`` avoids by multiplying fixed blocks of the table's rows.
    The equality of the Dask and in-memory bisections rests on this."""
    from skdp_synth.geometry import second_moment
    from skdp_synth.microaggregation import _partition as _partition

    rng = np.random.default_rng(11)
    U = (rng.random((30_000, 50)) < rng.random(50)).astype(np.float64)
    S_cube, mean = second_moment(U), U.mean(axis=0)
    Z = _partition.principal_sketch(U, S_cube, mean)
    W = _partition.sketch_basis(S_cube, mean)
    cuts = np.unique(
        np.concatenate(
            [[0, 1, 3, 6, 10, 17], rng.choice(30_000, 40, replace=False), [30_000]]
        )
    )
    pairs = list(zip(cuts, cuts[1:]))
    blocks = [_partition.sketch_rows(U[lo:hi], W, mean, lo) for lo, hi in pairs]
    assert Z.dtype == np.float32 and Z.shape == (30_000, 16)
    np.testing.assert_array_equal(np.concatenate(blocks), Z)
    one_row = [_partition.sketch_rows(U[i : i + 1], W, mean, i) for i in range(300)]
    np.testing.assert_array_equal(np.concatenate(one_row), Z[:300])
    F = np.asfortranarray(U[5:20_005])
    np.testing.assert_array_equal(_partition.sketch_rows(F, W, mean, 5), Z[5:20_005])
    assert _partition.sketch_block_rows(50, 16) == 320


def test_microaggregator_dask_passes(bits, client, monkeypatch):
    """Three passes over the chunks, whatever the partition: pinning scores
    all n_draws draws in the first pass (one reduction)."""
    from skdp_synth import _chunked

    X, dX = bits
    passes = []
    stream, reduce = _chunked.ChunkedRows.stream, _chunked.ChunkedRows.reduce

    def counted_stream(self, function, *args):
        if function is not _chunked._map_sub_blocks:
            passes.append(function.__name__)
        return stream(self, function, *args)

    def counted_reduce(self, statistic, *args):
        passes.append(statistic.__name__)
        return reduce(self, statistic, *args)

    map_ = _chunked.ChunkedRows.map

    def counted_map(self, function, *args):
        passes.append("map")
        return map_(self, function, *args)

    monkeypatch.setattr(_chunked.ChunkedRows, "stream", counted_stream)
    monkeypatch.setattr(_chunked.ChunkedRows, "reduce", counted_reduce)
    monkeypatch.setattr(_chunked.ChunkedRows, "map", counted_map)
    CovarianceLossMicroaggregator(k=100, domain="boolean").fit(dX)
    assert passes == ["_gram_and_sums", "map", "_labelled_chunk"]
    passes.clear()
    CovarianceLossMicroaggregator(
        k=100, partition="pinning", n_draws=7, domain="boolean", random_state=0
    ).fit(dX)
    assert passes == ["_pinning_chunk", "map", "_labelled_chunk"]


def test_microaggregator_small_blocks_and_empty_chunks(bits, client, monkeypatch):
    """Chunks of uneven sizes, an empty chunk and several row blocks per chunk
    (the map and the sums work block by block) change nothing."""
    from skdp_synth import _chunked

    X, _ = bits
    monkeypatch.setattr(_chunked, "SUB_ROWS", 128)
    dX = da.from_array(X, chunks=((1, 999, 0, 3, 597, 400), (7,)))
    for params in ({"random_state": 0}, {"partition": "pinning", "random_state": 4}):
        a = CovarianceLossMicroaggregator(k=150, domain="boolean", **params).fit(X)
        b = CovarianceLossMicroaggregator(k=150, domain="boolean", **params).fit(dX)
        _assert_same_microaggregation(a, b, X)


def test_microaggregator_bisection_box_data_from_dask_frame(client):
    """Box data: S, the mean and the sums differ from memory in the order of
    summation only; at this seed the sketch and so the groups are the same."""
    rng = np.random.default_rng(3)
    base = rng.random((1500, 1))
    frame = pd.DataFrame(rng.random((1500, 4)) * base, columns=list("abcd"))
    ddf = dd.from_pandas(frame, npartitions=4)

    def make():
        return CovarianceLossMicroaggregator(k=150, bounds=(0.0, 1.0))

    a, b = make().fit(frame), make().fit(ddf)
    np.testing.assert_array_equal(b.labels_, a.labels_)
    np.testing.assert_allclose(b.centroids_, a.centroids_, rtol=1e-12, atol=1e-15)
    out = b.transform(frame)
    assert list(out.columns) == list("abcd")
    np.testing.assert_allclose(out.to_numpy(), b.centroids_[b.labels_])


@pytest.mark.parametrize(
    "params",
    [{"division": "input_order"}, {}, {"partition": "pinning"}],
    ids=["input_order", "bisection", "pinning"],
)
def test_microaggregator_bad_chunk_names_chunk(params, bits, client):
    X, _ = bits
    est = CovarianceLossMicroaggregator(k=10, domain="boolean", **params)
    with pytest.raises(ValueError, match="chunk 3"):
        est.fit(_bad(X, 1400, 5, 2.0))


# ------------------------------------------------------ lazy sample(chunks=)
@pytest.fixture(scope="module")
def damped_fit(bits):
    X, _ = bits
    return DampedPrivateSynthesizer(epsilon=1.0, random_state=0).fit(X)


def test_lazy_sample_shape_dtype_and_reproducible(damped_fit, client):
    """A lazy Dask array of the eager output's shape and dtype; the same rows
    for the same seed whatever the scheduler (distributed, threads, sync),
    other rows for another seed."""
    lazy = damped_fit.sample(2500, random_state=4, chunks=700)
    eager = damped_fit.sample(2500, random_state=4)
    assert isinstance(lazy, da.Array)
    assert lazy.shape == eager.shape and lazy.dtype == eager.dtype
    assert lazy.chunks[0] == (700, 700, 700, 400)
    rows = lazy.compute()
    assert rows.dtype == eager.dtype and set(np.unique(rows)) <= {0, 1}
    import dask

    for scheduler in ("threads", "sync"):
        with dask.config.set(scheduler=scheduler):
            again = damped_fit.sample(2500, random_state=4, chunks=700).compute()
        np.testing.assert_array_equal(again, rows)
    # a chunk is its own stream: the first chunks do not depend on n
    head = damped_fit.sample(1400, random_state=4, chunks=700).compute()
    np.testing.assert_array_equal(head, rows[:1400])
    other = damped_fit.sample(2500, random_state=5, chunks=700).compute()
    assert (other != rows).any()
    # a different stream from the eager rows (documented)
    assert (rows != eager).any()


def test_lazy_sample_unseeded_graph_is_fixed_and_snapshot(bits, client):
    """random_state=None: fresh entropy drawn once, when the graph is built
    (two computes agree); a later fit does not change the graph's rows."""
    X, _ = bits
    est = DampedPrivateSynthesizer(epsilon=1.0).fit(X)
    lazy = est.sample(1000, chunks=300)
    first = lazy.compute()
    est.fit(1 - X)
    np.testing.assert_array_equal(lazy.compute(), first)


def test_lazy_sample_frame_output(client):
    """A DataFrame-fitted estimator gives a lazy Dask DataFrame with the
    eager output's columns and dtypes."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        (rng.random((1500, 4)) < 0.4).astype(np.int64), columns=list("abcd")
    )
    est = DampedPrivateSynthesizer(epsilon=1.0, random_state=0).fit(frame)
    lazy = est.sample(1000, chunks=400)
    assert isinstance(lazy, dd.DataFrame) and lazy.npartitions == 3
    got = lazy.compute()
    eager = est.sample(1000)
    assert list(got.columns) == list(eager.columns) and len(got) == 1000
    assert got.dtypes.tolist() == eager.dtypes.tolist()


def test_lazy_rows_have_the_eager_distribution(bits, client):
    """Lazy and eager rows are draws from the same fitted distribution: a
    chi-square homogeneity test on the joint of three columns (8 cells),
    20000 rows each, at level 0.001 (false-failure rate 0.001 over seeds;
    this seed is fixed)."""
    from scipy.stats import chi2_contingency

    X, _ = bits
    est = DampedPrivateSynthesizer(epsilon=2.0, random_state=0).fit(X)
    lazy = est.sample(20000, random_state=11, chunks=3000).compute()
    eager = est.sample(20000, random_state=11)

    def cells(rows):
        code = rows[:, 0] * 4 + rows[:, 1] * 2 + rows[:, 2]
        return np.bincount(code.astype(np.int64), minlength=8)

    table = np.array([cells(lazy), cells(eager)])
    table = table[:, table.sum(axis=0) > 0]
    assert chi2_contingency(table).pvalue > 0.001
    # and the per-column frequencies against the fitted expectation
    means, weights = est._synthetic_distribution()
    np.testing.assert_allclose(lazy.mean(axis=0), weights @ means, atol=0.015)


@pytest.mark.parametrize(
    "make",
    [
        lambda: DampedPrivateSynthesizer(epsilon=1.0, random_state=0),
        lambda: ProjectedGaussianRelease(random_state=0, max_model_rows=500),
        lambda: CovarianceLossMicroaggregator(k=20, random_state=0),
    ],
    ids=["damped", "release", "microaggregator"],
)
def test_lazy_sample_spends_nothing(make, bits, client):
    """Drawing is post-processing: a lazy sample charges nothing."""
    X, _ = bits
    est = make()
    acc = None
    if "accountant" in est.get_params():
        neighbouring = (
            "add-remove-one" if "max_model_rows" in est.get_params() else None
        )
        acc = BudgetAccountant(
            epsilon=100.0,
            delta=0.5,
            **({"neighbouring": neighbouring} if neighbouring else {}),
        )
        est.set_params(accountant=acc)
    est.fit(X)
    spent = list(acc.spent) if acc is not None else None
    rows = est.sample(1200, random_state=0, chunks=500).compute()
    assert rows.shape == (1200, X.shape[1]) and ((rows >= 0) & (rows <= 1)).all()
    if acc is not None:
        assert spent and acc.spent == spent


def test_lazy_private_sampler_charges_as_eager_once_at_build(bits, client):
    """PrivateSampler's rows beyond those paid for cost epsilon_per_draw_
    each: the lazy call charges exactly what the eager call charges, once,
    when the graph is built (not when computed); within the paid rows it
    releases the eager call's rows."""
    X, _ = bits
    fits = []
    for _ in range(2):
        acc = BudgetAccountant(epsilon=1e4)
        fits.append(PrivateSampler(k=30, random_state=3, accountant=acc).fit(X))
    eager, lazy = fits
    np.testing.assert_array_equal(
        lazy.sample(25, chunks=10).compute(), eager.sample(25)
    )
    graph = lazy.sample(70, chunks=20)  # 25 + 70 released: 65 beyond the 30 paid
    eager.sample(70)
    spent = [g.epsilon for g in lazy.accountant.spent]
    assert spent == [g.epsilon for g in eager.accountant.spent]
    assert spent[-1] == pytest.approx(65 * lazy.epsilon_per_draw_, rel=1e-12)
    assert lazy.n_draws_paid_ == eager.n_draws_paid_ == 95
    graph.compute()
    graph.compute()
    assert [g.epsilon for g in lazy.accountant.spent] == spent  # nothing more


def test_lazy_sample_bad_chunks(damped_fit):
    with pytest.raises(ValueError, match="chunks"):
        damped_fit.sample(100, chunks=0)


def test_lazy_pipeline_sample_decodes_each_chunk(client):
    """A pipeline's lazy sample: a Dask DataFrame in the input's schema,
    reproducible, each chunk decoded with its own stream; nothing spent."""
    frame = _cli_table(2000)
    acc = BudgetAccountant(epsilon=2.0)
    pipe = make_synthesis_pipeline(
        BooleanEncoder(**CLI_SCHEMA),
        DampedPrivateSynthesizer(epsilon=1.0, random_state=0, accountant=acc),
    ).fit(frame)
    spent = list(acc.spent)
    lazy = pipe.sample(2500, random_state=2, chunks=1000)
    assert isinstance(lazy, dd.DataFrame) and lazy.npartitions == 3
    got = lazy.compute()
    again = pipe.sample(2500, random_state=2, chunks=1000).compute()
    pd.testing.assert_frame_equal(got, again)
    assert list(got.columns) == list(frame.columns) and len(got) == 2500
    assert got["colour"].dropna().isin(["red", "green", "blue"]).all()
    ages = got["age"].dropna()
    assert ((ages >= 0) & (ages <= 90)).all()
    # the within-bin ages of two chunks are not the same draws
    first, second = (got.iloc[s : s + 1000]["age"].to_numpy() for s in (0, 1000))
    assert not np.array_equal(first, second)
    assert acc.spent == spent


@pytest.mark.parametrize("value", [2.0, -1.0, 1e300, 0.5])
def test_integer_rows_path_rejects_before_casting(value, bits):
    """A statistic reading uint8 rows gets them only once validated: an
    out-of-domain float is reported (chunk, column), never cast (no
    RuntimeWarning from a cast of 1e300 to uint8; warnings are errors)."""
    from skdp_synth import _stats
    from skdp_synth._chunked import _chunk_statistic
    from skdp_synth.blocks import Blocks

    X = bits[0][:300].astype(np.float64)
    X[123, 4] = value
    checks = ("boolean", (0, 1), Blocks.binary(7), list("abcdefg"), False)
    spec = (checks, _stats.moment_sums, ())
    with pytest.raises(ValueError, match=r"chunk 2 .*column 'e'"):
        _chunk_statistic(X, 2, spec)


# ------------------------------------------- microaggregator: lazy transform
def _new_rows(X):
    """The training rows reversed, 300 of them a second time (more occurrences
    than training has: nearest group mean) and 50 complemented rows."""
    return np.vstack([X[::-1], X[:300], 1 - X[:50]]).astype(X.dtype)


@pytest.mark.parametrize(
    "params",
    [{}, {"division": "input_order"}, {"partition": "pinning", "random_state": 4}],
    ids=["bisection", "input_order", "pinning"],
)
@pytest.mark.parametrize(
    "chunks",
    [450, (1, 999, 0, 3, 597, 400), 2000],
    ids=["even", "uneven-empty", "one"],
)
def test_lazy_transform_equals_eager(params, chunks, bits, client, monkeypatch):
    """transform of a Dask array is a lazy Dask array that computes to the
    eager transform of the same rows, value and dtype, for any chunk layout
    (row blocks smaller than a chunk included)."""
    from skdp_synth import _chunked

    monkeypatch.setattr(_chunked, "SUB_ROWS", 128)
    X, _ = bits
    est = CovarianceLossMicroaggregator(k=150, domain="boolean", **params).fit(X)
    for Y in (X, _new_rows(X)):
        rows = (chunks, 7) if chunks != 2000 else (Y.shape[0], 7)
        if isinstance(chunks, tuple):
            rows = ((*chunks[:-1], chunks[-1] + Y.shape[0] - X.shape[0]), (7,))
        out = est.transform(da.from_array(Y, chunks=rows))
        assert isinstance(out, da.Array)
        # the input's chunks (Dask's concatenate drops the empty one)
        layout = da.from_array(Y, chunks=rows).chunks[0]
        assert out.chunks[0] == tuple(c for c in layout if c)
        want = est.transform(Y)
        got = out.compute()
        assert got.dtype == want.dtype == out.dtype
        np.testing.assert_array_equal(got, want)
    # the training rows: exactly the release centroids_[labels_]
    np.testing.assert_array_equal(
        est.transform(da.from_array(X, chunks=(450, 7))).compute(),
        est.centroids_[est.labels_],
    )


def test_lazy_transform_reads_only_chunks_with_unmatched_rows(bits, client):
    """Computing the output reads again only the chunks with unmatched rows
    (the others need their labels only); the key pass reads every chunk.
    Dask's synchronous scheduler: the recording list is this process's."""
    import dask

    X, _ = bits
    est = CovarianceLossMicroaggregator(k=150, domain="boolean").fit(X)
    read = []

    def recorded(Y):
        def record(block, block_info=None):
            read.append(block_info[0]["chunk-location"][0])
            return block

        return da.from_array(Y, chunks=(450, 7)).map_blocks(record, dtype=Y.dtype)

    with dask.config.set(scheduler="sync"):
        out = est.transform(recorded(X))
        assert sorted(read) == [0, 1, 2, 3, 4]
        read.clear()
        np.testing.assert_array_equal(out.compute(), est.transform(X))
        assert read == []
        out = est.transform(recorded(np.vstack([X, X[:10]])))
        read.clear()
        out.compute()
        assert read == [4]  # rows 1800..2009: the ten repeated rows are unmatched


def test_lazy_transform_box_frame_equals_eager(client):
    """Box data from a Dask DataFrame: a lazy DataFrame equal to the eager
    frame (values, columns, dtypes, index); rows outside the fitted bounds are
    mapped affinely as in memory, not rejected."""
    rng = np.random.default_rng(3)
    base = rng.random((1500, 1))
    frame = pd.DataFrame(rng.random((1500, 4)) * base, columns=list("abcd"))
    est = CovarianceLossMicroaggregator(k=150, bounds=(0.0, 1.0)).fit(frame)
    new = pd.concat([frame.iloc[::-1], frame.iloc[:100] * 1.5 - 0.2])
    new = new.reset_index(drop=True)
    for data in (frame, new):
        out = est.transform(dd.from_pandas(data, npartitions=3))
        assert isinstance(out, dd.DataFrame)
        pd.testing.assert_frame_equal(out.compute(), est.transform(data))
    # a frame with other columns is refused
    with pytest.raises(ValueError, match="feature names should match"):
        est.transform(dd.from_pandas(frame[list("dcba")], npartitions=2))
    with pytest.raises(ValueError, match="expecting 4 features"):
        est.transform(da.from_array(frame.to_numpy()[:, :3], chunks=(500, 3)))


@pytest.mark.parametrize(
    "value, match",
    [
        (np.nan, r"chunk 3 of X, column '5': missing \(NaN\)"),
        (np.inf, r"chunk 3 of X, column '5': missing \(NaN\)"),
        (0.5, r"chunk 3 of X, column '5': values other than 0/1"),
    ],
)
def test_lazy_transform_bad_chunk_names_chunk_and_column(value, match, bits, client):
    X, _ = bits
    est = CovarianceLossMicroaggregator(k=150, domain="boolean").fit(X)
    with pytest.raises(ValueError, match=match) as e:
        est.transform(_bad(X, 1400, 5, value))
    assert "1400" not in str(e.value)


@pytest.mark.parametrize("rounding", ["none", "random"])
def test_dask_fit_transform_equals_fit_then_transform(rounding, bits, client):
    """fit_transform of Dask input (labels_ gathered lazily, no key pass)
    computes to fit(X).transform(X); without rounding also to the eager one."""
    X, dX = bits

    def make():
        return CovarianceLossMicroaggregator(
            k=150, domain="boolean", rounding=rounding, random_state=2
        )

    out = make().fit_transform(dX)
    assert isinstance(out, da.Array)
    got = out.compute()
    np.testing.assert_array_equal(got, make().fit(dX).transform(dX).compute())
    if rounding == "none":
        np.testing.assert_array_equal(got, make().fit_transform(X))


def test_lazy_transform_rounding_streams(bits, client):
    """rounding="random": each chunk from its own child stream of the
    transform stream -- the same rows whatever the scheduler, another stream
    than the eager transform, and each coordinate Bernoulli(group mean)."""
    import dask

    X, dX = bits
    est = CovarianceLossMicroaggregator(
        k=150, domain="boolean", rounding="random", random_state=5
    ).fit(X)
    lazy = est.transform(dX)
    got = lazy.compute()
    with dask.config.set(scheduler="sync"):
        np.testing.assert_array_equal(est.transform(dX).compute(), got)
    assert not np.array_equal(got, est.transform(X))
    assert set(np.unique(got)) <= {0, 1}
    # sum over rows of (rounded - mean) has variance sum m (1 - m): z-test
    means = est.centroids_[est.labels_]
    z = (got - means).sum(axis=0) / np.sqrt((means * (1 - means)).sum(axis=0))
    assert np.all(np.abs(z) < 4), z
    # the graph is built now: a later fit does not change it
    est.set_params(rounding="none").fit(1 - X)
    np.testing.assert_array_equal(lazy.compute(), got)
