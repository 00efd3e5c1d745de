"""The noise-free ceiling arms of ``benchmarks/bench_suite.py`` (diagnostics,
not methods a user runs).

* ``ceiling``: the default pipeline of the suite's ``auto`` arm (the same
  encoder, release, δ, seed and ``sample(n_train)``) at ε =
  :data:`CEILING_EPS` for the whole pipeline: the encoder's private domains
  get their usual share of it (``domain_share="auto"``) and the release the
  rest, so every noisy count is exact to about 1e-5 rows. What remains is
  the model class: the tables ``selection="auto"`` measures when the noise
  is negligible (every pair where the budget allows, ``none``), the
  encoder's bins and its fine histogram for decoding inside a bin
  (PrivTree at this ε splits to its resolution floor), and the generator.
  The fit does not depend on the cell's ε: it runs once per seed and is
  recorded under every ε of the run, beside the noisy arms.
* ``ceiling-target``: the same with ``ProjectedGaussianRelease(target=)``
  the table's model target (as ``auto-target``).
* ``ceiling-chose``: noise-free with ``selection=`` the rule ``auto``
  chose at the cell's ε and seed (the same model class as the noisy fit:
  its tables without their noise); needs that ``auto`` record.

Each ceiling record also stores ``tstr_roundtrip``: the real training rows
passed through the fitted encoder and back (``transform`` then
``inverse_transform``: the target and the features at the encoder's
resolution, all dependence kept) -- the ceiling of the encoding alone.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: the whole pipeline's ε in the ceiling arms: every Gaussian / Laplace scale
#: is 1e-6 of the ε = 1 fit's (ProjectedGaussianRelease and BooleanEncoder
#: take any ε > 0)
CEILING_EPS = 1e6
CEILING = ("ceiling", "ceiling-target", "ceiling-chose")


def rule_of(method, done, rec):
    """The suite's rule name a ceiling arm fits (``None``: not fittable)."""
    if method == "ceiling":
        return "auto"
    if method == "ceiling-target":
        return "auto-target"
    auto = done.get((rec["table"], rec["eps"], rec["seed"], "auto", rec["oww"]))
    if auto is None or auto.get("dnf") or not auto.get("chose"):
        return None
    return auto["chose"]


def roundtrip(pipe, train):
    """The real training rows through the fitted encoder and back."""
    enc = pipe[0]
    back = enc.inverse_transform(enc.transform(train))
    return pd.DataFrame(back, columns=train.columns)


def fit_ceiling(rec, ctx, done, fit_ours, scored, tstr):
    """Fill ``rec`` (a ceiling arm at one table, ε, seed); memoised per
    (arm, seed, rule) in ``ctx`` since the fit does not depend on ε."""
    method, seed = rec["method"], rec["seed"]
    rule = rule_of(method, done, rec)
    if rule is None:
        rec.update(dnf=True, error="no auto record to copy the rule of", cpu=None)
        return
    memo = ctx.setdefault("ceiling_memo", {})
    key = (method, seed, rule)
    if key not in memo:
        out = {"ceiling_eps": CEILING_EPS, "rule": rule}
        syn, info = fit_ours(
            ctx["train"],
            ctx["cats"],
            ctx["options"],
            CEILING_EPS,
            seed,
            rule,
            target=ctx["target"],
            keep_pipe=True,
        )
        pipe = info.pop("pipe")
        out.update(info)
        out.pop("est", None)
        scored(out, ctx["coder"].codes(syn), syn, ctx)
        if not ctx.get("light") and not ctx.get("tv_only"):
            try:
                back = roundtrip(pipe, ctx["train"])
                out["tstr_roundtrip"] = tstr(
                    back, ctx["test"], ctx["train"], ctx["target"]
                )[0]
            except Exception as exc:  # a degenerate decoded target
                out["tstr_roundtrip_error"] = f"{type(exc).__name__}: {exc}"[:200]
        memo[key] = out
    rec.update(memo[key])


def _mean(recs, field):
    vals = [r[field] for r in recs if not r.get("dnf") and r.get(field) is not None]
    return float(np.mean(vals)) if vals else None


def _chose(recs):
    return "/".join(sorted({r.get("chose", "") for r in recs}))


def _f(x):
    return "–" if x is None else f"{x:.3f}"


def ceiling_table(done, names, eps_list, oww, records):
    """Markdown: real-trained, the encoder's round trip, the ceilings and the
    noisy arms' TSTR (means over seeds), and the gaps between them."""
    head = (
        "| table | ε | real-trained | round trip (encoder) | ceiling (chose) "
        "| ceiling-chose | ceiling-target | auto (chose) | auto-target "
        "| real - ceiling | ceiling-chose - auto |"
    )
    rows = [head, "|" + "---|" * (head.count("|") - 1)]
    for t in names:
        real = done.get((t, 0.0, 0, "real", None))
        for e in eps_list:
            got = {m: records(done, t, e, m, oww) for m in (*CEILING, "auto")}
            got["auto-target"] = records(done, t, e, "auto-target", oww)
            if real is None or not any(got[m] for m in CEILING):
                continue
            means = {m: _mean(v, "tstr") for m, v in got.items()}
            trip = _mean(got["ceiling"], "tstr_roundtrip")

            r, c, cc, a = (
                real["tstr_real"],
                means["ceiling"],
                means["ceiling-chose"],
                means["auto"],
            )
            rows.append(
                f"| {t} | {e:g} | {_f(r)} | {_f(trip)} "
                f"| {_f(c)} ({_chose(got['ceiling'])}) | {_f(cc)} "
                f"| {_f(means['ceiling-target'])} | {_f(a)} ({_chose(got['auto'])}) "
                f"| {_f(means['auto-target'])} "
                f"| {_f(None if c is None else r - c)} "
                f"| {_f(None if cc is None or a is None else cc - a)} |"
            )
    return "\n".join(rows)
