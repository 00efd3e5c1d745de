"""Atomic file output, shared by the command line and :mod:`skdp_synth.report`."""

from __future__ import annotations

import os
import tempfile

__all__ = ["write_atomically"]


def write_atomically(path, write, *, binary=False, suffix=".tmp"):
    """Call ``write(fh)`` on a temporary file next to ``path``, then rename it.

    An error or an interruption (``KeyboardInterrupt`` included) while
    writing removes the temporary file and leaves ``path`` untouched: never a
    partial, valid-looking output.
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".skdp-synth-", suffix=suffix, dir=directory)
    try:
        if binary:
            fh = os.fdopen(fd, "wb")
        else:
            fh = os.fdopen(fd, "w", newline="", encoding="utf-8")
        with fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
