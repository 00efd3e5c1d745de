"""How much of a numeric column's rows sit in wide leaves PrivTree did not
split: the resolution its depth bias leaves at small column budgets.

PrivTree (:cite:`Zhang2016` Algorithm 2) splits a node of depth ``d`` only
where its count less ``d δ`` (``δ = λ ln 2``, ``λ = 3 / ε_tree``) plus
``Lap(λ)`` passes ``θ``; at a column budget of 0.003-0.02 (many numeric
columns, ε ≤ 1) ``λ`` is hundreds of rows, and a node of a thousand rows
stops within two or three levels of its depth-0 cell. This benchmark fits
the encoder of ``selection="auto"``'s pipeline (``bench_suite.fit_ours``,
the release stopped before it reads anything) on each table, ε and seed,
and counts the numeric columns with a *heavy wide leaf*: a leaf that is not
finest, holds more than ``--scales`` noise scales ``b`` of kept noisy rows
and is wider than ``--width`` in the log coordinate ``t``. It reads the
released domain only (its kept noisy counts), plus the training rows' count
of each such leaf for the table it prints.

    PYTHONPATH=. python -m benchmarks.bench_heavy_leaves \\
        --tables credit,attrition,acs12 --eps 0.3,1 --seeds 3
"""

from __future__ import annotations

import argparse
import contextlib

import numpy as np

from benchmarks import bench_suite as bs


class _Stop(Exception):
    """Raised by the release's fit: the encoder has been fitted."""


@contextlib.contextmanager
def _encoder_only(out):
    """Within it, a pipeline's release stops at its fit, and every fitted
    encoder's column specs are appended to ``out``."""
    from skdp_synth import ProjectedGaussianRelease
    from skdp_synth.preprocessing import BooleanEncoder

    saved_fit = ProjectedGaussianRelease.fit
    saved = {
        k: BooleanEncoder.__dict__[k]
        for k in ("fit", "fit_transform")
        if k in BooleanEncoder.__dict__
    }

    def stop(self, *args, **kwargs):
        raise _Stop

    def wrap(method):
        def fitted(self, *args, **kwargs):
            result = method(self, *args, **kwargs)
            out.append(list(self.specs_))
            return result

        return fitted

    ProjectedGaussianRelease.fit = stop
    for name, method in saved.items():
        setattr(BooleanEncoder, name, wrap(method))
    try:
        yield
    finally:
        ProjectedGaussianRelease.fit = saved_fit
        for name, method in saved.items():
            setattr(BooleanEncoder, name, method)


def heavy_leaves(spec, scales, width):
    """Indices of ``spec``'s heavy wide leaves (module docstring) and the
    share of its kept noisy rows they hold."""
    from skdp_synth.preprocessing._fences import _t

    h = spec.fine
    kept = np.asarray(h.counts, dtype=np.float64)
    wide = np.diff(_t(np.asarray(h.edges))) > width
    heavy = (kept > scales * h.scale) & wide & ~np.asarray(h.finest, dtype=bool)
    total = kept[kept > 0].sum()
    return np.flatnonzero(heavy), float(kept[heavy].sum() / total) if total else 0.0


def second_stage_tv(spec, values, idx, k, cost, rng):
    """An oracle of a second measurement stage: each leaf in ``idx`` cut into
    ``k`` sub-cells equal in ``t``, their true counts (from the training
    ``values``) plus Laplace noise of scale ``cost`` times the column's ``b``.
    Per leaf, ``(TV of the rows' shares over the sub-cells to uniform,
    TV to the noisy counts' shares clipped at 0)``: what the stage would
    tell the decoder about where inside the leaf its rows lie, against
    telling it nothing. Reads the training rows; a benchmark, not a
    mechanism."""
    from skdp_synth.preprocessing._fences import _t
    from skdp_synth.preprocessing._tree_grid import _x

    h, out = spec.fine, []
    for i in idx:
        lo, hi = float(h.edges[i]), float(h.edges[i + 1])
        cuts = _x(np.linspace(*_t(np.array([lo, hi])), k + 1))
        cuts[0], cuts[-1] = lo, hi
        true = np.histogram(values[(values >= lo) & (values < hi)], bins=cuts)[0]
        if true.sum() == 0:
            continue
        shares = true / true.sum()
        noisy = np.maximum(true + rng.laplace(0.0, cost * h.scale, k), 0.0)
        told = noisy / noisy.sum() if noisy.sum() > 0 else np.full(k, 1.0 / k)
        out.append(
            (0.5 * np.abs(shares - 1.0 / k).sum(), 0.5 * np.abs(shares - told).sum())
        )
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", required=True)
    ap.add_argument("--eps", default="0.3,1")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--scales", type=float, default=8.0)
    ap.add_argument("--width", type=float, default=0.5)
    ap.add_argument(
        "--second-stage",
        default=None,
        metavar="K:COST",
        help="the oracle of second_stage_tv: K sub-cells at noise COST times b",
    )
    args = ap.parse_args(argv)
    stage = None
    if args.second_stage:
        k, cost = args.second_stage.split(":")
        stage = (int(k), float(cost), np.random.default_rng(0), {})
    print(
        "| table | ε | numeric column-fits | with a heavy wide leaf | holding over"
        " 1/4 of the rows | example (seed, column, leaf, kept / b, real rows) |"
    )
    print("|---|---|---|---|---|---|")
    for table in args.tables.split(","):
        ctx = bs.context(table)
        train = ctx["train"]
        for eps in (float(e) for e in args.eps.split(",")):
            n = flagged = most = 0
            example, top = "", -1.0
            for seed in range(args.seeds):
                specs = []
                with _encoder_only(specs), contextlib.suppress(_Stop):
                    bs.fit_ours(train, ctx["cats"], ctx["options"], eps, seed, "auto")
                for spec in specs[-1]:
                    if spec.kind != "numeric" or getattr(spec, "fine", None) is None:
                        continue
                    n += 1
                    idx, share = heavy_leaves(spec, args.scales, args.width)
                    if stage is not None:
                        x = train[spec.name].astype(float).dropna().to_numpy()
                        k, cost, rng, tvs = stage
                        tvs.setdefault(eps, []).extend(
                            second_stage_tv(spec, x, idx, k, cost, rng)
                        )
                    flagged += idx.size > 0
                    most += share > 0.25
                    if idx.size and share > top:
                        h, i = spec.fine, int(idx[np.argmax(spec.fine.counts[idx])])
                        lo, hi = float(h.edges[i]), float(h.edges[i + 1])
                        x = train[spec.name].astype(float)
                        real = int(((x >= lo) & (x < hi)).sum())
                        top = share
                        example = (
                            f"{seed}, `{spec.name}`, [{lo:.4g}, {hi:.4g}),"
                            f" {h.counts[i] / h.scale:.1f}, {real}"
                        )
            print(f"| {table} | {eps:g} | {n} | {flagged} | {most} | {example} |")
    if stage is not None:
        k, cost, _, tvs = stage
        for eps, pairs in sorted(tvs.items()):
            a = np.asarray(pairs)
            print(
                f"eps {eps:g}, {k} sub-cells at {cost:g} b: {len(a)} leaves; TV of the"
                f" rows' shares to uniform {a[:, 0].mean():.3f}, to the noisy"
                f" sub-cells {a[:, 1].mean():.3f} (nearer in"
                f" {np.mean(a[:, 1] < a[:, 0]):.0%})"
            )


if __name__ == "__main__":
    main()
