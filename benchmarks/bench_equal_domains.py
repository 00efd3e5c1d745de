"""Our release against mbi's MST on the same private domain (``bench_suite``'s
scores).

Run: ``python -m benchmarks.bench_equal_domains --tables
credit,attrition,acs12,hmda,cps1988 --eps 1,0.3 --seeds 0,1 --cap 600
--cache PATH [--suite-cache PATH] [--comparator aim] [--no-run]`` (TUNE half
only). ``--comparator aim``: mbi's AIM in MST's place (arms ``aim-our-bins``,
``aim-pipe-decoder``; ``bench_suite``'s rounds, ``max(32, 2 a)``).

``bench_suite`` gives mbi's MST the scores' deciles of every numeric column as
a free public domain, while ours pays part of ε to learn its bins privately.
Here both releases get the same domain, paid once. Per table, ε and seed:

* ``ours``: ``bench_suite.fit_ours(..., rule="auto")`` (the default pipeline,
  ``domain_share="auto"``), ``sample(n_train, random_state=seed + 1)``.
* ``mst-our-bins``: the same fit's encoder as its own ε released it (copied
  when the pipeline has fitted its release and before it post-processes the
  encoder with the release's estimates) encodes the training rows; each
  column's block becomes a level index (``Blocks.to_levels``: thermometer,
  one-hot, binary; the missing level last); mbi's MST
  (:func:`benchmarks._compare.run_mbi`, mbi's default sampler) fits those levels
  at the ε and δ our release was given (ε_enc + ε_release = ε, asserted);
  its rows go back to bits (``Blocks.to_bits``) and through the encoder's
  ``inverse_transform`` (the fine histograms, the within-bin placement)
  with the Gaussian copula fitted on MST's own rows and the decoding seed
  ``pipe.sample`` uses. What ``pipe.sample`` does beyond this is
  post-processing of *our* release, which MST cannot use without paying
  for it: the pipeline drops levels the release does not support and
  refills each numeric column's fine histogram from the release's 1-way
  estimates (``_pipeline_levels``), and fits the copula on the release's
  distribution. MST's own ``compress`` (levels under 3 σ merged) stays.
* ``mst-pipe-decoder`` (a diagnostic, not a private release at ε: it reads
  our release too): the same MST rows decoded by the fitted pipeline's
  encoder (fine histograms refilled by our release, its copula).

Scores: ``bench_suite.scored`` with the suite's discretisation (TV1, TV2,
TV3 against the held-out rows, train-on-synthetic, the numeric scores),
TV1 split into numeric and categorical columns (``tv1_num``,
``tv1_cat``), CPU seconds (ours: fit + sample in this process; MST: the
runner's CPU plus the decoding). Every arm is one JSON line of ``--cache``,
keyed by table, ε, seed and arm; a cell is fitted only when its ``ours``
line is missing. ``--suite-cache``: ``bench_suite`` records read for the
``mbi-mst`` reference (MST at the whole ε, given the deciles) and the
floor (the real training rows' own scores).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from benchmarks.bench_suite import (
    DELTA,
    _child_cpu,
    code_version,
    context,
    fit_ours,
    scored,
)

TABLES = ("credit", "attrition", "acs12", "hmda", "cps1988")


@contextlib.contextmanager
def released_encoder():
    """Inside the block, each pipeline fit copies its encoder as its own ε
    released it, with the ε and δ the release was given, into the yielded
    dict: read when the release is fitted, before the pipeline's
    post-processing of the encoder by the release's estimates."""
    from skdp_synth._pipeline_levels import PipelineLevelsMixin

    seen = {}
    original = PipelineLevelsMixin._drop_unsupported_levels

    def wrapped(self, final, final_params):
        seen["encoder"] = copy.deepcopy(self._encoder())
        seen["eps_release"] = float(final.epsilon)
        seen["delta_release"] = float(final.delta)
        return original(self, final, final_params)

    PipelineLevelsMixin._drop_unsupported_levels = wrapped
    try:
        yield seen
    finally:
        PipelineLevelsMixin._drop_unsupported_levels = original


