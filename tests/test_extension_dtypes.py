"""Columns of pandas' extension dtypes beyond the nullable ones: pyarrow-backed
columns (``pd.ArrowDtype``, as ``pd.read_parquet(...,
dtype_backend="pyarrow")`` gives them) are read through the NumPy dtype that
holds their values, given back in their own dtype, written to and read from
a release, nested ones refused by name; sparse columns (``pd.get_dummies(...,
sparse=True)``) come back sparse, with a missing level only where their
subtype can hold one."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
from skdp_synth._datetime import from_units, native_time_dtype, to_units
from skdp_synth.preprocessing import BooleanEncoder
from skdp_synth.release import Release

pa = pytest.importorskip("pyarrow")


def _times(n=2000, seed=0):
    """The same instants as NumPy/pandas columns and as pyarrow ones."""
    rng = np.random.default_rng(seed)
    at = pd.Timestamp("2020-01-01") + pd.to_timedelta(
        rng.integers(0, 365 * 86400, n), unit="s"
    )
    took = pd.to_timedelta(rng.exponential(3600, n).round(), unit="s")
    native = pd.DataFrame(
        {
            "at": pd.Series(at.as_unit("us")),
            "zoned": pd.Series(at.tz_localize("UTC").as_unit("us")),
            "day": pd.Series(at.normalize().as_unit("s")),
            "took": pd.Series(took.as_unit("s")),
            "x": rng.normal(size=n),
        }
    )
    native.loc[rng.random(n) < 0.1, "took"] = pd.NaT
    arrow = native.astype(
        {
            "at": pd.ArrowDtype(pa.timestamp("us")),
            "zoned": pd.ArrowDtype(pa.timestamp("us", tz="UTC")),
            "day": pd.ArrowDtype(pa.date32()),
            "took": pd.ArrowDtype(pa.duration("s")),
            "x": "double[pyarrow]",
        }
    )
    return native, arrow


def _fit(X, **encoder):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enc = BooleanEncoder(epsilon="auto", random_state=0, **encoder)
        rel = ProjectedGaussianRelease(epsilon=1.0, random_state=0)
        return make_synthesis_pipeline(enc, rel).fit(X)


def test_native_time_dtype_of_each_arrow_time_type():
    assert native_time_dtype(pd.ArrowDtype(pa.timestamp("ms"))) == np.dtype(
        "datetime64[ms]"
    )
    assert native_time_dtype(
        pd.ArrowDtype(pa.timestamp("us", tz="Europe/Paris"))
    ) == pd.DatetimeTZDtype("us", "Europe/Paris")
    assert native_time_dtype(pd.ArrowDtype(pa.date32())) == np.dtype("datetime64[s]")
    assert native_time_dtype(pd.ArrowDtype(pa.duration("ms"))) == np.dtype(
        "timedelta64[ms]"
    )
    numpy_dtype = np.dtype("datetime64[ns]")
    assert native_time_dtype(numpy_dtype) is numpy_dtype


@pytest.mark.parametrize("col", ["at", "zoned", "day", "took"])
def test_units_round_trip_through_the_arrow_dtype(col):
    native, arrow = _times(200)
    unit = "D" if col == "day" else "s"
    u = to_units(arrow[col], arrow[col].dtype, unit)
    assert np.array_equal(
        u, to_units(native[col], native[col].dtype, unit), equal_nan=True
    )
    back = from_units(u, arrow[col].dtype, unit)
    assert back.dtype == arrow[col].dtype
    assert back.isna().equals(arrow[col].isna())
    assert ((back == arrow[col]).fillna(True) | back.isna()).all()


def test_arrow_time_columns_come_back_in_their_dtype_as_their_numpy_twins():
    """Before, a ``timestamp`` column crashed the fit (NumPy could not read
    its dtype), a zoned one was refused as having no time zone, a ``date32``
    one raised pandas' NotImplementedError and a ``duration`` one came back
    as "other" objects. Read through the NumPy dtype, they draw the same
    noise and decode to the same instants as their NumPy twins (a
    ``date32`` column counted in days, as ``datetime_unit="D"``)."""
    native, arrow = _times()
    got = _fit(arrow).sample(1000, random_state=1)
    want = _fit(
        native, datetime_unit={"day": "D", "at": "s", "zoned": "s", "took": "s"}
    )
    want = want.sample(1000, random_state=1)
    assert dict(got.dtypes) == dict(arrow.dtypes)
    for col in ["at", "zoned", "day", "took"]:
        as_native = got[col].astype(native_time_dtype(arrow[col].dtype))
        expected = want[col].astype(as_native.dtype)
        assert as_native.isna().equals(expected.isna()), col
        assert ((as_native == expected) | as_native.isna()).all(), col
    days = got["day"].dropna().astype("datetime64[s]")
    assert (days == days.dt.floor("D")).all()


def test_a_date_column_is_counted_in_days():
    _, arrow = _times(300)
    with pytest.raises(ValueError, match="'day'.*holds calendar days: its unit is 'D'"):
        _fit(arrow, datetime_unit={"day": "s"})


@pytest.mark.parametrize(
    "pa_type",
    [
        pa.list_(pa.int64()),
        pa.struct([("a", pa.int64())]),
        pa.map_(pa.string(), pa.int64()),
    ],
)
def test_a_nested_arrow_column_is_refused_by_name(pa_type):
    rng = np.random.default_rng(0)
    secret = 987654321
    cells = {
        "list": [[secret, 2]] * 40,
        "struct": [{"a": secret}] * 40,
        "map": [[("k", secret)]] * 40,
    }[str(pa_type).split("<")[0]]
    X = pd.DataFrame({"nested": pd.Series(cells, dtype=pd.ArrowDtype(pa_type))})
    X["x"] = rng.normal(size=40)
    with pytest.raises(ValueError, match="column 'nested' has dtype") as err:
        _fit(X)
    assert str(secret) not in str(err.value)


def test_a_release_keeps_the_arrow_dtypes(tmp_path):
    _, arrow = _times(1000)
    arrow["k"] = pd.Series(np.arange(1000) % 5).astype("int64[pyarrow]")
    arrow["flag"] = pd.Series(np.arange(1000) % 3 == 0).astype("bool[pyarrow]")
    pipe = _fit(arrow, bounds={"day": ("2020-01-01", "2021-01-01")})
    path = tmp_path / "release.npz"
    pipe.to_release().save(path)
    rows = Release.load(path).sample(200, random_state=2)
    assert dict(rows.dtypes) == dict(arrow.dtypes)


def test_a_dtype_pandas_cannot_read_back_is_refused_with_its_cast():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {"amount": np.round(rng.lognormal(3, 1, 500), 2), "x": rng.normal(size=500)}
    )
    X["amount"] = X["amount"].astype(pd.ArrowDtype(pa.decimal128(12, 2)))
    pipe = _fit(X)
    with pytest.raises(TypeError, match="cast the column before the fit"):
        pipe.to_release()


def test_sparse_columns_come_back_sparse_without_a_missing_level():
    """A ``Sparse[uint8, 0]`` column fitted, spent its budget, then stopped
    ``sample`` (``np.iinfo`` of the SparseDtype); ``get_dummies(sparse=True)``'s
    ``Sparse[bool, False]`` columns got a missing level their dtype cannot
    hold, and where the release kept it the column came back as objects."""
    rng = np.random.default_rng(0)
    n = 3000
    X = pd.get_dummies(pd.Series(rng.choice(["a", "b", "c"], n)), sparse=True)
    X["x"] = rng.normal(size=n)
    X["count"] = pd.Series(rng.integers(0, 5, n)).astype(pd.SparseDtype(np.uint8, 0))
    pipe = _fit(X)
    assert not any(spec.missing for spec in pipe[0].specs_ if spec.name != "x")
    rows = pipe.sample(2000, random_state=1)
    assert dict(rows.dtypes) == dict(X.dtypes)
    counts = rows["count"].sparse.to_dense()
    assert counts.between(0, 255).all()


def test_a_release_keeps_the_sparse_dtypes(tmp_path):
    """A release of sparse columns was refused when read back ("dtype
    Sparse[bool, False] is not one a binary column has")."""
    rng = np.random.default_rng(0)
    n = 2000
    X = pd.get_dummies(pd.Series(rng.choice(["a", "b"], n)), sparse=True)
    X["x"] = pd.Series(rng.normal(size=n)).astype(pd.SparseDtype(float, np.nan))
    X["count"] = pd.Series(rng.integers(0, 5, n)).astype(pd.SparseDtype(np.uint8, 0))
    path = tmp_path / "release.npz"
    _fit(X).to_release().save(path)
    rows = Release.load(path).sample(100, random_state=0)
    assert dict(rows.dtypes) == dict(X.dtypes)


@pytest.mark.parametrize("which", ["native", "arrow"])
def test_a_range_given_keeps_the_columns_dtype(which):
    """Rows repaired into a ``given=`` range were written back through NumPy:
    a ``datetime64[us, UTC]`` column came back as ``datetime64[ns, UTC]``, a
    pyarrow one as NumPy's."""
    native, arrow = _times(2000)
    X = native if which == "native" else arrow
    unit = {"day": "D", "at": "s", "zoned": "s", "took": "s"}
    if which == "arrow":
        del unit["day"]
    pipe = _fit(X, datetime_unit=unit)
    given = {"zoned": ("2020-03-01", "2020-04-01"), "took": ("0s", "600s")}
    rows = pipe.sample(300, random_state=0, given=given)
    assert dict(rows.dtypes) == dict(X.dtypes)
    zoned = rows["zoned"].astype(native["zoned"].dtype)
    assert zoned.between(
        pd.Timestamp("2020-03-01", tz="UTC"), pd.Timestamp("2020-04-01", tz="UTC")
    ).all()


def _people(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    age = pd.Series(rng.integers(18, 90, n), dtype="Int64")
    age[rng.random(n) < 0.05] = pd.NA
    return pd.DataFrame(
        {
            "age": age,
            "income": rng.lognormal(10, 1, n),
            "city": rng.choice(["a", "b", "c"], n),
        }
    )


@pytest.mark.parametrize("kind", ["polars", "pyarrow"])
def test_a_polars_frame_or_arrow_table_is_read_as_its_pandas_twin(kind):
    """A polars DataFrame went through ``np.asarray``: an object array, so
    every column was text, the numbers came back as "other" and the names
    were lost. Read as a pandas frame of pyarrow types, it gives the rows
    of that frame (an integer column with nulls stays whole)."""
    frame = _people()
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if kind == "polars":
        pl = pytest.importorskip("polars")
        X = pl.from_arrow(table)
    else:
        X = table
    twin = table.to_pandas(types_mapper=pd.ArrowDtype)
    rows = _fit(X).sample(500, random_state=1)
    want = _fit(twin).sample(500, random_state=1)
    assert isinstance(rows, pd.DataFrame) and list(rows.columns) == list(frame.columns)
    assert rows["age"].dtype == pd.ArrowDtype(pa.int64())
    pd.testing.assert_frame_equal(rows, want, check_dtype=False)
    ages = rows["age"].dropna().astype(float)
    assert ages.between(0, 200).all() and (ages == ages.round()).all()


def test_the_report_and_the_tv_tables_read_polars_frames():
    pl = pytest.importorskip("polars")
    from skdp_synth.metrics import marginal_tv
    from skdp_synth.report import fidelity_report

    rng = np.random.default_rng(0)
    real = pl.DataFrame(
        {"g": rng.choice(["a", "b"], 300), "k": rng.integers(0, 3, 300)}
    )
    rows = pl.DataFrame(
        {"g": rng.choice(["a", "b"], 200), "k": rng.integers(0, 3, 200)}
    )
    tv = marginal_tv(real, rows, d=1)
    assert list(tv.index) == [("g",), ("k",)]
    expected = marginal_tv(real.to_pandas(), rows.to_pandas(), d=1)
    assert tv.tolist() == pytest.approx(expected.tolist(), abs=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = fidelity_report(real, rows)
    assert 0.0 <= report.score <= 1.0


@pytest.mark.parametrize(
    "which", ["damped-box", "damped-boolean", "microaggregator", "scaler"]
)
def test_the_numeric_estimators_read_polars_frames(which):
    """A polars frame of floats, bools or 0/1 integers was refused by every
    numeric estimator as "X has non-numeric columns" (its dtypes are
    polars', not pandas')."""
    pl = pytest.importorskip("polars")
    from skdp_synth import CovarianceLossMicroaggregator, DampedPrivateSynthesizer
    from skdp_synth.preprocessing import UnitBallScaler

    rng = np.random.default_rng(0)
    n = 600
    if which == "damped-boolean":
        X = pl.DataFrame({"a": rng.random(n) < 0.5, "b": rng.random(n) < 0.3})
        est = DampedPrivateSynthesizer(epsilon=1.0, random_state=0)
    else:
        X = pl.DataFrame({"a": rng.random(n), "b": rng.random(n)})
        est = {
            "damped-box": DampedPrivateSynthesizer(
                epsilon=1.0, domain="box", bounds=(0, 1), random_state=0
            ),
            "microaggregator": CovarianceLossMicroaggregator(k=20, random_state=0),
            "scaler": UnitBallScaler(bounds=(0, 1)),
        }[which]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X)
        out = est.sample(5) if hasattr(est, "sample") else est.transform(X)
    assert np.asarray(out, dtype=float).shape[1] == 2
    if hasattr(out, "columns"):
        assert list(out.columns) == ["a", "b"]


@pytest.mark.parametrize(
    "dtype, edge",
    [("float16", 1e6), ("float32", 1e40), ("Float32", 1e40), ("Sparse[float32]", 1e40)],
)
def test_a_narrow_float_column_never_decodes_to_inf(dtype, edge):
    """A declared bin's value past what the column's dtype holds came back as
    inf (float16's 65,504: +-inf in every row of the outer bins, with a
    RuntimeWarning from the cast); it is clipped to the dtype's largest
    finite value, as an integer column's is to its range."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"v": pd.Series(rng.normal(0, 1, 500)).astype(dtype)})
    enc = BooleanEncoder(
        epsilon=None, bin_edges={"v": [-edge, 0.0, edge]}, numeric_value="midpoint"
    ).fit(df)
    out = enc.inverse_transform(enc.transform(df))["v"]
    assert out.dtype == df["v"].dtype
    values = np.asarray(out.astype(float))
    assert np.isfinite(values).all()
    big = float(np.finfo(np.float16 if dtype == "float16" else np.float32).max)
    assert values.max() == big and values.min() == -big
