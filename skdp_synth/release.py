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
version, the estimator's name, its public parameters, the guarantee, the
plan and a SHA-256 ``content_hash`` of all of it. Nothing is pickled, so
loading a release runs no code. :meth:`Release.load` treats the file as
untrusted input: it checks the sizes against limits before anything is
allocated (and the number of rows the plan declares against
``MAX_RELEASE_ROWS``), then the schema (types, ranges, shapes, finite
values, weights summing to 1, consistent feature counts and names) and the
content hash, and raises
:class:`~skdp_synth.exceptions.MalformedReleaseError` for any problem.
The hash detects damage (a truncated or altered file); it is **not a
signature**: whoever can write the file can recompute it.
:meth:`Release.iter_sample` draws the rows of :meth:`Release.sample` chunk by
chunk, in memory independent of their number.

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

import copy
import hashlib
import io
import itertools
import json
import math
import os
import stat
import warnings
import zipfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, overload

import numpy as np

from ._io import write_atomically
from .exceptions import MalformedReleaseError
from .mechanisms import make_generator
from .privacy import (
    DIFFERENTIAL_PRIVACY,
    GUARANTEE_KINDS,
    INDUCED_SUBSPACE,
    NEIGHBOURING_RELATIONS,
    PrivacyGuarantee,
)
from .validation import MAX_DENSE_BYTES, format_count, sample_chunk_rows

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from typing import Any

    import pandas as pd
    from numpy.typing import ArrayLike, NDArray
    from sklearn.base import BaseEstimator

    from .preprocessing import BooleanEncoder
    from .rules import RuleSet

__all__ = ["FORMAT_VERSION", "MAX_RELEASE_ROWS", "Release"]

#: Version of the release format; :meth:`Release.load` refuses newer ones.
#: Version 2 adds the ``content_hash``; version 1 files (no hash) are still
#: read, with every other check.
FORMAT_VERSION = 2

#: Default limit of :meth:`Release.load` on the file, on the uncompressed
#: members together and on any one array (bytes).
MAX_RELEASE_BYTES = 1 << 30
#: Default limit of :meth:`Release.load` on the sizes a file declares: the
#: plan's ``default_n_samples`` (the rows ``sample()`` draws without
#: ``n_samples``, which ``skdp-synth sample`` writes without ``--rows``).
#: A billion rows: ``iter_sample`` streams them in bounded memory, but a file
#: declaring 10**12 would ask days of work of whoever samples it.
MAX_RELEASE_ROWS = 10**9
#: Limit on the JSON metadata (bytes) and its nesting depth.
MAX_METADATA_BYTES = 16 << 20
MAX_METADATA_DEPTH = 32

