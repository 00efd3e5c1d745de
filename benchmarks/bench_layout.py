"""The package's layout, measured: module sizes and the walk of one fit.

Run: ``python -m benchmarks.bench_layout`` (or
``python -m benchmarks.run layout``). It measures the ``skdp_synth`` that is
imported, so ``PYTHONPATH=<other checkout>`` measures another version.

Two numbers say how far the code is from one concept per module:

* **module sizes**: lines of every module of ``skdp_synth`` (``wc -l``), the
  largest first;
* **the walk** of one call (``ProjectedGaussianRelease.fit``,
  ``marginal_correction``): every function of ``skdp_synth`` the call enters,
  in the order it is first entered (``sys.setprofile``; a function entered
  again, e.g. in a loop, counts once), reduced to its module. A *stay* is a
  maximal run of consecutive functions in one module, a *move* a crossing
  from one module to the next (``moves = stays - 1``), and a *return* a move
  into a module the walk had already left. Fewer moves and returns: a reader
  following the call changes files less often.

The walk depends on the code only (not on timings), so it is exact and
reproducible on any machine.
"""

from __future__ import annotations

import pathlib
import sys
import warnings

import numpy as np

PACKAGE = "skdp_synth"
#: modules of the contract every fit goes through the same way; left out of
#: the walk so that it shows the estimator's own path (validation, the
#: noise source and the privacy ledger are one step each, before and after)
CONTRACT = {
    "skdp_synth.base",
    "skdp_synth.validation",
    "skdp_synth.blocks",
    "skdp_synth.privacy",
    "skdp_synth._sklearn_compat",
    "skdp_synth.mechanisms._noise",
    "skdp_synth.plan",
}


def module_sizes(root=None):
    """``[(module path, lines)]`` of the package, largest first."""
    if root is None:
        import skdp_synth

        root = pathlib.Path(skdp_synth.__file__).parent  # the one imported
    root = pathlib.Path(root)
    rows = []
    for path in sorted(root.rglob("*.py")):
        with open(path, encoding="utf-8") as fh:
            rows.append((str(path.relative_to(root.parent)), sum(1 for _ in fh)))
    return sorted(rows, key=lambda r: -r[1])


def walk(call):
    """The modules of the ``skdp_synth`` functions ``call()`` enters, in order.

    Returns ``(functions, modules)``: the distinct functions (``module.name``)
    in first-entry order, and their modules.
    """
    seen, order = set(), []

    def profile(frame, event, arg):
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith(PACKAGE) or module in CONTRACT:
            return
        code = frame.f_code
        if code in seen:
            return
        seen.add(code)
        order.append((module, code.co_name))

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return [f"{m}.{f}" for m, f in order], [m for m, _ in order]


def stays_and_moves(modules):
    """``(stays, moves, returns, runs)`` of a walk (see the module docstring)."""
    runs = []
    for m in modules:
        if not runs or runs[-1] != m:
            runs.append(m)
    left, returns = set(), 0
    for prev, nxt in zip(runs, runs[1:]):
        left.add(prev)
        if nxt in left:
            returns += 1
    return len(runs), max(len(runs) - 1, 0), returns, runs


def _boolean(n, p, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.random((n, p)) < 0.3).astype(np.int64)


def walks():
    """The walks of ``ProjectedGaussianRelease.fit`` (three mechanisms) and
    ``marginal_correction``, on small fixed inputs."""
    from skdp_synth import ProjectedGaussianRelease
    from skdp_synth.private_sampling import marginal_correction

    X = _boolean(500, 8)
    sample, data = _boolean(400, 6, 1), _boolean(1000, 6, 2)
    cases = {
        "ProjectedGaussianRelease.fit (default: residual)": lambda: (
            ProjectedGaussianRelease(random_state=0).fit(X)
        ),
        "ProjectedGaussianRelease.fit (correlated-weighted)": lambda: (
            ProjectedGaussianRelease(
                mechanism="correlated-weighted", random_state=0
            ).fit(X)
        ),
        "ProjectedGaussianRelease.fit (correlated-weighted, replace-one)": lambda: (
            ProjectedGaussianRelease(
                mechanism="correlated-weighted",
                neighbouring="replace-one",
                random_state=0,
            ).fit(X)
        ),
        "marginal_correction": lambda: marginal_correction(sample, data, d=2),
    }
    out = {}
    for name, call in cases.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, modules = walk(call)
        out[name] = stays_and_moves(modules)
    return out


def main():
    print("Module sizes (lines), the ten largest:")
    for path, lines in module_sizes()[:10]:
        print(f"  {lines:6d}  {path}")
    print(
        "\nWalks (distinct skdp_synth functions in first-entry order, by module;"
        f"\ncontract modules left out: {', '.join(sorted(CONTRACT))})"
    )
    for name, (stays, moves, returns, runs) in walks().items():
        print(f"\n  {name}: {stays} stays, {moves} moves, {returns} returns")
        print("    " + " > ".join(r.removeprefix(PACKAGE + ".") for r in runs))


if __name__ == "__main__":
    main()
