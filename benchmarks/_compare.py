"""Running the third-party comparators (benchmark-only) from their own virtualenvs.

smartnoise-synth (MST, AIM, MWEM with mbi 1.1) below; Private-PGM 2.x (mbi 2.x,
MST and AIM through our `_mbi_runner.py`) at the end of the module.

smartnoise-synth 1.0.8 pins opacus<0.15, mbi<2, opendp<0.15 and pandas<3,
so it lives in a separate environment (``make compare-venv`` builds
``.venv-compare`` from ``benchmarks/requirements-compare.txt``; or point
``SKDP_COMPARE_PYTHON`` at any interpreter that has it). Data travel as CSV
files; ``_snsynth_runner.py`` runs inside that environment and never imports
skdp_synth. Benchmarks skip the comparison with a message when it is missing.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
COMPARE_PYTHON = os.environ.get(
    "SKDP_COMPARE_PYTHON", str(ROOT / ".venv-compare" / "bin" / "python")
)


def compare_unavailable():
    """``None`` if smartnoise-synth can be run, else the reason it cannot."""
    if not Path(COMPARE_PYTHON).exists():
        return (
            f"no interpreter at {COMPARE_PYTHON}; run `make compare-venv` "
            "or set SKDP_COMPARE_PYTHON"
        )
    probe = subprocess.run(
        [COMPARE_PYTHON, "-c", "import snsynth, mbi"], capture_output=True, text=True
    )
    if probe.returncode:
        return probe.stderr.strip().splitlines()[-1]
    return None


def run_snsynth(codes, method, eps, seed, tmp, *, rounds=20, delta=None):
    """Fit smartnoise-synth ``method`` on ``codes``; sample ``len(codes)`` rows.

    Returns ``{label: (DataFrame, fit+sample seconds)}``: for MST and AIM both
    smartnoise's own ``sample`` and i.i.d. draws from the same fitted model
    (see ``_snsynth_runner.py`` for why both).
    """
    src = Path(tmp) / f"real_{method}_{seed}.csv"
    codes.to_csv(src, index=False)
    runner = Path(__file__).with_name("_snsynth_runner.py")
    args = [
        COMPARE_PYTHON,
        str(runner),
        str(src),
        str(tmp),
        method,
        str(eps),
        str(seed),
        str(rounds),
    ]
    if delta is not None:
        args.append(str(delta))
    proc = subprocess.run(args, capture_output=True, text=True, timeout=3600)
    if proc.returncode:
        raise RuntimeError(f"{method} failed:\n{proc.stderr[-2000:]}")
    results = {}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            _, kind, path, seconds = line.split()
            syn = pd.read_csv(path)[list(codes.columns)]
            results[kind.replace("_", " ")] = (syn, float(seconds))
    return results


# --- Private-PGM (mbi 2.x) MST and AIM ----------------------------------------
# mbi 2.x needs JAX; it lives in ``.venv-mbi`` (``make compare-mbi-venv``, from
# ``benchmarks/requirements-mbi.txt``) or any interpreter named by
# ``SKDP_MBI_PYTHON``. ``_mbi_runner.py`` runs there and never imports skdp_synth.
MBI_PYTHON = os.environ.get(
    "SKDP_MBI_PYTHON", str(ROOT / ".venv-mbi" / "bin" / "python")
)

# one thread for XLA / BLAS in the comparator (a fair, reproducible timing on a
# shared machine; our own code runs single-process too)
_MBI_ENV = {
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


def mbi_unavailable():
    """``None`` if mbi 2.x can be run, else the reason it cannot."""
    if not Path(MBI_PYTHON).exists():
        return (
            f"no interpreter at {MBI_PYTHON}; run `make compare-mbi-venv` "
            "or set SKDP_MBI_PYTHON"
        )
    probe = subprocess.run(
        # estimation.MirrorDescent is the mbi 2.x API
        [MBI_PYTHON, "-c", "from mbi.estimation import MirrorDescent"],
        capture_output=True,
        text=True,
    )
    if probe.returncode:
        return (probe.stderr.strip().splitlines() or ["no mbi 2.x"])[-1]
    return None


def run_mbi(
    codes,
    sizes,
    method,
    eps,
    delta,
    seed,
    workdir,
    *,
    cache=None,
    timeout=4 * 3600,
    **params,
):
    """MST or AIM (mbi 2.x) on the int matrix ``codes`` (values < ``sizes``).

    Returns ``({sampler: (rows, fit+sample seconds)}, info)`` with samplers
    ``"round"`` (mbi's default) and ``"sample"`` (i.i.d.), ``rows`` an int matrix
    of ``len(codes)`` rows. ``params`` go to the runner (``rounds``,
    ``max_model_size``, ``max_iters``, ``mst_iters``). With ``cache`` (a folder),
    a finished run is stored there and reused when the same data, method, seed
    and parameters come again (the key includes a hash of ``codes``).
    ``timeout`` (seconds) kills the run and raises
    :class:`subprocess.TimeoutExpired`.
    """
    import hashlib
    import json

    import numpy as np

    codes = np.ascontiguousarray(codes, dtype=np.int64)
    digest = hashlib.sha1(codes.tobytes() + repr(list(sizes)).encode()).hexdigest()[:12]
    tag = "_".join(f"{k}{v}" for k, v in sorted(params.items()))
    stem = f"{method}_{digest}_e{eps:g}_d{delta:g}_s{seed}" + (f"_{tag}" if tag else "")
    folder = Path(cache) if cache else Path(workdir)
    folder.mkdir(parents=True, exist_ok=True)
    out, meta = folder / f"{stem}.npz", folder / f"{stem}.json"
    if not (cache and out.exists() and meta.exists()):
        src = Path(workdir) / f"{stem}_codes.npy"
        np.save(src, codes)
        cfg = dict(
            codes=str(src),
            sizes=[int(s) for s in sizes],
            method=method,
            epsilon=float(eps),
            delta=float(delta),
            seed=int(seed),
            out=str(out),
            **params,
        )
        cfg_path = Path(workdir) / f"{stem}.cfg.json"
        cfg_path.write_text(json.dumps(cfg))
        runner = Path(__file__).with_name("_mbi_runner.py")
        proc = subprocess.run(
            [MBI_PYTHON, str(runner), str(cfg_path)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **_MBI_ENV},
        )
        if proc.returncode:
            raise RuntimeError(f"mbi {method} failed:\n{proc.stderr[-3000:]}")
        meta.write_text(proc.stdout.strip().splitlines()[-1])
    result = json.loads(meta.read_text())
    with np.load(out) as z:
        rows = {s: (z[s], result["seconds"][s]) for s in z.files}
    return rows, result
