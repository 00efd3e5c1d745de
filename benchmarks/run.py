"""Run every ``benchmarks/bench_*.py`` (``make bench``); each prints its own tables.

Usage: ``python -m benchmarks.run [name ...]`` -- names without the ``bench_`` prefix.
"""

import importlib
import pathlib
import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    here = pathlib.Path(__file__).parent
    names = sorted(p.stem for p in here.glob("bench_*.py"))
    if argv:
        names = [n for n in names if n.removeprefix("bench_") in argv]
    for name in names:
        print(f"\n## {name}\n", flush=True)
        importlib.import_module(f"benchmarks.{name}").main()


if __name__ == "__main__":
    main()
