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
