"""Running smartnoise-synth (benchmark-only) from its own virtualenv.

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