def tv1_split(test_codes, syn_codes, sizes, columns, cats):
    """Mean 1-way TV over the numeric and over the categorical columns."""
    out = {"num": [], "cat": []}
    for j, c in enumerate(columns):
        p = np.bincount(test_codes[:, j], minlength=sizes[j]) / len(test_codes)
        q = np.bincount(syn_codes[:, j], minlength=sizes[j]) / len(syn_codes)
        out["cat" if c in cats else "num"].append(0.5 * np.abs(p - q).sum())
    return {f"tv1_{k}": float(np.mean(v)) if v else None for k, v in out.items()}


def _score(rec, syn, ctx):
    coder = ctx["coder"]
    codes = coder.codes(syn)
    scored(rec, codes, syn, ctx)
    rec.update(
        tv1_split(ctx["test_codes"], codes, coder.sizes, coder.columns, ctx["cats"])
    )
    return rec


def _decode(encoder, bits, seed, copula):
    """``bits`` through ``encoder``'s decoder with ``pipe.sample``'s decoding
    seed for ``random_state=seed + 1``; ``copula``: fit the encoder's
    copula on ``bits`` first (post-processing of those rows)."""
    from skdp_synth.pipeline import _decoding_seeds

    dec = copy.deepcopy(encoder)
    dec.random_state = _decoding_seeds(seed + 1, 1)[0]
    if copula:
        dec.fit_copula(bits)
    return dec.inverse_transform(bits)


def run_cell(name, ctx, eps, seed, cap, code, method="mst"):
    """The three arms' records of one table, ε and seed (``method``: mbi's
    ``"mst"`` or ``"aim"``, AIM with ``bench_suite``'s rounds)."""
    from benchmarks._compare import run_mbi

    base = {"table": name, "eps": eps, "seed": seed, "code": code}
    with released_encoder() as seen:
        syn, info = fit_ours(
            ctx["train"],
            ctx["cats"],
            ctx["options"],
            eps,
            seed,
            "auto",
            target=ctx["target"],
            keep_pipe=True,
        )
    pipe = info.pop("pipe")
    enc = seen["encoder"]
    eps_enc, delta_enc = float(enc.epsilon_), float(enc.delta_)
    eps_rel, delta_rel = seen["eps_release"], seen["delta_release"]
    # the MST arm spends the encoder's ε (its domains) and MST's: exactly ε
    assert abs(eps_enc + eps_rel - eps) < 1e-9 * max(1.0, eps), (eps_enc, eps_rel)
    assert delta_enc + delta_rel <= DELTA * (1 + 1e-9), (delta_enc, delta_rel)
    budget = {
        "eps_enc": eps_enc,
        "delta_enc": delta_enc,
        "eps_release": eps_rel,
        "delta_release": delta_rel,
    }
    ours = {**base, "arm": "ours", **budget, "chose": info["chose"], "cpu": info["cpu"]}
    ours["secs"] = info["secs"]
    _score(ours, syn, ctx)

    blocks = enc.blocks_
    levels = blocks.to_levels(enc.transform(ctx["train"]))
    sizes = [int(s) for s in blocks.n_levels]
    domain = {"attributes": len(sizes), "levels": int(sum(sizes))}
    mst = {**base, "arm": f"{method}-our-bins", **budget, **domain}
    diag = {**base, "arm": f"{method}-pipe-decoder", **budget, **domain}
    params = {"rounds": max(32, 2 * len(sizes))} if method == "aim" else {}
    t0, c0 = time.perf_counter(), _child_cpu()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            rows, meta = run_mbi(
                levels,
                sizes,
                method,
                eps_rel,
                delta_rel,
                seed,
                tmp,
                timeout=cap,
                **params,
            )
    except subprocess.TimeoutExpired:
        for rec in (mst, diag):
            rec.update(dnf=True, cap=cap, cpu=None)
        return [ours, mst, diag]
    except (RuntimeError, OSError) as exc:
        for rec in (mst, diag):
            rec.update(dnf=True, error=str(exc)[-300:], cpu=None)
        return [ours, mst, diag]
    cpu_mbi, secs = _child_cpu() - c0, time.perf_counter() - t0
    # mbi's default sampler, as bench_suite's mbi-mst (not the i.i.d. draws)
    default = next(k for k in rows if k != "sample")
    bits = blocks.to_bits(rows[default][0])
    c1 = time.process_time()
    syn_mst = _decode(enc, bits, seed, copula=True)
    mst.update(cpu=cpu_mbi + time.process_time() - c1, secs=secs)
    _score(mst, syn_mst, ctx)
    c1 = time.process_time()
    syn_diag = _decode(pipe[0], bits, seed, copula=False)
    diag.update(cpu=cpu_mbi + time.process_time() - c1, secs=secs)
    _score(diag, syn_diag, ctx)
    return [ours, mst, diag]