_METADATA = "metadata"
_ARRAY_PREFIX = "array_"
_TOP_KEYS = {"format_version", "estimator", "params", "guarantee", "plan"}
_GUARANTEE_KEYS = {"epsilon", "delta", "neighbouring", "mechanism"}
#: written by releases with exact invariants; absent in older files
#: (``not_covered`` only where the guarantee leaves something out)
_GUARANTEE_OPTIONAL_KEYS = {"kind", "invariants", "not_covered"}
_SAMPLERS = {"rows", "weighted-points", "none"}
#: The widest rows a release may hold: one chunk of a sample (at least 4,096
#: rows, ``validation.sample_chunk_rows``) must fit in ``MAX_DENSE_BYTES``.
#: (An 8.6 KB file of one deflated point 10^6 wide would otherwise ask 30 GiB
#: of ``sample``.)
MAX_RELEASE_FEATURES = MAX_DENSE_BYTES // (8 * 4096)


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
        guarantee = {
            "epsilon": g.epsilon,
            "delta": g.delta,
            "neighbouring": g.neighbouring,
            "mechanism": g.mechanism,
            "kind": g.kind,
            "invariants": list(g.invariants),
        }
        if g.not_covered:  # (a complete guarantee's file is as before)
            guarantee["not_covered"] = list(g.not_covered)
        return {
            "format_version": int(self.format_version),
            "estimator": self.estimator,
            "params": self.params,
            "guarantee": guarantee,
            "plan": self.plan,
        }

    def content_hash(self) -> str:
        """SHA-256 of the metadata and every array (names, dtypes, shapes, bytes).

        Detects a damaged or altered file; not a signature (anyone who can
        write the file can recompute it).
        """
        return _content_hash(self._metadata(), self.arrays)

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
        buf = io.BytesIO()
        members = {_ARRAY_PREFIX + k: v for k, v in self.arrays.items()}
        meta = self._metadata()
        meta["content_hash"] = _content_hash(meta, self.arrays)
        text = json.dumps(meta, sort_keys=True).encode("utf-8")
        members[_METADATA] = np.frombuffer(text, dtype=np.uint8)
        # deflated: a release's 0/1 points as float64 are mostly zeros (16 MB
        # for flights' 1.7 MB table, 0.3 MB compressed, measured). Load
        # checks the uncompressed sizes first.
        np.savez_compressed(buf, **members)
        write_atomically(path, lambda fh: fh.write(buf.getvalue()), binary=True)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        max_bytes: int = MAX_RELEASE_BYTES,
        max_rows: int = MAX_RELEASE_ROWS,
    ) -> Release:
        """Read a release written by :meth:`save`, treating the file as untrusted.

        Nothing is pickled (``allow_pickle=False``) and nothing is allocated
        before its size is checked: the file, each member and all members
        together must fit in ``max_bytes``, the metadata in
        ``MAX_METADATA_BYTES`` (16 MiB) with nesting depth at most
        ``MAX_METADATA_DEPTH`` (32), and the number of rows the plan
        declares (``default_n_samples``) in ``max_rows``. Then the schema is
        checked (keys, types, ranges, shapes, finite values, weights summing
        to 1, the feature count and names consistent with the arrays) and the
        content hash.

        Parameters
        ----------
        path : str or path-like
            A regular file (a FIFO or a device is refused without reading).
        max_bytes : int, default=MAX_RELEASE_BYTES
            Size limit in bytes (1 GiB by default).
        max_rows : int, default=MAX_RELEASE_ROWS
            Limit on the rows the file declares, ``plan.default_n_samples``
            (10**9 by default; the content hash does not vouch for it: anyone
            can write a file declaring 10**12 rows). Pass a larger one for a
            trusted file. ``sample(n)`` and ``iter_sample(n)`` with an ``n``
            of your own are not limited.

        Raises
        ------
        MalformedReleaseError
            For every problem with the file (a ``ValueError``); a missing
            file raises ``FileNotFoundError`` as usual.
        """
        path = os.fspath(path)
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise MalformedReleaseError(
                f"{path!s} is not a regular file (a FIFO, device or directory is "
                "not read)"
            )
        max_rows = _check_n(max_rows, "max_rows")
        if info.st_size > max_bytes:
            raise MalformedReleaseError(
                f"{path!s} is larger than max_bytes={max_bytes}; pass a larger "
                "max_bytes if the file is trusted"
            )
        try:
            meta, arrays = _read_archive(path, max_bytes)
        except MalformedReleaseError:
            raise
        except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as exc:
            raise MalformedReleaseError(
                f"{path!s} is not a readable skdp_synth release "
                f"({type(exc).__name__}: damaged or truncated?)"
            ) from None
        version = _check_metadata(meta)
        declared = meta["plan"].get("default_n_samples")
        if _is_int(declared) and declared > max_rows:
            # before the arrays are checked (a smoke decode) or any row drawn
            raise MalformedReleaseError(
                f"{path!s} declares plan.default_n_samples="
                f"{format_count(declared)} rows, more than max_rows={max_rows}; "
                "pass a larger max_rows if the file is trusted"
            )
        _check_arrays(meta, arrays)
        if version >= 2 and meta["content_hash"] != _content_hash(
            {k: v for k, v in meta.items() if k != "content_hash"}, arrays
        ):
            raise MalformedReleaseError(
                f"{path!s}: the content hash does not match (the file is damaged "
                "or was altered)"
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
                not_covered=tuple(g.get("not_covered", ())),
            ),
            arrays=arrays,
            plan=meta["plan"],
            format_version=version,
        )

    # ------------------------------------------------------------ sample
    @overload
    def sample(
        self,
        n_samples: int | None = ...,
        random_state: int | np.random.RandomState | np.random.Generator | None = ...,
        *,
        decode: Literal[False],
        given: None = ...,
    ) -> NDArray[Any]: ...

    @overload
    def sample(
        self,
        n_samples: int | None = ...,
        random_state: int | np.random.RandomState | np.random.Generator | None = ...,
        *,
        decode: bool = ...,
        given: Mapping[str, Any] | list[Mapping[str, Any]] | None = ...,
    ) -> NDArray[Any] | pd.DataFrame: ...

    def sample(
        self,
        n_samples: int | None = None,
        random_state: int | np.random.RandomState | np.random.Generator | None = None,
        *,
        decode: bool = True,
        given: Mapping[str, Any] | list[Mapping[str, Any]] | None = None,
    ) -> NDArray[Any] | pd.DataFrame:
        """Draw synthetic rows from the release alone (post-processing, free).

        ``"rows"`` releases: ``n_samples=None`` returns the released rows, an
        integer draws that many of them uniformly with replacement.
        ``"weighted-points"``: ``n_samples`` rows from the points with the
        released weights -- i.i.d. draws, or controlled rounding of the
        expected counts when the plan says ``"selection": "controlled"`` --
        (and randomized rounding for Boolean data, :cite:`Boedihardjo2024` §4.3);
        ``None`` uses the plan's public ``default_n_samples``.

        A synthesis pipeline's release (:meth:`SynthesisPipeline.to_release
        <skdp_synth.pipeline.SynthesisPipeline.to_release>`) carries its
        encoder's decoder: its rows are decoded into the table's own
        schema (column names, levels, numbers, dates, missing values and
        dtypes), as ``pipe.sample`` does; ``decode=False`` gives the encoded
        0/1 rows.

        ``given`` (a decoding ``"weighted-points"`` release): rows drawn from
        the release's distribution *conditional* on a condition -- a dict of
        column -> value, list of values or ``(lo, hi)`` numeric range, or a
        list of such dicts meaning "any of them" -- every row matching,
        exactly ``n_samples`` of them: the weighted points restricted to
        those that decode to a match, renormalised (``skdp_synth._given``;
        no rejection loop: only rows of a numeric bin a range covers in part
        are drawn again, a bounded number of times). A condition the release
        gives no probability, an unknown column or level raise ``ValueError``
        naming the condition.
        Free in privacy like any sample.

        Returns
        -------
        ndarray of shape (n_samples, n_features) or DataFrame
            In the units of the training data (the box bounds applied); a
            DataFrame (or the fitted array's dtype) for a decoding release.

        See Also
        --------
        iter_sample : the same rows chunk by chunk, in memory independent of
            ``n_samples`` (this method holds them all: its result).
        """
        seed = self._rules_seed(random_state, decode)
        rng = make_generator(random_state, 1)
        chunks, n, kind = self._chunks(n_samples, rng, decode, given, seed)
        parts = iter(chunks)
        first = next(parts)
        if kind == "decoded":
            return _concat([first, *parts])
        if first.shape[0] == n:
            return first
        # the encoded rows in one array, filled chunk by chunk (never two
        # copies of the sample at once)
        dtype = np.float64 if kind == "weighted-points" else first.dtype
        out = np.empty((n, *first.shape[1:]), dtype=dtype)
        start = 0
        for part in itertools.chain([first], parts):
            out[start : start + part.shape[0]] = part
            start += part.shape[0]
        return out

    def iter_sample(
        self,
        n_samples: int | None = None,
        *,
        chunk_rows: int | None = None,
        random_state: int | np.random.RandomState | np.random.Generator | None = None,
        decode: bool = True,
        given: Mapping[str, Any] | list[Mapping[str, Any]] | None = None,
    ) -> Iterator[NDArray[Any] | pd.DataFrame]:
        """Draw synthetic rows chunk by chunk: memory independent of ``n_samples``.

        The rows of :meth:`sample`, in pieces: with the same ``random_state``
        (an integer, or generators in the same state), the chunks put end to
        end are exactly ``sample(n_samples, random_state, decode=decode)``
        -- the same rows, dtypes and, for a DataFrame, index (each chunk's
        index continues the previous one's) -- whatever ``chunk_rows``. Only
        a few chunks are held at a time: working memory is bounded by
        ``chunk_rows`` rows and one internal chunk of at most 32 MiB of
        encoded rows (``validation.sample_chunk_rows``), not by
        ``n_samples``; for a ``"rows"`` release (a
        :class:`~skdp_synth.PrivateSampler`'s) with a decoder the row
        indices are drawn twice (once to reach the decoder's seeds where
        :meth:`sample` draws them), which costs time, not memory.

        The chunks are drawn lazily; the arguments (and whether the release
        can be sampled) are checked when this is called, before the first.

        Parameters
        ----------
        n_samples : int or None, default=None
            As in :meth:`sample` (``None``: the released rows, or the plan's
            public ``default_n_samples``).
        chunk_rows : int or None, default=None
            Rows per chunk (the last one may be shorter); ``None`` yields the
            internal chunks of :meth:`sample` (32 MiB of encoded rows, at
            least 4,096 rows).
        random_state : None, int, RandomState or Generator, default=None
            As in :meth:`sample`. A ``Generator`` is advanced as the chunks
            are drawn.
        decode : bool, default=True
            As in :meth:`sample`: a release with a decoder yields DataFrames
            of the table (or arrays of its fitted dtype); ``False``, the
            encoded rows.
        given : dict, list of dict or None, default=None
            As in :meth:`sample`: rows conditional on it (checked now).

        Yields
        ------
        ndarray of shape (n_chunk, n_features) or DataFrame
            Consecutive rows of the sample.

        Examples
        --------
        >>> import numpy as np
        >>> from skdp_synth.privacy import PrivacyGuarantee
        >>> rel = Release(
        ...     estimator="Example",
        ...     params={},
        ...     guarantee=PrivacyGuarantee(1.0, 0.0, "replace-one", "example"),
        ...     arrays={"rows": np.array([[0.0, 1.0], [1.0, 1.0]])},
        ...     plan={"sampler": "rows"},
        ... )
        >>> chunks = list(rel.iter_sample(10, chunk_rows=4, random_state=0))
        >>> [len(c) for c in chunks]
        [4, 4, 2]
        >>> bool((np.concatenate(chunks) == rel.sample(10, random_state=0)).all())
        True
        """
        if chunk_rows is not None:
            chunk_rows = _check_n(chunk_rows)
        seed = self._rules_seed(random_state, decode)
        rng = make_generator(random_state, 1)
        chunks, _, _ = self._chunks(n_samples, rng, decode, given, seed)
        return _rechunked(chunks, chunk_rows)

    def rules(self) -> RuleSet | None:
        """The declared rules the file stores (``plan["rules"]``, the CLI
        schema's ``"rules"`` form), read through
        :func:`skdp_synth.rules.ruleset_from_json` (a derived column's
        expression by the closed :class:`~skdp_synth.rules.Expression`,
        never ``eval``), or ``None``. Decoded rows of :meth:`sample` and
        :meth:`iter_sample` keep them, as the pipeline's ``sample`` does."""
        raw = self.plan.get("rules")
        if raw is None:
            return None
        from .rules import ruleset_from_json

        return ruleset_from_json(raw)

    def _rules_seed(self, random_state, decode):
        """The seed of the rules' redraws (the pipeline's stream,
        :func:`skdp_synth.rules.rules_seed`), or ``None`` without rules."""
        if not (decode and "rules" in self.plan and "decoder" in self.plan):
            return None
        from .rules import rules_seed

        return rules_seed(random_state)

    def _chunks(self, n_samples, rng, decode, given=None, rules_seed=None):
        """The one generator behind :meth:`sample` and :meth:`iter_sample`.

        Returns ``(chunks, n, kind)``: a lazy iterator of consecutive pieces of
        the sample (at least one), the number of rows and how they come
        (``"decoded"``, or the sampler). Every argument is checked here,
        before the first piece.
        Each piece is an internal chunk of ``sample_chunk_rows`` rows, drawn
        from ``rng`` in the order :meth:`sample` always drew them: a
        ``"weighted-points"`` chunk (a controlled rounding of its size, when
        the plan says so) and then its decoder's seed; for ``"rows"``, all
        the row indices and then one decoder seed per chunk. With stored
        rules (:meth:`rules`) every decoded piece is repaired
        (:meth:`~skdp_synth.rules.RuleSet.enforce`) from one stream seeded by
        ``rules_seed``.
        """
        kind = self.plan.get("sampler", "none")
        if kind not in ("rows", "weighted-points"):
            raise ValueError(
                f"this {self.estimator} release holds no distribution to sample "
                f"from ({self.plan.get('reason', 'sampler=' + repr(kind))})"
            )
        if kind == "weighted-points" and n_samples is None:
            n_samples = self.plan.get("default_n_samples")
            if n_samples is None:
                raise ValueError(
                    "this release does not fix a number of rows (it is "
                    "private under add/remove neighbours); pass n_samples"
                )
        n = None if n_samples is None else _check_n(n_samples)
        decoding = decode and "decoder" in self.plan
        if given is not None:
            if not (kind == "weighted-points" and decoding):
                raise ValueError(
                    "given needs a release of weighted points with a decoder (a "
                    "synthesis pipeline's, sampled with decode=True); this is a "
                    f"{self.estimator} release with sampler={kind!r}"
                    + ("" if decoding else " and no decoding")
                )
            rules = self.rules()
            if rules is not None:
                from ._given import given_with_rules

                rows = given_with_rules(self, n, rng, given, rules, rules_seed)
                return iter([rows]), n, "decoded"
            chunks = self._given_chunks(n, rng, given)
            return chunks, n, "decoded"
        if kind == "weighted-points":
            chunks = self._weighted_chunks(n, rng, decoding)
        else:
            chunks = self._row_chunks(n, rng, decoding)
        if n is None:  # the released rows themselves
            n = self.arrays["rows"].shape[0]
        rules = self.rules() if decoding else None
        if rules is not None:
            chunks = _enforced(chunks, rules, np.random.default_rng(rules_seed))
        return chunks, n, "decoded" if decoding else kind

    def _weighted_chunks(self, n, rng, decoding):
        """``n`` rows of a ``"weighted-points"`` release, each chunk drawn (a
        controlled rounding of its size) and decoded before the next: the
        ``n`` x bits matrix is never built whole (0.7 GB per million rows on
        flights, measured)."""
        encoder = self.decoder() if decoding else None
        size = sample_chunk_rows(self.arrays["points"].shape[1])
        for start in range(0, n, size):
            rows = self._weighted_rows(min(size, n - start), rng)
            if encoder is None:
                yield rows
            else:
                encoder.random_state = int(rng.integers(0, 2**32 - 1))
                yield encoder.inverse_transform(rows)

    def _given_chunks(self, n, rng, given):
        """``n`` decoded rows conditional on ``given``, chunk by chunk, as
        :meth:`_weighted_chunks` draws them (the condition checked now)."""
        from ._given import ConditionalModel

        encoder = self.decoder()
        model = ConditionalModel(
            self.arrays["points"],
            self.arrays["weights"],
            encoder,
            given,
            controlled=self.plan.get("selection") == "controlled",
        )

        def chunks():
            size = sample_chunk_rows(self.arrays["points"].shape[1])
            for start in range(0, n, size):
                encoder.random_state = int(rng.integers(0, 2**32 - 1))
                yield model.draw(min(size, n - start), rng)

        return chunks()

    def _row_chunks(self, n, rng, decoding):
        """Rows of a ``"rows"`` release: the released rows (``n=None``) or
        ``n`` of them drawn uniformly with replacement, chunk by chunk.

        The indices come from ``rng`` as one call would draw them (NumPy's
        bounded integers of one call equal those of consecutive calls);
        with a decoder, its seeds follow all ``n`` indices in ``rng``: a
        copy of ``rng`` draws the indices, ``rng`` itself skips past them
        first (a second pass over the indices, in time only)."""
        rows = self.arrays["rows"]
        size = sample_chunk_rows(max(rows.shape[1], 1))
        total = rows.shape[0] if n is None else n
        encoder = self.decoder() if decoding else None
        picks = None
        if n is not None:
            picks = rng
            if encoder is not None:
                picks = copy.deepcopy(rng)
                for start in range(0, n, size):
                    rng.integers(0, rows.shape[0], size=min(size, n - start))
        for start in range(0, max(total, 1), size):
            if picks is None:
                part = rows[start : start + size].copy()
            else:
                count = min(size, total - start)
                part = rows[picks.integers(0, rows.shape[0], size=count)]
            if encoder is None:
                yield part
            else:
                encoder.random_state = int(rng.integers(0, 2**32 - 1))
                yield encoder.inverse_transform(part)

    def decoder(self) -> BooleanEncoder | None:
        """The fitted :class:`~skdp_synth.preprocessing.BooleanEncoder` that
        decodes this release's rows (``inverse_transform`` only), rebuilt
        from the file: ``None`` for a release without one. Its Gaussian
        copula (``within_bins="copula"``) is fitted again from the
        release's own distribution of rows, as the pipeline fitted it."""
        if "decoder" not in self.plan:
            return None
        from .preprocessing._decoder_state import decoder_from_state

        encoder = decoder_from_state(
            self.plan["decoder"], self.arrays, n_features=self.plan.get("n_features")
        )
        if encoder.within_bins == "copula":
            kind = self.plan.get("sampler")
            if kind == "weighted-points":
                encoder.fit_copula(self.arrays["points"], self.arrays["weights"])
            elif kind == "rows":
                encoder.fit_copula(self.arrays["rows"])
        return encoder

    def _weighted_rows(self, n, rng):
        """``n`` rows of a ``"weighted-points"`` release, in the data's units."""
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

    def __repr__(self):
        g = self.guarantee
        shapes = ", ".join(f"{k}{tuple(v.shape)}" for k, v in self.arrays.items())
        kind = ""
        if g.kind != DIFFERENTIAL_PRIVACY:
            kind = f"kind={g.kind!r}, invariants={list(g.invariants)!r}, "
        if g.not_covered:
            kind += f"not_covered={list(g.not_covered)!r}, "
        return (
            f"Release(estimator={self.estimator!r}, epsilon={g.epsilon:g}, "
            f"delta={g.delta:g}, neighbouring={g.neighbouring!r}, {kind}"
            f"arrays=[{shapes}], format_version={self.format_version})"
        )


