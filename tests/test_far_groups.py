"""A coarse bin's far group of kept leaves that the release's estimate of the
bin does not need is emptied, so the decoder draws none of the bin's rows
there (``_bin_mass.drop_unneeded_far_groups``, run by the pipeline's level
rules). Released quantities only (post-processing)."""

from __future__ import annotations

import numpy as np
from _fine_hist import fine_hist
from test_bin_support import _run_levels, _spec

from skdp_synth.preprocessing._decoding import decode_fine

B = 70.0
#: a zero-inflated column's positive bin [1, 2^29): two kept leaves next to
#: the 0s' side, then, past emptied stretches, two noise leaves near 1e5 and
#: 4e8 (the shape of the fit that exploded: std x139,105)
EDGES = [0, 1, 65, 256, 4096, 65536, 262145, 2.0**28, 2.0**29]
COUNTS = [2100.0, 0.0, 187.0, 214.0, 0.0, 159.0, 0.0, 151.0]
FINEST = [True] + [False] * 7
TENT = [False] + [True] * 7
LEVELS = [0.0, 1.0, 2.0**29 - 1]


def _zero_inflated():
    return fine_hist(EDGES, COUNTS, scale=B, finest=FINEST, tentative=TENT)


def _decoded(hist, n=20000):
    rng = np.random.default_rng(0)
    return decode_fine(
        hist, np.full(n, 1.0), np.full(n, LEVELS[-1]), np.ones(n, bool), rng
    )


def test_far_noise_groups_are_not_decoded():
    """The release puts the positive bin at 287 ± 71 rows; the two leaves
    nearest the 0s hold 401 noisy rows, so the release needs no row of the
    far groups: through the pipeline's level rules they are emptied and no
    row of the bin decodes at or beyond 4,096. Before, about 3 % of the
    bin's rows decoded near 1e5 and 4e8."""
    spec = _spec("porch", LEVELS, _zero_inflated())
    before = _decoded(spec.fine)
    assert before.max() > 1e8  # the parent's decoding
    _run_levels([spec], [[(2107.0, 71.0), (287.0, 71.0)]])
    np.testing.assert_allclose(spec.fine.counts, [2100, 0, 187, 214, 0, 0, 0, 0])
    assert _decoded(spec.fine).max() < 4096


def test_a_needed_far_group_stays():
    """Where the release's estimate of the bin exceeds the near leaves' sum
    by more than ``FAR_NEED_Z`` sds of the difference (here 700 rows
    against 401), the far groups hold rows the release measured and stay;
    so does a far leaf confirmed by its own count (``b ln(L / 0.01)``),
    and the bin that holds the core's densest leaf is never touched."""
    from skdp_synth.preprocessing._bin_mass import (
        FAR_NEED_Z,
        drop_unneeded_far_groups,
    )

    hist = _zero_inflated()
    need = 401.0 + 1.01 * FAR_NEED_Z * np.sqrt(71.0**2 + 2 * 2 * B * B)
    # 700 > need: the outermost group (151) is not needed with 560 left
    # (700 - 560 is within the noise), the next one (159) is
    assert need < 700.0 and 700.0 - 560.0 < FAR_NEED_Z * np.sqrt(71**2 + 6 * B * B)
    out = drop_unneeded_far_groups(hist, LEVELS, [(2107.0, 71.0), (700.0, 71.0)])
    np.testing.assert_allclose(out.counts, [2100, 0, 187, 214, 0, 159, 0, 0])
    strong = COUNTS[:7] + [B * np.log(len(COUNTS) / 0.01) + 1.0]
    hist = fine_hist(EDGES, strong, scale=B, finest=FINEST, tentative=TENT)
    out = drop_unneeded_far_groups(hist, LEVELS, [(2107.0, 71.0), (287.0, 71.0)])
    assert out.counts[-1] > 0 and out.counts[5] > 0
    # one bin over everything: the core's bin, left as it is
    one = drop_unneeded_far_groups(hist, [0.0, LEVELS[-1]], [(2500.0, 71.0)])
    assert one is hist