def key_of(rec):
    return (rec["table"], rec["eps"], rec["seed"], rec["arm"])


def read_cache(path):
    done = {}
    if path and os.path.exists(path):
        with open(path) as fh:
            for line in fh:
                rec = json.loads(line)
                done[key_of(rec)] = rec
    return done


def run(names, eps_list, seeds, cap, cache, method="mst"):
    done = read_cache(cache)
    code = code_version()
    ctxs = {}
    for seed in seeds:  # every table at seed 0 first
        for name in names:
            for eps in eps_list:
                if (name, eps, seed, f"{method}-our-bins") in done:
                    continue
                if name not in ctxs:
                    ctxs[name] = context(name)
                    ctxs[name].update(tv_only=False, light=False)
                for rec in run_cell(name, ctxs[name], eps, seed, cap, code, method):
                    done[key_of(rec)] = rec
                    with open(cache, "a") as fh:
                        fh.write(json.dumps(rec) + "\n")
                    msg = (
                        "did not finish"
                        if rec.get("dnf")
                        else f"TV1 {rec['tv1']:.4f} TV2 {rec['tv2']:.4f}"
                        f" TSTR {rec.get('tstr')} cpu {rec['cpu']:.1f}s"
                    )
                    print(f"{name} eps={eps:g} seed={seed} {rec['arm']}: {msg}")
                    sys.stdout.flush()
    return done


def _mean(recs, field):
    vals = [r[field] for r in recs if not r.get("dnf") and r.get(field) is not None]
    return float(np.mean(vals)) if vals else None


def _f(x, fmt=".4f"):
    return "n/a" if x is None else format(x, fmt)


def _ratio(a, b):
    return None if a is None or not b else a / b