def _enforced(chunks, rules, rng):
    """Each decoded chunk repaired by ``rules`` (one stream for all)."""
    for part in chunks:
        yield rules.enforce(part, random_state=rng)


def _concat(parts):
    import pandas as pd

    if isinstance(parts[0], pd.DataFrame):
        return pd.concat(parts, ignore_index=True)
    return np.concatenate(parts, axis=0)


def _rows(part, start, stop):
    """Rows ``start:stop`` of an array or a DataFrame (by position)."""
    if hasattr(part, "iloc"):
        return part.iloc[start:stop]
    return part[start:stop]


def _rechunked(chunks, chunk_rows):
    """The rows of ``chunks`` again, ``chunk_rows`` at a time (the last piece
    may be shorter; ``None`` keeps the pieces as they come). A DataFrame
    piece's index is its rows' positions in the whole sample, as in
    :meth:`Release.sample`'s one frame. Holds at most one incoming piece and
    ``chunk_rows`` rows besides."""
    import pandas as pd

    start = 0

    def indexed(part):
        nonlocal start
        if isinstance(part, pd.DataFrame):
            part.index = pd.RangeIndex(start, start + len(part))
        start += len(part)
        return part

    if chunk_rows is None:
        for part in chunks:
            yield indexed(part)
        return
    held, count = [], 0
    for part in chunks:
        held.append(part)
        count += len(part)
        if count < chunk_rows:
            continue
        whole = held[0] if len(held) == 1 else _concat(held)
        held, count = [], 0
        cut = 0
        while len(whole) - cut >= chunk_rows:
            yield indexed(_rows(whole, cut, cut + chunk_rows))
            cut += chunk_rows
        if cut < len(whole):
            held, count = [_rows(whole, cut, len(whole))], len(whole) - cut
    if held:
        yield indexed(held[0] if len(held) == 1 else _concat(held))


