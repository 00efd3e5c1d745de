"""The warning for rows past a numeric column's cap: the release's top
coarse bin against the domain's kept mass in it
(``_fences.capped_tail_reason``, through ``degenerate_reasons``;
benchmarks/results/bench_capped_tail.md)."""

import numpy as np

from skdp_synth.preprocessing._column_spec import _ColumnSpec
from skdp_synth.preprocessing._decoding import degenerate_reasons
from skdp_synth.preprocessing._fences import CAPPED_TAIL_Z, capped_tail_reason
from skdp_synth.preprocessing._numeric_domain import FineHistogram

B = 42.0


def _spec(top_kept=13.0, integer=True):
    """credit's ``Debt`` at ε = 1, seed 10 of ``bench_suite``: a kept range
    0-3 (3,015 zeros, 110 at 1, 13 at 2-3) while 18 % of the rows lie past
    it, up to 30,000."""
    edges = np.array([0.0, 1.0, 2.0, 4.0, 16.0, 256.0])
    counts = np.array([3015.0, 110.0, top_kept, 0.0, 0.0])
    hist = FineHistogram(
        edges,
        counts,
        0.0,
        np.array([1, 1, 0, 0, 0], bool),
        integer,
        (0.0, 4.0),
        True,
        B,
    )
    spec = _ColumnSpec("Debt", "numeric", [0.0, 1.0, 2.0, 3.0], False, np.dtype(float))
    spec.integer = integer
    spec.fine = hist
    return spec


def test_threshold_pinned():
    assert CAPPED_TAIL_Z == 3.0


def test_rows_past_the_cap_are_named():
    # the release: 595 ± 37.6 rows in the top bin [2, 3]; the domain kept 13
    spec = _spec()
    estimates = [(2967.5, 37.6), (-14.3, 37.6), (595.1, 37.6)]
    text = capped_tail_reason(spec, estimates)
    assert text is not None and "past the cap" in text and "bounds=" in text
    assert any(
        "past the cap" in r
        for r in degenerate_reasons(spec, estimates, 3563.0, None, False)
    )


def test_within_the_noise_is_not_named():
    # an excess of 3 sds of sqrt(σ² + 2 m b²) (m = 1) is not enough
    spec = _spec()
    sd = 37.6
    noise = float(np.sqrt(sd**2 + 2.0 * B**2))
    top = 13.0 + CAPPED_TAIL_Z * noise - 1.0
    estimates = [(2967.5, sd), (110.0, sd), (top, sd)]
    assert capped_tail_reason(spec, estimates) is None
    assert capped_tail_reason(spec, estimates[:2] + [(top + 2.0, sd)]) is not None


def test_closed_last_bin_of_an_integer_column():
    # the kept leaf [2, 4) overlaps the closed bin [2, 3]: its mass counts
    spec = _spec(top_kept=600.0)
    assert (
        capped_tail_reason(spec, [(2967.5, 37.6), (110.0, 37.6), (595.1, 37.6)]) is None
    )


def test_nothing_without_release_estimates():
    assert capped_tail_reason(_spec(), None) is None


def test_a_moderate_share_past_the_cap_is_not_named():
    # a normal column's fence at 1.3 sds: 227 rows past the cap against 268
    # kept in the top bin, 5.7 sds but under twice the kept mass
    spec = _spec(top_kept=268.0)
    estimates = [(2967.5, 27.0), (110.0, 27.0), (495.0, 27.0)]
    assert capped_tail_reason(spec, estimates) is None
    estimates[-1] = (268.0 * 3 + 1.0, 27.0)
    assert capped_tail_reason(spec, estimates) is not None


def test_not_for_a_date_time_column():
    spec = _spec()
    spec.time_unit = "s"
    assert (
        capped_tail_reason(spec, [(2967.5, 37.6), (-14.3, 37.6), (595.1, 37.6)]) is None
    )


def _credit_limit(filled):
    """openintro ``loans_full_schema``'s ``total_credit_limit`` at ε = 0.3,
    seed 3 of ``benchmarks.bench_suite --light``: 46 % of the rows past a
    cap at 131,072. The domain kept 1,205 noisy rows in the top bin
    ``[65536, 131071]`` (three of its five leaves emptied); the release
    measured 5,288 ± 186 there, and a pipeline filled the three emptied
    leaves with the 4,083 short (``_bin_mass.fill_emptied_leaves``)."""
    edges = np.array([16385.0, 32769, 65536, 77935, 92681, 101069, 110217, 131072])
    fill = 1361.1 if filled else 0.0
    counts = np.array([1725.0, 3895.1, fill, fill, fill, 473.0, 732.1])
    hist = FineHistogram(
        edges,
        counts,
        0.0,
        np.zeros(7, bool),
        True,
        (16385.0, 131072.0),
        True,
        323.2,
    )
    spec = _ColumnSpec(
        "total_credit_limit",
        "numeric",
        [16385.0, 32769.0, 65536.0, 131071.0],
        False,
        np.dtype(float),
    )
    spec.integer = True
    spec.fine = hist
    return spec


LIMIT_ESTIMATES = [(737.6, 185.7), (2034.6, 185.7), (5288.5, 185.7)]


def test_the_domains_own_kept_mass_not_the_filled_one():
    """Read after the fill, the top bin's kept mass is the release's own
    estimate and nothing is named (the parent's behaviour: std ratio 0.14,
    silent); against the domain's released histogram the excess is 4,083
    rows, 11 sds and 3.4 times the kept 1,205."""
    filled, domain = _credit_limit(True), _credit_limit(False).fine
    assert capped_tail_reason(filled, LIMIT_ESTIMATES) is None
    text = capped_tail_reason(filled, LIMIT_ESTIMATES, domain)
    assert text is not None and "past the cap 131071" in text
    reasons = degenerate_reasons(
        filled, LIMIT_ESTIMATES, 8000.0, None, False, domain=domain
    )
    assert any("past the cap" in r for r in reasons)


def test_a_pipeline_tests_the_domain_before_its_leaves_are_filled(monkeypatch):
    """``SynthesisPipeline`` hands ``degenerate_reasons`` each numeric
    column's fine histogram as the encoder released it, not the one
    ``_reconcile_leaves`` filled from the release (here every fill doubles
    the counts, so the two differ)."""
    import dataclasses
    import warnings

    import pandas as pd

    from skdp_synth import ProjectedGaussianRelease, make_synthesis_pipeline
    from skdp_synth.preprocessing import BooleanEncoder, _bin_mass, _decoding

    def doubled(hist, edges, estimates):
        return dataclasses.replace(hist, counts=2.0 * np.asarray(hist.counts))

    seen = {}
    real = _decoding.degenerate_reasons

    def spy(spec, *args, domain=None, **kwargs):
        seen[spec.name] = (domain, spec.fine)
        if domain is not None:
            kwargs["domain"] = domain
        return real(spec, *args, **kwargs)

    monkeypatch.setattr(_bin_mass, "fill_emptied_leaves", doubled)
    monkeypatch.setattr(_decoding, "degenerate_reasons", spy)
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {"x": rng.lognormal(5.0, 1.0, 2000), "c": rng.integers(0, 3, 2000)}
    )
    df["c"] = df["c"].astype(str)
    pipe = make_synthesis_pipeline(
        BooleanEncoder(epsilon="auto", random_state=0),
        ProjectedGaussianRelease(epsilon=1.0, delta=1e-6, random_state=0),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(df)
    domain, filled = seen["x"]
    assert domain is not None
    np.testing.assert_allclose(2.0 * np.asarray(domain.counts), filled.counts)