def summary(done, names, eps_list, suite=None, method="mst"):
    """Markdown: per table and ε, ours against MST on our bins, means over
    the seeds where both finished (paired), with MST given the deciles
    (``suite``: ``bench_suite`` records) where known."""
    head = (
        "| table | ε | seeds | ours chose | ε_enc | TV1 ours | TV1 MST-our-bins | ratio"
        " | TV1 num ours / MST | TV1 cat ours / MST | TV2 ours | TV2 MST-our-bins"
        " | ratio | TSTR ours / MST | CPU s ours / MST"
        " | MST pipe-decoder TV1 / TV2 | MST deciles TV1 / TV2 | floor TV1 / TV2 |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    ratios = {"tv1": [], "tv2": []}
    for t in names:
        for e in eps_list:
            cells = {}
            for (tt, ee, s, arm), rec in done.items():
                if (tt, ee) == (t, e):
                    cells.setdefault(s, {})[arm] = rec
            both = [
                v
                for v in cells.values()
                if "ours" in v
                and not v.get(f"{method}-our-bins", {"dnf": 1}).get("dnf")
            ]
            if not cells:
                continue
            if not both:
                lines.append(f"| {t} | {e:g} | 0 (MST dnf) |" + " |" * 15)
                continue
            o = [v["ours"] for v in both]
            m = [v[f"{method}-our-bins"] for v in both]
            d = [
                v[f"{method}-pipe-decoder"]
                for v in both
                if f"{method}-pipe-decoder" in v
            ]
            r1 = _ratio(_mean(o, "tv1"), _mean(m, "tv1"))
            r2 = _ratio(_mean(o, "tv2"), _mean(m, "tv2"))
            ratios["tv1"].append(r1)
            ratios["tv2"].append(r2)
            chose = "/".join(sorted({r.get("chose", "?") for r in o}))
            ref = floor = "n/a"
            real = (suite or {}).get((t, 0.0, 0, "real", None))
            if real:
                floor = f"{_f(real['tv1'])} / {_f(real['tv2'])}"
            if suite:
                refs = [
                    r
                    for k, r in suite.items()
                    if k[:2] == (t, e) and k[3] == f"mbi-{method}" and not r.get("dnf")
                ]
                if refs:
                    ref = f"{_f(_mean(refs, 'tv1'))} / {_f(_mean(refs, 'tv2'))}"
            lines.append(
                f"| {t} | {e:g} | {len(both)} | {chose}"
                f" | {_f(_mean(o, 'eps_enc'), '.3f')}"
                f" | {_f(_mean(o, 'tv1'))} | {_f(_mean(m, 'tv1'))} | {_f(r1, '.2f')}"
                f" | {_f(_mean(o, 'tv1_num'))} / {_f(_mean(m, 'tv1_num'))}"
                f" | {_f(_mean(o, 'tv1_cat'))} / {_f(_mean(m, 'tv1_cat'))}"
                f" | {_f(_mean(o, 'tv2'))} | {_f(_mean(m, 'tv2'))} | {_f(r2, '.2f')}"
                f" | {_f(_mean(o, 'tstr'), '.3f')} / {_f(_mean(m, 'tstr'), '.3f')}"
                f" | {_f(_mean(o, 'cpu'), '.1f')} / {_f(_mean(m, 'cpu'), '.1f')}"
                f" | {_f(_mean(d, 'tv1'))} / {_f(_mean(d, 'tv2'))} | {ref} | {floor} |"
            )
    lines.append("")
    for k, v in ratios.items():
        v = [x for x in v if x is not None]
        if v:
            lines.append(
                f"{k.upper()} ours / MST-our-bins: <= 1 on {sum(x <= 1 for x in v)}"
                f" of {len(v)} table/ε pairs (geometric mean"
                f" {float(np.exp(np.mean(np.log(v)))):.2f})"
            )
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="bench_equal_domains", description=__doc__)
    ap.add_argument("--tables", default=",".join(TABLES))
    ap.add_argument("--eps", default="1,0.3")
    ap.add_argument("--seeds", default="0,1", help="comma-separated seeds")
    ap.add_argument("--cap", type=float, default=600.0, help="seconds per MST run")
    ap.add_argument("--cache", required=True, help="JSONL of the records")
    ap.add_argument("--suite-cache", help="bench_suite JSONL (mbi-mst reference)")
    ap.add_argument("--no-run", action="store_true", help="summarise the cache only")
    ap.add_argument(
        "--comparator", choices=["mst", "aim"], default="mst", help="mbi's MST or AIM"
    )
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    from benchmarks._suite_tables import TUNE

    names = [t for t in args.tables.split(",") if t in TUNE]
    eps_list = [float(x) for x in args.eps.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    if args.no_run:
        done = read_cache(args.cache)
    else:
        done = run(names, eps_list, seeds, args.cap, args.cache, args.comparator)
    suite = None
    if args.suite_cache:
        from benchmarks.bench_suite import read_cache as read_suite

        suite = read_suite(args.suite_cache)
    text = summary(done, names, eps_list, suite, args.comparator)
    if args.comparator == "aim":  # the same table, AIM in MST's columns
        text = text.replace("MST", "AIM")
    print(text)


if __name__ == "__main__":
    main()
