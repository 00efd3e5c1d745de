"""Releases: what a private estimator lets out, as a small portable value.

A fitted estimator holds state that is *not* private (the exact ``n`` under
add/remove neighbours, solver diagnostics, the exact density of
:class:`~skdp_synth.PrivateSampler`) and pickling it copies all of that. What
is meant to be published is its :class:`Release`, from ``est.to_release()``:
only what the recorded :class:`~skdp_synth.privacy.PrivacyGuarantee` covers
(the noisy statistics or the rows paid for), the public parameters and plan,
and the guarantee itself. ``doc/privacy.md`` lists, per estimator, exactly
what a release holds.

The file format (:meth:`Release.save`) is a NumPy ``.npz`` archive: one
``.npy`` member per named array (numeric dtypes only, read back with
``allow_pickle=False``) and a UTF-8 JSON member ``metadata`` with the format
version, the estimator's name, its public parameters, the guarantee and the
plan. Nothing is pickled, so loading a release runs no code.

Examples
--------
>>> import numpy as np
>>> from skdp_synth.privacy import PrivacyGuarantee
>>> rel = Release(
...     estimator="Example",
...     params={"k": 2},
...     guarantee=PrivacyGuarantee(1.0, 0.0, "replace-one", "example"),
...     arrays={"rows": np.array([[0.0, 1.0], [1.0, 1.0]])},
...     plan={"sampler": "rows"},
... )
>>> rel.sample(3, random_state=0).shape
(3, 2)
>>> rel.to_dict()["guarantee"]["epsilon"]
1.0
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .mechanisms import make_generator
from .privacy import DIFFERENTIAL_PRIVACY, PrivacyGuarantee

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from numpy.typing import ArrayLike, NDArray
    from sklearn.base import BaseEstimator

__all__ = ["FORMAT_VERSION", "Release"]

#: Version of the release format; :meth:`Release.load` refuses newer ones.
FORMAT_VERSION = 1

_METADATA = "metadata"
_ARRAY_PREFIX = "array_"


def _jsonable(value):
    """Public parameters and plans as plain JSON values (arrays become lists)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


