"""SynthesisPipeline.to_release(): a published file that samples the table.

A pipeline's release used to be its last step's: encoded
0/1 rows, without the decoder (levels, private bins, fine histograms,
dtypes), so the published file could not give back a table.
"""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from skdp_synth import (
    DampedPrivateSynthesizer,
    ProjectedGaussianRelease,
    Release,
    make_synthesis_pipeline,
)
from skdp_synth.cli import _main as cli
from skdp_synth.exceptions import (
    DegenerateColumnWarning,
    MalformedReleaseError,
    PrivacyLeakWarning,
)
from skdp_synth.preprocessing import BooleanEncoder


def _frame(n=1500, seed=0):
    """Every dtype the encoder returns as it came in, with missing values."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    df = pd.DataFrame(
        {
            "age": np.clip(40 + 10 * x, 18, 90).round().astype("int64"),
            "wage": np.exp(3 + 0.5 * x + 0.3 * rng.normal(size=n)),
            "small": rng.integers(0, 100, n).astype("int8"),
            "kids": pd.array(rng.integers(0, 4, n), dtype="Int64"),
            "colour": pd.Categorical(rng.choice(["r", "g", "b"], n)),
            "grade": pd.Categorical(
                rng.choice(["lo", "mid", "hi"], n),
                categories=["lo", "mid", "hi"],
                ordered=True,
            ),
            "name": pd.array(rng.choice(["a", "b"], n), dtype="string"),
            "flag": rng.random(n) < 0.3,
            "day": pd.Timestamp("2021-03-01", tz="America/New_York")
            + pd.to_timedelta(rng.integers(0, 10**6, n), unit="s"),
            "wait": pd.to_timedelta(rng.integers(0, 3600, n), unit="s"),
        }
    )
    df.loc[rng.random(n) < 0.1, "wage"] = np.nan
    df.loc[rng.random(n) < 0.05, "kids"] = pd.NA
    return df


def _encoder(**kw):
    return BooleanEncoder(
        categories={
            "colour": ["r", "g", "b"],
            "name": ["a", "b"],
            "kids": [0, 1, 2, 3, None],
        },
        ordinal={"grade": ["lo", "mid", "hi"]},
        random_state=0,
        **kw,
    )


@pytest.fixture(scope="module")
def fitted():
    pipe = make_synthesis_pipeline(
        _encoder(), ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0)
    )
    # ``day`` spans 11.5 days of epoch seconds (~1.6e9): a date/time column's
    # private domain starts from calendar-year cells and keeps its leaves by
    # rules in spans of time (``_datetime.calendar_cuts``, ``keep_axis``),
    # so its rows keep their spread (std ratio 1.27 at this seed; 5.4 when
    # its tree started from the magnitude cell [2^28, 2^32) s and kept
    # leaves in the log of the magnitude, and a DegenerateColumnWarning
    # named it). filterwarnings=error fails on any other warning. ``small``
    # (integers 0-99) is named, truly: its private lower cap is 18 at this
    # seed, 283 of its 1,500 rows lie below it and none of the rows does
    # (the bottom bin's 282 ± 26 rows against 39 kept there)
    with pytest.warns(DegenerateColumnWarning) as record:
        pipe.fit(_frame())
    (warning,) = record
    assert "'small': a released bottom bin [18, 19)" in str(warning.message)
    assert "lie below the lower cap 18" in str(warning.message)
    return pipe


def _saved(release, tmp_path):
    path = tmp_path / "release.npz"
    release.save(path)
    return Release.load(path)


def test_the_file_alone_samples_rows_in_the_tables_schema(fitted, tmp_path):
    back = _saved(fitted.to_release(), tmp_path)
    rows = back.sample(400, random_state=1)
    ref = fitted.sample(400, random_state=1)
    assert isinstance(rows, pd.DataFrame) and len(rows) == 400
    assert list(rows.columns) == list(ref.columns)
    # every dtype as it went in (the pipeline's own sample's)
    assert rows.dtypes.to_dict() == ref.dtypes.to_dict()
    assert rows["colour"].isin(["r", "g", "b"]).all()
    # the same columns can be missing (the private missing levels kept)
    missing = [spec.name for spec in back.decoder().specs_ if spec.missing]
    assert missing == [spec.name for spec in fitted[0].specs_ if spec.missing]
    # the same encoded rows decode the same way through the file's decoder
    # as through the fitted encoder (same seed): one decoder, rebuilt
    Z = back.sample(300, random_state=2, decode=False)
    assert set(np.unique(Z)) <= {0.0, 1.0} and Z.shape[1] == len(
        fitted[0].get_feature_names_out()
    )
    decoder = back.decoder()
    decoder.random_state = fitted[0].random_state
    pd.testing.assert_frame_equal(
        decoder.inverse_transform(Z),
        fitted[0].inverse_transform(Z),
        check_exact=False,
        rtol=1e-9,
    )


def test_the_copula_is_fitted_again_from_the_releases_rows(fitted, tmp_path):
    """Not stored: a function of the release's distribution (post-processing)."""
    back = _saved(fitted.to_release(), tmp_path)
    assert not any("copula" in name for name in back.arrays)
    ours, theirs = back.decoder().copula_, fitted[0].copula_
    assert theirs is not None
    np.testing.assert_allclose(ours.corr, theirs.corr, rtol=0, atol=1e-12)
    for a, b in zip(ours.cdfs, theirs.cdfs):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_the_release_states_the_whole_pipelines_guarantee(fitted):
    release = fitted.to_release()
    g = release.guarantee
    assert (g.epsilon, g.delta, g.neighbouring) == (
        fitted.epsilon_,
        fitted.delta_,
        "add-remove-one",
    )
    assert release.estimator == "SynthesisPipeline"
    assert release.plan["final_estimator"] == "ProjectedGaussianRelease"
    # what the fit spent on the private domains (numeric columns learned)
    assert release.params["encoder_epsilon"] == fitted[0].epsilon_ > 0
    assert release.params["final"]["epsilon"] == pytest.approx(1.0 - fitted[0].epsilon_)
    # fitted values, not parameters changed after the fit
    fitted[0].set_params(n_bins=3)
    try:
        assert fitted.to_release().params == release.params
    finally:
        fitted[0].set_params(n_bins=10)