# ------------------------------------------------------------------- reading
def _content_hash(meta, arrays):
    """SHA-256 over the canonical metadata JSON and the arrays (sorted names)."""
    h = hashlib.sha256()
    h.update(json.dumps(meta, sort_keys=True, separators=(",", ":")).encode())
    for name in sorted(arrays):
        arr = np.ascontiguousarray(arrays[name])
        h.update(f"\0{name}\0{arr.dtype.str}\0{arr.shape}\0".encode())
        h.update(arr.tobytes())
    return h.hexdigest()


def _bad(message):
    return MalformedReleaseError(f"malformed release: {message}")


def _read_archive(path, max_bytes):
    """The metadata (a dict) and the arrays, every size checked before reading."""
    with zipfile.ZipFile(path) as zf:
        entries = zf.infolist()
        names = [e.filename for e in entries]
        if len(set(names)) != len(names):
            raise _bad("duplicate members in the archive")
        if sum(e.file_size for e in entries) > max_bytes:
            raise _bad(f"the members exceed max_bytes={max_bytes} uncompressed")
        by_name = {e.filename: e for e in entries}
        meta_name = _METADATA + ".npy"
        if meta_name not in by_name:
            raise _bad("no metadata member (not a skdp_synth release)")
        meta_bytes = _read_npy(zf, by_name[meta_name], MAX_METADATA_BYTES, "uint8")
        meta = _parse_metadata(meta_bytes.tobytes())
        arrays = {}
        for name, entry in by_name.items():
            if name == meta_name:
                continue
            if not (name.startswith(_ARRAY_PREFIX) and name.endswith(".npy")):
                raise _bad(f"unexpected member {name!r}")
            key = name[len(_ARRAY_PREFIX) : -len(".npy")]
            arrays[key] = _read_npy(zf, entry, max_bytes, None)
    return meta, arrays


