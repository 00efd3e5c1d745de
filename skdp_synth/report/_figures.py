"""Matplotlib, imported on demand, and figures saved atomically.

The report's figure and the curve's plot need matplotlib, an optional
dependency (the ``plot`` extra): :func:`_figure_class` imports its
object-API ``Figure`` (no pyplot state) or says how to install it, and
:func:`_save_figure` writes a PNG without leaving a partial file behind.
"""

from __future__ import annotations


def _figure_class():
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            "plots need matplotlib: pip install matplotlib (in a clone of "
            "skdp_synth: pip install -e '.[plot]', or make demo)"
        ) from None
    return Figure


def _save_figure(fig, path, dpi):
    from .._io import write_atomically

    write_atomically(
        path,
        lambda fh: fig.savefig(fh, format="png", dpi=dpi),
        binary=True,
        suffix=".png.tmp",
    )