def test_an_array_fitted_pipeline_gives_back_an_array(tmp_path):
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 3, 500), rng.integers(0, 2, 500)])
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories={0: [0, 1, 2], 1: [0, 1]}, random_state=0),
        DampedPrivateSynthesizer(epsilon=2.0, random_state=0),
    ).fit(X)
    rows = _saved(pipe.to_release(), tmp_path).sample(50, random_state=0)
    assert isinstance(rows, np.ndarray) and rows.dtype == X.dtype
    assert rows.shape == (50, 2)
    assert set(np.unique(rows[:, 0])) <= {0, 1, 2}


def test_domains_learned_without_privacy_warn_when_published():
    df = _frame()[["age", "colour"]]
    pipe = make_synthesis_pipeline(
        BooleanEncoder(random_state=0),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
        domain_share=None,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        pipe.fit(df)
    with pytest.warns(PrivacyLeakWarning, match="without privacy"):
        pipe.to_release()


def _colour_flag_encoder():
    return BooleanEncoder(
        categories={"colour": ["r", "g", "b"], "flag": [False, True]}, random_state=0
    )


def _fitted_without_guarantee(final):
    """The colour/flag encoder and ``final`` (not differentially private),
    fitted: the pipeline records no guarantee (PrivacyLeakWarning at fit)."""
    pipe = make_synthesis_pipeline(_colour_flag_encoder(), final)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        pipe.fit(_frame()[["colour", "flag"]])
    return pipe


def test_a_pipeline_without_a_guarantee_has_no_release():
    from skdp_synth import CovarianceLossMicroaggregator

    pipe = _fitted_without_guarantee(
        CovarianceLossMicroaggregator(k=10, random_state=0)
    )
    # the microaggregator ((n/k)-anonymity) has no release of its own, and
    # the pipeline records no guarantee (PrivacyLeakWarning at fit)
    assert pipe.privacy_guarantee_ is None
    with pytest.raises(TypeError, match="CovarianceLossMicroaggregator has no release"):
        pipe.to_release()


def test_a_last_step_with_a_release_but_no_guarantee_is_refused():
    """A last step that has ``to_release`` but is not differentially private
    (here the microaggregator given one): the pipeline records no guarantee,
    so it has nothing to publish (``ValueError``, not the microaggregator's
    own ``TypeError`` above)."""
    from skdp_synth import CovarianceLossMicroaggregator

    class Publishing(CovarianceLossMicroaggregator):
        def to_release(self):  # pragma: no cover - never reached
            raise AssertionError("the pipeline must refuse before asking")

    pipe = _fitted_without_guarantee(Publishing(k=10, random_state=0))
    assert pipe.privacy_guarantee_ is None
    with pytest.raises(ValueError, match="records no privacy guarantee"):
        pipe.to_release()


def test_a_step_whose_decoding_is_not_stored_is_refused():
    from sklearn.preprocessing import FunctionTransformer

    df = _frame()[["colour", "flag"]]
    pipe = make_synthesis_pipeline(
        _colour_flag_encoder(),
        FunctionTransformer(inverse_func=lambda Z: Z, check_inverse=False),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
    ).fit(df)
    with pytest.raises(TypeError, match="single BooleanEncoder"):
        pipe.to_release()


# ------------------------------------------------ the file is untrusted input
def _members(path):
    with np.load(path, allow_pickle=False) as z:
        arrays = {n: z[n] for n in z.files}
    meta = json.loads(arrays.pop("metadata").tobytes().decode("utf-8"))
    return meta, arrays


def _rewrite(path, meta, arrays):
    """A tampered file with a valid content hash (not a signature)."""
    from skdp_synth.release import _content_hash

    meta = {k: v for k, v in meta.items() if k != "content_hash"}
    strip = {k[len("array_") :]: v for k, v in arrays.items()}
    meta["content_hash"] = _content_hash(meta, strip)
    text = json.dumps(meta).encode("utf-8")
    np.savez(path, metadata=np.frombuffer(text, dtype=np.uint8), **arrays)


def _spec(meta, name):
    for spec in meta["plan"]["decoder"]["specs"]:
        if spec["name"] == ["s", name]:
            return spec
    raise AssertionError(name)


def _index(meta, name):
    specs = meta["plan"]["decoder"]["specs"]
    return [s["name"] for s in specs].index(["s", name])


def _tampering():
    def bits(meta, arrays):
        _spec(meta, "colour")["bits"][0] = "colour=x"

    def level_swapped(meta, arrays):
        _spec(meta, "colour")["levels"][0] = ["s", "x"]

    def untagged_level(meta, arrays):
        _spec(meta, "colour")["levels"][0] = "r"

    def dtype(meta, arrays):
        _spec(meta, "age")["dtype"] = "__import__('os').system('true')"

    def unknown_dtype(meta, arrays):
        _spec(meta, "age")["dtype"] = "int77"

    def kind(meta, arrays):
        _spec(meta, "colour")["kind"] = "free text"

    def edges(meta, arrays):
        k = _index(meta, "age")
        arrays[f"array_decoder_edges_{k}"] = arrays[f"array_decoder_edges_{k}"][::-1]

    def fine_counts(meta, arrays):
        k = _index(meta, "wage")
        c = arrays[f"array_decoder_fine_counts_{k}"].copy()
        c[0] = -1.0
        arrays[f"array_decoder_fine_counts_{k}"] = c

    def fine_length(meta, arrays):
        k = _index(meta, "wage")
        name = f"array_decoder_fine_finest_{k}"
        arrays[name] = arrays[name][:-1]

    def extra_array(meta, arrays):
        arrays["array_decoder_payload_0"] = np.zeros(3)

    def no_decoder(meta, arrays):
        del meta["plan"]["decoder"]

    def width(meta, arrays):
        meta["plan"]["decoder"]["specs"].pop()

    def duplicate_name(meta, arrays):
        _spec(meta, "colour")["name"] = ["s", "age"]

    def decode_param(meta, arrays):
        meta["plan"]["decoder"]["params"]["decode"] = "anything"

    def version(meta, arrays):
        meta["plan"]["decoder"]["version"] = 99

    def time_unit(meta, arrays):
        _spec(meta, "colour")["time_unit"] = "D"

    # a privacy audit of this round's code: each loaded, then crashed in
    # sample with another error, gave bytes, or decoded outside its domain
    def bytes_dtype(meta, arrays):
        _spec(meta, "colour")["dtype"] = "|S1"

    def complex_numbers(meta, arrays):
        _spec(meta, "wage")["dtype"] = "complex128"

    def zone_file_path(meta, arrays):
        _spec(meta, "day")["dtype"] = "datetime64[ns, dateutil/../../etc/passwd]"

    def array_with_extension_dtype(meta, arrays):
        meta["plan"]["decoder"]["frame"] = False

    def cap_outside_the_histogram(meta, arrays):
        _spec(meta, "wage")["fine"]["cap"] = [-2e9, -1e9]

    def many_columns_without_bits(meta, arrays):
        specs = meta["plan"]["decoder"]["specs"]
        for i in range(1100):
            specs.append(
                {
                    "name": ["s", f"constant{i}"],
                    "kind": "nominal",
                    "levels": [["s", "x"]],
                    "missing": False,
                    "dtype": "object",
                    "encoding": "thermometer",
                    "integer": False,
                    "bits": [],
                    "time_unit": None,
                    "fine": None,
                }
            )

    return {f.__name__: f for f in locals().values() if callable(f)}


TAMPER = _tampering()


@pytest.mark.parametrize("case", sorted(TAMPER))
def test_a_tampered_decoder_is_refused_on_load(fitted, tmp_path, case):
    path = tmp_path / "release.npz"
    fitted.to_release().save(path)
    Release.load(path)  # the untouched file loads
    meta, arrays = _members(path)
    TAMPER[case](meta, arrays)
    _rewrite(path, meta, arrays)
    with pytest.raises(MalformedReleaseError):
        Release.load(path)


# ----------------------------------------------------------------- the CLI
def test_cli_samples_the_table_from_the_release_alone(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 1200
    pd.DataFrame(
        {
            "age": rng.integers(18, 80, n),
            "income": np.round(np.exp(rng.normal(10, 1, n)), 2),
            "job": rng.choice(["a", "b", "c"], n),
        }
    ).to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "schema.json").write_text(
        json.dumps(
            {
                "columns": {
                    # complete: declared so (Int64 can hold a missing value)
                    "age": {"type": "numeric", "integer": True, "missing": False},
                    "income": "numeric",
                    "job": {"type": "categorical", "levels": ["a", "b", "c"]},
                }
            }
        )
    )
    rel, out = tmp_path / "release.npz", tmp_path / "out.csv"
    common = ["--schema", str(tmp_path / "schema.json"), "--seed", "0"]
    assert (
        cli.main(
            [
                "synthesize",
                str(tmp_path / "in.csv"),
                "--method",
                "gaussian-release",
                "--epsilon",
                "1",
                "--delta",
                "1e-6",
                "-o",
                str(tmp_path / "syn.csv"),
                "--release-out",
                str(rel),
                *common,
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert cli.main(["sample", str(rel), "--rows", "50", "-o", str(out)]) == 0
    rows = pd.read_csv(out)
    assert list(rows.columns) == ["age", "income", "job"] and len(rows) == 50
    assert rows["job"].isin(["a", "b", "c"]).all()
    assert (rows["age"] == rows["age"].round()).all()
    err = capsys.readouterr().err
    assert "epsilon=1" in err and "post-processing" in err
    # --decimals formats the float columns (otherwise full floats such
    # as 881.3660194276002, with no way to say otherwise)
    assert rows["income"].astype(str).str.len().max() > 8
    args = ["sample", str(rel), "--rows", "50", "-o", str(out), "--decimals", "2"]
    assert cli.main(args) == 0
    capsys.readouterr()
    text = pd.read_csv(out, dtype=str)
    decimals = text["income"].str.partition(".")[2].str.len()
    assert decimals.max() <= 2
    assert cli.main([*args[:-1], "-1"]) == 2
    err = capsys.readouterr().err
    assert "between 0 and 15" in err and err.count("\n") == 1


def test_cli_sample_refuses_a_release_without_a_decoder(tmp_path, capsys):
    X = (np.random.default_rng(0).random((300, 4)) < 0.3).astype(int)
    est = ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0).fit(X)
    est.to_release().save(tmp_path / "bits.npz")
    out = tmp_path / "out.csv"
    code = cli.main(
        ["sample", str(tmp_path / "bits.npz"), "--rows", "5", "-o", str(out)]
    )
    assert code == 2 and not out.exists()
    assert "without a decoder" in capsys.readouterr().err


# ------------------------------------------------ large decoded samples
def test_a_large_decoded_sample_is_drawn_and_decoded_in_chunks(fitted, monkeypatch):
    """The n x bits float matrix was built whole before decoding (0.7 GB
    per million rows on flights): each chunk is now drawn and decoded
    before the next, within a bound on the working memory."""
    import tracemalloc

    from skdp_synth import validation

    release = fitted.to_release()
    monkeypatch.setattr(validation, "SAMPLE_CHUNK_BYTES", 1 << 16)
    n = 20_000
    bits = release.arrays["points"].shape[1]
    tracemalloc.start()
    try:
        rows = release.sample(n, random_state=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(rows) == n and list(rows.columns) == list(fitted[0].columns_)
    # the whole encoded matrix alone would take n * bits * 8 bytes
    assert peak < n * bits * 8


def test_the_release_file_is_compressed(fitted, tmp_path):
    """0/1 points stored as float64 made a 16 MB file of a 1.7 MB table."""
    release = fitted.to_release()
    path = tmp_path / "release.npz"
    release.save(path)
    raw = sum(a.nbytes for a in release.arrays.values())
    assert path.stat().st_size < raw / 4
    back = Release.load(path)
    for name, arr in release.arrays.items():
        np.testing.assert_array_equal(back.arrays[name], arr)


def test_cli_outputs_never_overwrite_an_input_or_each_other(tmp_path, capsys):
    """``synthesize real.csv -o real.csv`` replaced the real table, and
    ``sample rel.npz -o rel.npz`` the release; now refused before any read."""
    real = tmp_path / "real.csv"
    pd.DataFrame({"g": ["a", "b"] * 50}).to_csv(real, index=False)
    before = real.read_bytes()
    base = ["synthesize", str(real), "--method", "gaussian-release"]
    for extra in (
        ["-o", str(real)],
        ["-o", str(tmp_path / "o.csv"), "--release-out", str(tmp_path / "o.csv")],
        ["-o", str(tmp_path / "o.csv"), "--release-out", str(real)],
    ):
        assert cli.main([*base, *extra]) == 2
        assert "are the same file" in capsys.readouterr().err
    assert real.read_bytes() == before and not (tmp_path / "o.csv").exists()
    rel = tmp_path / "rel.npz"
    rel.write_bytes(b"not read")
    assert cli.main(["sample", str(rel), "-o", str(rel)]) == 2
    assert rel.read_bytes() == b"not read"


def test_cli_rows_must_be_positive_before_anything_is_read(tmp_path, capsys):
    for command in (
        ["synthesize", str(tmp_path / "absent.csv"), "--method", "gaussian-release"],
        ["sample", str(tmp_path / "absent.npz")],
    ):
        # one line, status 2 (argparse printed its usage block and raised
        # SystemExit before)
        assert cli.main([*command, "--rows", "0", "-o", str(tmp_path / "o.csv")]) == 2
        err = capsys.readouterr().err
        assert "--rows: must be a positive integer" in err
        assert err.startswith("skdp-synth: error: ") and err.count("\n") == 1


def test_cli_report_refuses_a_release_of_another_table(fitted, tmp_path, capsys):
    """Any release was believed: an unrelated one's ε went on the page."""
    rel = tmp_path / "rel.npz"
    fitted.to_release().save(rel)
    other = pd.DataFrame({"x": [1.0, 2.0, 3.0] * 10})
    other.to_csv(tmp_path / "real.csv", index=False)
    other.to_csv(tmp_path / "syn.csv", index=False)
    page = tmp_path / "r.html"
    args = ["report", str(tmp_path / "real.csv"), str(tmp_path / "syn.csv")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        assert cli.main([*args, "-o", str(page), "--release", str(rel)]) == 2
        assert "is the release of a table with columns" in capsys.readouterr().err
        X = (np.random.default_rng(0).random((300, 4)) < 0.3).astype(int)
        est = ProjectedGaussianRelease(epsilon=5.0, delta=1e-6, random_state=0)
        est.fit(X).to_release().save(tmp_path / "bits.npz")
        bits = ["--release", str(tmp_path / "bits.npz")]
        assert cli.main([*args, "-o", str(page), *bits]) == 2
        assert "without a decoder" in capsys.readouterr().err
    assert not page.exists()


# ------------------------------------------- a step refitted after the pipeline
def test_a_step_refitted_alone_after_the_pipeline_has_no_pipeline_release():
    """Refitting the encoder (with its own ε) or the last step alone after
    the pipeline's fit left ``to_release()`` stating the old guarantee for
    the new content (ε = 1 for a 5.8 spend, or the encoder's 0.2 dropped)."""
    df = _frame()[["age", "colour"]]
    for refit in ("encoder", "last"):
        pipe = make_synthesis_pipeline(
            BooleanEncoder(categories={"colour": ["r", "g", "b"]}, random_state=0),
            ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
        ).fit(df)
        pipe.to_release()  # fine after the pipeline's fit
        if refit == "encoder":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pipe[0].set_params(epsilon=5.0).fit(df)
                pipe[0].set_params(epsilon="auto")
        else:
            pipe[-1].fit(pipe[0].transform(df))
        with pytest.raises(ValueError, match="refitted on its own"):
            pipe.to_release()
        pipe.fit(df)
        assert pipe.to_release().guarantee.epsilon == pytest.approx(1.0)


def test_an_encoder_failing_after_its_noise_is_charged(monkeypatch):
    """A fit that failed after the private domains' noise was drawn (a NaT
    in a date column did, before its fix) was rolled back uncharged: a
    free, repeatable answer. The pipeline now charges the encoder's share."""
    from skdp_synth import BudgetAccountant
    from skdp_synth.preprocessing import _boolean_encoder

    def boom(self, *args, **kwargs):
        raise RuntimeError("a failure after the noise")

    monkeypatch.setattr(
        _boolean_encoder.BooleanEncoder, "_warn_coarse_private_domains", boom
    )
    ledger = BudgetAccountant(epsilon=10.0, delta=1e-3, neighbouring="add-remove-one")
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories={"colour": ["r", "g", "b"]}, random_state=0),
        ProjectedGaussianRelease(
            epsilon=1.0, delta=1e-6, accountant=ledger, random_state=0
        ),
    )
    with pytest.raises(RuntimeError, match="after the noise"):
        pipe.fit(_frame()[["age", "colour"]])
    eps, _ = ledger.total_spent
    assert eps == pytest.approx(0.2)  # domain_share "auto": one learned domain


def test_the_default_size_is_drawn_in_chunks_too(fitted, monkeypatch):
    """``sample()`` without ``n`` (the release's own size) built the whole
    encoded matrix first (found by a privacy audit)."""
    release = fitted.to_release()
    calls = []
    real = Release._weighted_chunks

    def spy(self, n, rng, decoding):
        calls.append(n)
        return real(self, n, rng, decoding)

    monkeypatch.setattr(Release, "_weighted_chunks", spy)
    rows = release.sample(random_state=0)
    assert calls == [release.plan["default_n_samples"]] == [len(rows)]


# ------------------------------------------------- sampling chunk by chunk
def _joined(chunks):
    if isinstance(chunks[0], pd.DataFrame):
        return pd.concat(chunks)
    return np.concatenate(chunks)


def _same(a, b):
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    else:
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


@pytest.fixture(scope="module")
def rows_release():
    """A ``"rows"`` release with a decoder (a PrivateSampler's paid rows)."""
    from skdp_synth import PrivateSampler

    frame = _frame(600)[["age", "colour", "flag"]]
    pipe = make_synthesis_pipeline(
        BooleanEncoder(categories={"colour": ["r", "g", "b"]}, random_state=0),
        PrivateSampler(d=1, k=40, random_state=0),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pipe.fit(frame).to_release()


@pytest.mark.parametrize("kind", ["weighted-points", "rows"])
@pytest.mark.parametrize("decode", [True, False])
def test_iter_sample_chunks_put_end_to_end_are_sample(
    fitted, rows_release, kind, decode, monkeypatch
):
    """Whatever ``chunk_rows``, across several internal chunks (made small
    here), with an integer seed or a generator (left in the same state):
    the rows, dtypes and index of ``sample``. For a ``"rows"`` release with a
    decoder its seeds follow all the row indices in the stream, as
    ``sample`` draws them."""
    from skdp_synth import validation

    release = fitted.to_release() if kind == "weighted-points" else rows_release
    assert release.plan["sampler"] == kind and "decoder" in release.plan
    monkeypatch.setattr(validation, "SAMPLE_CHUNK_BYTES", 1 << 14)
    n = 3 * validation.sample_chunk_rows(release.plan["n_features"]) + 123
    whole = release.sample(n, random_state=7, decode=decode)
    assert len(whole) == n
    for chunk_rows in (None, 1000, 4096, n, 10 * n):
        chunks = list(
            release.iter_sample(n, chunk_rows=chunk_rows, random_state=7, decode=decode)
        )
        if chunk_rows is not None:
            assert [len(c) for c in chunks[:-1]] == [chunk_rows] * (len(chunks) - 1)
            assert 0 < len(chunks[-1]) <= chunk_rows
        _same(whole, _joined(chunks))
    g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
    _same(
        release.sample(n, random_state=g1, decode=decode),
        _joined(list(release.iter_sample(n, random_state=g2, decode=decode))),
    )
    assert g1.integers(0, 2**62) == g2.integers(0, 2**62)


def test_iter_sample_of_the_default_size_and_of_the_released_rows(fitted, rows_release):
    """``n_samples=None``: the plan's ``default_n_samples`` for weighted
    points, the released rows themselves for a ``"rows"`` release."""
    release = fitted.to_release()
    chunks = list(release.iter_sample(chunk_rows=100, random_state=0))
    assert sum(map(len, chunks)) == release.plan["default_n_samples"]
    _same(release.sample(random_state=0), _joined(chunks))
    for decode in (True, False):
        chunks = list(
            rows_release.iter_sample(chunk_rows=7, random_state=1, decode=decode)
        )
        assert sum(map(len, chunks)) == len(rows_release.arrays["rows"])
        _same(rows_release.sample(decode=decode, random_state=1), _joined(chunks))


def test_iter_sample_holds_a_few_chunks_whatever_n(fitted, monkeypatch):
    """The working memory of drawing and decoding every chunk does not grow
    with ``n``: 4 and 16 times the rows, the same peak (within noise), far
    below the encoded rows of the smaller sample."""
    import tracemalloc

    from skdp_synth import validation

    release = fitted.to_release()
    monkeypatch.setattr(validation, "SAMPLE_CHUNK_BYTES", 1 << 16)
    bits = release.arrays["points"].shape[1]

    def peak(n):
        tracemalloc.start()
        try:
            count = 0
            for chunk in release.iter_sample(n, chunk_rows=2000, random_state=0):
                count += len(chunk)
            return count, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    (n1, p1), (n2, p2) = peak(20_000), peak(80_000)
    assert (n1, n2) == (20_000, 80_000)
    assert p1 < 20_000 * bits * 8 and p2 < 1.5 * p1


def test_iter_sample_checks_its_arguments_before_the_first_chunk(fitted):
    release = fitted.to_release()
    for bad in ({"n_samples": 0}, {"chunk_rows": 0}, {"chunk_rows": 2.5}):
        with pytest.raises(ValueError):
            release.iter_sample(**bad)  # not only when iterated
    bits = Release(
        estimator="Example",
        params={},
        guarantee=release.guarantee,
        arrays={"points": np.eye(2), "weights": np.array([0.5, 0.5])},
        plan={"sampler": "weighted-points"},
    )
    with pytest.raises(ValueError, match="pass n_samples"):
        bits.iter_sample()


def test_load_bounds_the_declared_rows(tmp_path):
    """``max_rows`` (``MAX_RELEASE_ROWS`` by default): a file declaring that
    many rows loads, one more is refused; the limit is a positive
    integer."""
    from skdp_synth.privacy import PrivacyGuarantee
    from skdp_synth.release import MAX_RELEASE_ROWS

    def declaring(n):
        rel = Release(
            estimator="Example",
            params={},
            guarantee=PrivacyGuarantee(1.0, 0.0, "replace-one", "example"),
            arrays={"points": np.eye(2), "weights": np.array([0.5, 0.5])},
            plan={"sampler": "weighted-points", "default_n_samples": n},
        )
        path = tmp_path / f"r{n}.npz"
        rel.save(path)
        return path

    assert MAX_RELEASE_ROWS == 10**9
    at = Release.load(declaring(MAX_RELEASE_ROWS))
    assert at.plan["default_n_samples"] == MAX_RELEASE_ROWS
    with pytest.raises(MalformedReleaseError, match="max_rows=1000000000"):
        Release.load(declaring(MAX_RELEASE_ROWS + 1))
    assert Release.load(declaring(50), max_rows=50).sample().shape == (50, 2)
    with pytest.raises(MalformedReleaseError, match="default_n_samples=51"):
        Release.load(declaring(51), max_rows=50)
    with pytest.raises(ValueError, match="max_rows"):
        Release.load(declaring(50), max_rows=0)


def test_cli_sample_in_chunks_writes_the_same_file(fitted, tmp_path, capsys):
    """``--chunk-rows`` changes how the rows are written, not which: the
    file of 1, 7 or the default chunk rows, and standard output, hold the
    same bytes; ``--chunk-rows 0`` is a usage error."""
    path = tmp_path / "release.npz"
    fitted.to_release().save(path)
    texts = []
    for extra in ([], ["--chunk-rows", "7"], ["--chunk-rows", "1"]):
        out = tmp_path / "out.csv"
        argv = ["sample", str(path), "--rows", "300", "--seed", "4", "-o", str(out)]
        assert cli.main([*argv, *extra]) == 0
        texts.append(out.read_text())
        assert "wrote 300 rows" in capsys.readouterr().err
    argv = ["sample", str(path), "--rows", "300", "--seed", "4", "--chunk-rows"]
    assert cli.main([*argv, "13", "-o", "-"]) == 0
    texts.append(capsys.readouterr().out)
    assert len(set(texts)) == 1 and texts[0].count("\n") == 301
    assert cli.main([*argv, "0", "-o", str(tmp_path / "x.csv")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert not (tmp_path / "x.csv").exists()