def _read_npy(zf, entry, limit, want):
    """One ``.npy`` member: header checked (dtype, shape, size) before the data."""
    if entry.file_size > limit:
        raise _bad(f"member {entry.filename!r} exceeds the size limit ({limit} bytes)")
    with zf.open(entry) as fh:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            raise _bad(f"member {entry.filename!r} has npy version {version}")
        if dtype.kind not in "biuf" or dtype.hasobject:
            raise _bad(f"member {entry.filename!r} is not numeric ({dtype})")
        if want is not None and dtype != np.dtype(want):
            raise _bad(f"member {entry.filename!r} must be {want}")
        if len(shape) > 2:
            raise _bad(f"member {entry.filename!r} has more than 2 dimensions")
        nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if nbytes > limit or nbytes > entry.file_size:
            raise _bad(f"member {entry.filename!r}: its header and size disagree")
        data = fh.read(nbytes + 1)
    if len(data) != nbytes:
        raise _bad(f"member {entry.filename!r} is truncated or has trailing data")
    arr = np.frombuffer(data, dtype=dtype)
    order = "F" if fortran else "C"
    return arr.reshape(shape, order=order).copy()


def _json_depth(text):
    """The nesting depth of a JSON text (outside strings), without recursion."""
    depth = best = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            best = max(best, depth)
        elif ch in "]}":
            depth -= 1
    return best


