"""What synthetic rows are covered by, read from public attributes only.

A report states the guarantee of the rows it scores. Given an estimator,
pipeline or :class:`~skdp_synth.Release`, :func:`_guarantee_of` reads only
its public interface -- ``privacy_guarantee_``, ``privacy_summary_`` and
``to_release()`` -- never private state nor the attributes marked not
private, and returns a :class:`~._report.GuaranteeSummary`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..release import Release
from ._report import GuaranteeSummary


def _final_step(obj):
    steps = getattr(obj, "steps", None)  # a (Synthesis)Pipeline: public steps
    if isinstance(steps, list) and steps:
        return steps[-1][1]
    return obj


def _describe_release(rel):
    """What a release holds, in plain words (no array names or shapes)."""
    total = sum(int(np.size(v)) for v in rel.arrays.values())
    how = {
        "weighted-points": "synthetic rows are drawn from weighted synthetic "
        "points fitted to them",
        "rows": "they are the synthetic rows themselves",
    }.get(rel.plan.get("sampler", "none"), "it draws no rows")
    return f"{total:,} released numbers and no real row; {how}"


def _guarantee_of(source):
    """A :class:`GuaranteeSummary` from public attributes only."""
    if source is None:
        return GuaranteeSummary(
            source="synthetic rows given directly",
            kind="unknown",
            summary="no estimator or release given: the rows' guarantee is not known",
        )
    if isinstance(source, Release):
        g = source.guarantee
        return GuaranteeSummary(
            source=f"Release of {source.estimator}",
            kind="differential privacy",
            epsilon=g.epsilon,
            delta=g.delta,
            neighbouring=g.neighbouring,
            mechanism=g.mechanism,
            holds=_describe_release(source),
            hardened_noise=source.plan.get("hardened_noise"),
        )
    final = _final_step(source)
    g = getattr(final, "privacy_guarantee_", None)
    whole = getattr(source, "privacy_guarantee_", None) if final is not source else None
    if g is not None and whole is not None and whole != g:
        # a pipeline whose encoder learned domains privately: the total it
        # spent (sequential composition), not the synthesizer's share alone
        part = _guarantee_of(final)
        return replace(
            part,
            epsilon=whole.epsilon,
            delta=whole.delta,
            neighbouring=whole.neighbouring,
            mechanism=whole.mechanism,
        )
    if g is not None:
        rel = None
        if callable(getattr(final, "to_release", None)):
            try:
                rel = final.to_release()
            except NotImplementedError:
                rel = None
        if rel is not None:
            return replace(_guarantee_of(rel), source=rel.estimator)
        return GuaranteeSummary(
            source=type(final).__name__,
            kind="differential privacy",
            epsilon=g.epsilon,
            delta=g.delta,
            neighbouring=g.neighbouring,
            mechanism=g.mechanism,
            holds="(no to_release(): what may be published is not stated)",
        )
    summary = getattr(final, "privacy_summary_", None)
    if summary is not None:
        return GuaranteeSummary(
            source=type(final).__name__,
            kind="anonymity",
            summary=f"{summary}; not differential privacy",
        )
    return GuaranteeSummary(
        source=type(final).__name__,
        kind="unknown",
        summary="the estimator states no privacy guarantee",
    )