@dataclass(frozen=True, eq=False)
class Release:
    """A published output of a private estimator (frozen, versioned).

    Parameters
    ----------
    estimator : str
        Name of the estimator class that produced it.
    params : dict
        Its public parameters (``accountant`` and ``random_state`` are never
        included: a seed of non-hardened noise would give the noise away).
    guarantee : PrivacyGuarantee
        What the release is covered by (epsilon, delta, neighbouring relation).
    arrays : dict of str to ndarray
        The released statistics or rows (read-only copies).
    plan : dict
        The public, data-independent plan: workload, noise scales, domain,
        feature names, and ``"sampler"`` -- how :meth:`sample` draws rows
        (``"rows"``, ``"weighted-points"`` or ``"none"``).
    format_version : int, default=FORMAT_VERSION
    """

    estimator: str
    params: dict
    guarantee: PrivacyGuarantee
    arrays: dict
    plan: dict
    format_version: int = field(default=FORMAT_VERSION)

    def __post_init__(self):
        if not isinstance(self.guarantee, PrivacyGuarantee):
            raise TypeError("guarantee must be a PrivacyGuarantee")
        arrays = {}
        for name, value in dict(self.arrays).items():
            arr = np.array(value, copy=True)
            if arr.dtype.kind not in "biuf":
                raise TypeError(f"release array {name!r} must be numeric")
            arr.flags.writeable = False
            arrays[str(name)] = arr
        object.__setattr__(self, "arrays", arrays)
        # JSON round trip: plain, immutable-by-copy public metadata
        for name in ("params", "plan"):
            value = json.loads(json.dumps(_jsonable(getattr(self, name))))
            object.__setattr__(self, name, value)

    # ------------------------------------------------------------ export
    def _metadata(self):
        g = self.guarantee
        return {
            "format_version": int(self.format_version),
            "estimator": self.estimator,
            "params": self.params,
            "guarantee": {
                "epsilon": g.epsilon,
                "delta": g.delta,
                "neighbouring": g.neighbouring,
                "mechanism": g.mechanism,
                "kind": g.kind,
                "invariants": list(g.invariants),
            },
            "plan": self.plan,
        }

    def to_dict(self) -> dict[str, Any]:
        """Everything as plain Python values (arrays as nested lists)."""
        out = self._metadata()
        out["arrays"] = {k: v.tolist() for k, v in self.arrays.items()}
        return out

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the release to ``path`` (``.npz``, no pickle), atomically.

        The file is written next to ``path`` under a temporary name and
        renamed onto it only when complete, so an interrupted save leaves no
        partial file.
        """
        path = os.fspath(path)
        buf = io.BytesIO()
        members = {_ARRAY_PREFIX + k: v for k, v in self.arrays.items()}
        meta = json.dumps(self._metadata(), sort_keys=True).encode("utf-8")
        members[_METADATA] = np.frombuffer(meta, dtype=np.uint8)
        np.savez(buf, **members)
        directory = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".release-", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(buf.getvalue())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Release:
        """Read a release written by :meth:`save` (``allow_pickle=False``)."""
        with np.load(os.fspath(path), allow_pickle=False) as archive:
            if _METADATA not in archive.files:
                raise ValueError(f"{path!s} is not a skdp_synth release (no metadata)")
            meta = json.loads(archive[_METADATA].tobytes().decode("utf-8"))
            arrays = {
                name[len(_ARRAY_PREFIX) :]: archive[name]
                for name in archive.files
                if name.startswith(_ARRAY_PREFIX)
            }
        version = meta.get("format_version")
        if not isinstance(version, int) or not 1 <= version <= FORMAT_VERSION:
            raise ValueError(
                f"release format version {version!r} is not supported by this "
                f"skdp_synth (reads versions 1..{FORMAT_VERSION})"
            )
        g = meta["guarantee"]
        return cls(
            estimator=meta["estimator"],
            params=meta["params"],
            guarantee=PrivacyGuarantee(
                g["epsilon"],
                g["delta"],
                g["neighbouring"],
                g["mechanism"],
                # files written before the field existed hold plain DP only
                kind=g.get("kind", DIFFERENTIAL_PRIVACY),
                invariants=tuple(g.get("invariants", ())),
            ),
            arrays=arrays,
            plan=meta["plan"],
            format_version=version,
        )

    # ------------------------------------------------------------ sample
    def sample(
        self,
        n_samples: int | None = None,
        random_state: int | np.random.RandomState | np.random.Generator | None = None,
    ) -> NDArray[Any]:
        """Draw synthetic rows from the release alone (post-processing, free).

        ``"rows"`` releases: ``n_samples=None`` returns the released rows, an
        integer draws that many of them uniformly with replacement.
        ``"weighted-points"``: ``n_samples`` rows from the points with the
        released weights -- i.i.d. draws, or controlled rounding of the
        expected counts when the plan says ``"selection": "controlled"`` --
        (and randomized rounding for Boolean data, :cite:`Boedihardjo2024` §4.3);
        ``None`` uses the plan's public ``default_n_samples``.

        Returns
        -------
        ndarray of shape (n_samples, n_features)
            In the units of the training data (the box bounds applied).
        """
        kind = self.plan.get("sampler", "none")
        rng = make_generator(random_state, 1)
        if kind == "rows":
            rows = self.arrays["rows"]
            if n_samples is None:
                return rows.copy()
            n = _check_n(n_samples)
            return rows[rng.integers(0, rows.shape[0], size=n)]
        if kind == "weighted-points":
            if n_samples is None:
                n_samples = self.plan.get("default_n_samples")
                if n_samples is None:
                    raise ValueError(
                        "this release does not fix a number of rows (it is "
                        "private under add/remove neighbours); pass n_samples"
                    )
            n = _check_n(n_samples)
            points, weights = self.arrays["points"], self.arrays["weights"]
            if self.plan.get("selection") == "controlled":
                # controlled rounding of the expected counts n * weights (the
                # generator's table: no i.i.d. sampling error, as in sample())
                from .generator import controlled_rows

                U = controlled_rows(points, n, rng, weights=weights)
            else:
                U = points[rng.choice(points.shape[0], size=n, p=weights)]
            if self.plan.get("rounding") == "randomized":
                U = (rng.random(U.shape) < U).astype(np.float64)
            if "bounds_lo" in self.arrays:
                lo, hi = self.arrays["bounds_lo"], self.arrays["bounds_hi"]
                U = lo + U * (hi - lo)
            return U
        raise ValueError(
            f"this {self.estimator} release holds no distribution to sample from "
            f"({self.plan.get('reason', 'sampler=' + repr(kind))})"
        )

    def __repr__(self):
        g = self.guarantee
        shapes = ", ".join(f"{k}{tuple(v.shape)}" for k, v in self.arrays.items())
        kind = ""
        if g.kind != DIFFERENTIAL_PRIVACY:
            kind = f"kind={g.kind!r}, invariants={list(g.invariants)!r}, "
        return (
            f"Release(estimator={self.estimator!r}, epsilon={g.epsilon:g}, "
            f"delta={g.delta:g}, neighbouring={g.neighbouring!r}, {kind}"
            f"arrays=[{shapes}], format_version={self.format_version})"
        )


def _check_n(n):
    from .validation import check_n_samples

    return check_n_samples(n)


def release_from(
    estimator: BaseEstimator, arrays: Mapping[str, ArrayLike], plan: Mapping[str, Any]
) -> Release:
    """The common part of every ``to_release``: name, public params, guarantee.

    ``plan`` holds the estimator's public plan entries, read from its fitted
    ``plan_`` (:mod:`skdp_synth.plan`: data-independent, so publishable); the
    guarantee is the one recorded at fit (``plan_.guarantee``, or the larger
    one after extra rows were charged).
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator)
    params = {
        k: v
        for k, v in estimator.get_params(deep=False).items()
        if k not in ("accountant", "random_state")
    }
    names = getattr(estimator, "feature_names_in_", None)
    plan = dict(plan)
    plan.setdefault("n_features", int(estimator.plan_.n_features))
    plan.setdefault(
        "feature_names",
        None if names is None else [str(c) for c in names],
    )
    plan.setdefault("hardened_noise", estimator.random_state is None)
    return Release(
        estimator=type(estimator).__name__,
        params=params,
        guarantee=estimator.privacy_guarantee_,
        arrays=arrays,
        plan=plan,
    )
