"""The zero-inflated jump's choice inside a run of leaves beyond a point
mass (:func:`skdp_synth.preprocessing._numeric_domain._kept_counts`)."""

import numpy as np

from skdp_synth.preprocessing._numeric_domain import (
    _kept_counts,
    _whole_run,
    kept_counts,
)


def _collections_eps_03_seed_1():
    """openintro ``loans``' ``total_collection_amount_ever`` (8,000 rows,
    85 % at 0, the rest at 16 to 199,308) at ε = 0.3, seed 1 of
    ``benchmarks/bench_suite.py`` (b = 323): the noisy leaf counts as the
    domain drew them. ``[1, 4)`` drew 999 (3.1 b) and holds no row; the
    rows past the 0s lie in ``[16, 256)`` (406 rows, 234 noisy) and
    ``[256, 4096)`` (598, 866 noisy)."""
    edges = np.array(
        [
            -1099511627776.0, -68719476736.0, -17179869186.0, -4294967296.0,
            -1073741826.0, -268435456.0, -67108866.0, -16777216.0, -4194306.0,
            -2097153.0, -1482911.0, -1359836.0, -1246975.0, -1048576.0,
            -65536.0, -55111.0, -46344.0, -32771.0, -16386.0, -4096.0,
            -1026.0, -256.0, -16.0, -10.0, -8.0, -5.0, -1.0, 0.0, 1.0, 4.0,
            16.0, 256.0, 4096.0, 16385.0, 65536.0, 1048576.0, 16777216.0,
            268435456.0, 1073741825.0, 2147483649.0, 4294967296.0,
            17179869185.0, 68719476736.0, 1099511627777.0,
        ]
    )  # fmt: skip
    raw = np.array(
        [
            193, -71, -411, -157, 205, -22, -110, -26, -1511, 250, 154, 1052,
            108, 61, 464, 481, -414, -167, 429, -20, 275, 98, -26, -59, 586,
            40, -117, 6762, 999, 627, 234, 866, 79, 103, 275, -17, 1896, 189,
            63, -583, 151, -202, -151,
        ],
        dtype=np.float64,
    )  # fmt: skip
    finest = np.zeros(raw.size, dtype=bool)
    finest[[26, 27]] = True
    return edges, raw, finest, 323.2323232323232


def test_a_tentative_run_no_piece_of_which_passes_joins_whole():
    """The run past the 0s passes the tentative level only as a whole; no
    piece of it (cut at wide stretches under ``2 b``) passes on its own.
    Before, its strongest piece in noise sds, the noise leaf ``[1, 4)``,
    joined alone: the cap stopped at 8 and the rows came back as 0s and
    1-7 (std ratio 0.00). The run now joins whole, up to ``[256, 4096)``,
    as tentative leaves whose bins the release tests."""
    edges, raw, finest, b = _collections_eps_03_seed_1()
    top = int(np.flatnonzero(edges == 256.0)[0])  # the leaf [256, 4096)
    out, (lo, hi), tentative = _kept_counts(edges, raw, b, finest, True)
    assert out[top] == raw[top]
    assert hi >= 4096.0 and lo == 0.0
    assert tentative[top] and tentative[top - 2]  # [1, 4) is tentative too
    assert not tentative[27]  # the point mass is not
    # the public plain form agrees
    out2, cap2 = kept_counts(edges, raw, b, finest, integer=True)
    assert np.array_equal(out, out2) and cap2 == (lo, hi)


def test_a_whole_run_ends_at_its_outer_leaves_above_two_b():
    """``_whole_run``: from the first to the last leaf above ``2 b`` of the
    run, nearest first on either side; its ends where none is."""
    c = np.array([0.0, 5.0, 1.0, 3.0, 1.0, 0.5])
    assert _whole_run(c, np.arange(6), 1.0) == (1, 3)
    assert _whole_run(c, np.arange(5, -1, -1), 1.0) == (3, 1)
    assert _whole_run(np.zeros(4), np.array([1, 2, 3]), 1.0) == (1, 3)


def _novisits_eps_1_seed_3():
    """AER ``NMES1988``'s ``novisits`` (3,524 training rows of a count, 84 %
    at 0, at most 155) at ε = 1, seed 3 of ``python -m
    benchmarks.bench_suite --half tune --tables nmes1988`` (b = 41.7): the
    noisy leaf counts as the domain drew them. No row lies below 0; the
    leaves ``[-131073, -65536)`` and ``[-55111, -50538)`` drew 146 and 313
    (3.5 and 7.5 b)."""
    edges = np.array(
        [
            -1099511627776.0, -68719476736.0, -4294967296.0, -1073741826.0,
            -268435456.0, -16777216.0, -4194306.0, -1048576.0, -262146.0,
            -185366.0, -131073.0, -65536.0, -55111.0, -50538.0, -48396.0,
            -46344.0, -32771.0, -23174.0, -19487.0, -16386.0, -4096.0,
            -1026.0, -256.0, -16.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 16.0,
            256.0, 4096.0, 65536.0, 262145.0, 370728.0, 524289.0, 1048576.0,
            4194305.0, 16777216.0, 268435456.0, 4294967296.0, 17179869185.0,
            24296004000.0, 28892980823.0, 34359738369.0, 48592008000.0,
            50743359989.0, 52989960469.0, 55336026449.0, 57785961645.0,
            68719476736.0, 274877906945.0, 1099511627777.0,
        ]
    )  # fmt: skip
    raw = np.array(
        [
            9, 4, 14, 130, 74, 17, 6, -7, 80, -16, 146, -10, 313, 49, -115,
            -20, -9, -52, 21, -21, 25, -63, -21, -36, -62, 2912, 340, 106, 55,
            39, -89, 11, -1, 223, -64, -92, 161, -24, -8, 48, 50, 29, -20,
            -29, -90, 45, 34, -9, -49, -30, 0, -9, -15,
        ],
        dtype=np.float64,
    )  # fmt: skip
    finest = np.zeros(raw.size, dtype=bool)
    finest[24:29] = True
    return edges, raw, finest, 41.666666666666664


def test_past_a_natural_limit_only_a_piece_significant_on_its_own_joins():
    """Below the 0s a run of leaves passes the jump's level as a whole, but
    its strongest piece (``[-131073, -46344)``, 508 noisy rows in three
    leaves) does not on its own. Before, that piece joined: the cap went to
    -262,146 and 262,145 (the fences of a body of noise leaves) and the
    rows came back with a std ratio of 6,522. Past a natural limit the jump
    now stops: the range is the 0s, 1s and 2s."""
    edges, raw, finest, b = _novisits_eps_1_seed_3()
    out, (lo, hi), tentative = _kept_counts(edges, raw, b, finest, True)
    assert lo == 0.0 and hi <= 4.0
    assert not (out[edges[:-1] < 0] > 0).any()
    assert not tentative.any()
    # the same leaves one unit up (no point mass at 0): the jump is kept
    up = edges + np.where(np.abs(edges) < 300.0, 1.0, 0.0)
    _, (lo_up, _) = kept_counts(up, raw, b, finest, integer=True)
    assert lo_up < -40000.0