def _no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _bad("duplicate keys in the metadata")
    return dict(pairs)


def _no_constant(name):
    raise _bad(f"non-finite number {name} in the metadata")


def _parse_metadata(raw):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _bad("the metadata is not UTF-8") from None
    if _json_depth(text) > MAX_METADATA_DEPTH:
        raise _bad(f"the metadata is nested deeper than {MAX_METADATA_DEPTH}")
    try:
        meta = json.loads(
            text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant
        )
    except json.JSONDecodeError:
        raise _bad("the metadata is not valid JSON") from None
    if not isinstance(meta, dict):
        raise _bad("the metadata is not a JSON object")
    return meta


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _check_metadata(meta):
    """The top-level schema; returns the format version."""
    version = meta.get("format_version")
    if not _is_int(version) or not 1 <= version <= FORMAT_VERSION:
        raise MalformedReleaseError(
            f"release format version {version!r} is not supported by this "
            f"skdp_synth (reads versions 1..{FORMAT_VERSION})"
        )
    keys = _TOP_KEYS | ({"content_hash"} if version >= 2 else set())
    if set(meta) != keys:
        raise _bad(f"metadata keys {sorted(meta)} differ from {sorted(keys)}")
    if version >= 2 and not (
        isinstance(meta["content_hash"], str) and len(meta["content_hash"]) == 64
    ):
        raise _bad("content_hash must be a SHA-256 hex digest")
    name = meta["estimator"]
    if not isinstance(name, str) or not name.isidentifier():
        raise _bad("estimator must be a class name")
    for key in ("params", "plan"):
        if not isinstance(meta[key], dict):
            raise _bad(f"{key} must be an object")
    g = meta["guarantee"]
    if not (
        isinstance(g, dict)
        and _GUARANTEE_KEYS <= set(g) <= _GUARANTEE_KEYS | _GUARANTEE_OPTIONAL_KEYS
    ):
        raise _bad(
            f"guarantee must have the keys {sorted(_GUARANTEE_KEYS)} and may have "
            f"{sorted(_GUARANTEE_OPTIONAL_KEYS)}"
        )
    kind = g.get("kind", DIFFERENTIAL_PRIVACY)
    if kind not in GUARANTEE_KINDS:
        raise _bad(f"guarantee.kind must be one of {GUARANTEE_KINDS}")
    for key in ("invariants", "not_covered"):
        listed = g.get(key, [])
        if not (isinstance(listed, list) and all(isinstance(v, str) for v in listed)):
            raise _bad(f"guarantee.{key} must be a list of strings")
    if bool(g.get("invariants")) != (kind == INDUCED_SUBSPACE):
        raise _bad("guarantee.invariants are given iff its kind is induced-subspace")
    eps, delta = g["epsilon"], g["delta"]
    if not (_is_number(eps) and 0 <= eps < np.inf):
        raise _bad("guarantee.epsilon must be a finite number >= 0")
    if not (_is_number(delta) and 0 <= delta < 1):
        raise _bad("guarantee.delta must be a number in [0, 1)")
    if g["neighbouring"] not in NEIGHBOURING_RELATIONS:
        raise _bad(f"guarantee.neighbouring must be one of {NEIGHBOURING_RELATIONS}")
    if not isinstance(g["mechanism"], str):
        raise _bad("guarantee.mechanism must be a string")
    return version


