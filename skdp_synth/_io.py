"""Atomic file output, shared by the command line and :mod:`skdp_synth.report`."""

from __future__ import annotations

import os
import tempfile
import threading

__all__ = ["write_atomically"]


def write_atomically(path, write, *, binary=False, suffix=".tmp"):
    """Call ``write(fh)`` on a temporary file next to ``path``, then rename it.

    An error or an interruption (``KeyboardInterrupt`` included) while
    writing removes the temporary file and leaves ``path`` untouched: never a
    partial, valid-looking output. The file gets the mode an ordinary
    ``open(path, "w")`` would give it (``0o666`` less the umask), not the
    temporary file's ``0o600``.
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
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


_UMASK_LOCK = threading.Lock()


def _umask():
    """The process umask (read without changing it where the OS allows)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    with _UMASK_LOCK:  # elsewhere: set and restore (not atomic across threads)
        mask = os.umask(0o022)
        os.umask(mask)
    return mask