def _check_arrays(meta, arrays):
    """Shapes, ranges and consistency of the arrays with the plan."""
    plan = meta["plan"]
    for name, arr in arrays.items():
        if not name.isidentifier():
            raise _bad(f"array name {name!r}")
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            raise _bad(f"array {name!r} has non-finite values")
    sampler = plan.get("sampler", "none")
    if sampler not in _SAMPLERS:
        raise _bad(f"plan.sampler must be one of {sorted(_SAMPLERS)}")
    p = plan.get("n_features")
    if p is not None and not (_is_int(p) and p >= 1):
        raise _bad("plan.n_features must be an integer >= 1")
    names = plan.get("feature_names")
    if names is not None:
        if not (
            isinstance(names, list)
            and all(isinstance(c, str) for c in names)
            and len(set(names)) == len(names)
            and (p is None or len(names) == p)
        ):
            raise _bad("plan.feature_names must be n_features distinct strings")
    default_n = plan.get("default_n_samples")
    if default_n is not None and not (_is_int(default_n) and default_n >= 1):
        raise _bad("plan.default_n_samples must be an integer >= 1 or null")
    for key, allowed in (
        ("rounding", {"none", "randomized"}),
        ("selection", {"controlled", "iid"}),
        ("domain", {"boolean", "box"}),
    ):
        if key in plan and plan[key] not in allowed:
            raise _bad(f"plan.{key} must be one of {sorted(allowed)}")
    if "hardened_noise" in plan and not isinstance(plan["hardened_noise"], bool):
        raise _bad("plan.hardened_noise must be true or false")
    decoder_arrays = [a for a in arrays if a.startswith("decoder_")]
    if "decoder" in plan:
        from .preprocessing._decoder_state import decoder_from_state

        try:
            decoder = decoder_from_state(plan["decoder"], arrays, n_features=p)
        except ValueError as exc:
            raise _bad(str(exc)) from None
        # a smoke decode of a few released rows: a file that loads must
        # sample (crafted dtypes could load, then crash in sample with other
        # errors)
        rows = arrays.get("points", arrays.get("rows"))
        if rows is not None:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    decoder.inverse_transform(np.asarray(rows[:8], dtype=float))
            except Exception as exc:  # any failure is the file's
                raise _bad(
                    f"its decoder cannot decode its own rows ({type(exc).__name__})"
                ) from None
    elif decoder_arrays:
        raise _bad("decoder arrays without a plan.decoder")
    if "rules" in plan:
        _check_rules(plan, arrays)

    def cube(name, ndim):
        if name not in arrays:
            raise _bad(f"a {sampler!r} release needs the array {name!r}")
        arr = arrays[name]
        if arr.ndim != ndim or arr.shape[0] < 1:
            raise _bad(f"array {name!r} must be {ndim}-dimensional and non-empty")
        if ndim == 2 and p is not None and arr.shape[1] != p:
            raise _bad(f"array {name!r} has another number of columns than n_features")
        if ndim == 2 and arr.shape[1] > MAX_RELEASE_FEATURES:
            raise _bad(
                f"array {name!r} is wider than {MAX_RELEASE_FEATURES} columns (a "
                "chunk of its sample would not fit in memory)"
            )
        if ndim == 2 and (np.any(arr < 0) or np.any(arr > 1)):
            raise _bad(f"array {name!r} must lie in the cube [0, 1]")
        return arr

    if sampler == "rows":
        cube("rows", 2)
    elif sampler == "weighted-points":
        points, weights = cube("points", 2), cube("weights", 1)
        if weights.shape[0] != points.shape[0]:
            raise _bad("weights and points differ in length")
        total = math.fsum(weights.astype(np.float64).ravel().tolist())
        if np.any(weights < 0) or abs(total - 1.0) > 1e-9 * max(1, weights.size):
            raise _bad("weights must be >= 0 and sum to 1")
    has_lo, has_hi = "bounds_lo" in arrays, "bounds_hi" in arrays
    if has_lo != has_hi:
        raise _bad("bounds_lo and bounds_hi come together")
    if has_lo:
        lo, hi = arrays["bounds_lo"], arrays["bounds_hi"]
        if plan.get("domain") == "boolean":
            raise _bad("a Boolean release has no bounds")
        if lo.ndim != 1 or lo.shape != hi.shape or (p is not None and lo.size != p):
            raise _bad("bounds_lo/hi must be vectors of length n_features")
        width = hi.astype(np.float64) - lo
        if not (np.all(lo < hi) and np.all(np.isfinite(width))):
            raise _bad("bounds need lo < hi with a finite width")


def _check_rules(plan, arrays):
    """``plan.rules`` (:func:`skdp_synth._given.stored_rules`)."""
    from ._given import stored_rules

    try:
        stored_rules(plan, arrays)
    except (TypeError, ValueError) as exc:
        raise _bad(f"plan.rules: {exc}") from None


def _check_n(n, name="n_samples"):
    from .validation import check_n_samples

    return check_n_samples(n, name)


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
    # the parameters and the noise source of the fit, never the current ones:
    # a set_params after fit must not change what is published
    fitted = getattr(estimator, "_fitted_params", None)
    if fitted is None:  # pragma: no cover - every fit records them (base.fit)
        raise ValueError(
            f"{type(estimator).__name__} records no fitted parameters; refit it"
        )
    params = dict(fitted["params"])
    names = getattr(estimator, "feature_names_in_", None)
    plan = dict(plan)
    plan.setdefault("n_features", int(estimator.plan_.n_features))
    plan.setdefault(
        "feature_names",
        None if names is None else [str(c) for c in names],
    )
    plan["hardened_noise"] = bool(fitted["hardened_noise"])
    # fitted in a pipeline on an encoder's private domains (its bits, names
    # and blocks are in this release): their guarantee composed with its own
    from .privacy import compose

    guarantee = compose(
        [getattr(estimator, "_upstream_guarantee", None), estimator.privacy_guarantee_]
    )
    return Release(
        estimator=type(estimator).__name__,
        params=params,
        guarantee=guarantee,
        arrays=arrays,
        plan=plan,
    )
