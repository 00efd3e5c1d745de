"""Opt-in progress of long fits, through the ``skdp_synth`` logger.

A fit of a wide or large table can take minutes (counting, selection rounds,
the generator's sweeps); the user should see that it runs and where. The
messages name a stage and the seconds it took -- never a count, size or value
of the private data (the number of rows of the generator's model, a function
of the released total, is left out too, so that no line needs a review).

Off by default, as the :mod:`logging` convention for libraries is: the
``skdp_synth`` logger has no handler of its own. Turn it on with::

    import logging
    logging.basicConfig()
    logging.getLogger("skdp_synth").setLevel(logging.INFO)

or with ``SynthesisPipeline(verbose=True)``, which prints them on standard
error for the duration of its ``fit`` (:func:`shown`).
"""

from __future__ import annotations

import contextlib
import logging
import sys
import time

logger = logging.getLogger("skdp_synth")

#: seconds between two messages of one loop (:class:`Ticker`)
TICK_SECONDS = 2.0


@contextlib.contextmanager
def stage(name):
    """Log ``name`` when it starts and its seconds when it ends (INFO)."""
    if not logger.isEnabledFor(logging.INFO):
        yield
        return
    t0 = time.perf_counter()
    logger.info("%s ...", name)
    yield
    logger.info("%s: done in %.1f s", name, time.perf_counter() - t0)


class Ticker:
    """One message every :data:`TICK_SECONDS` at most, for a loop's steps."""

    def __init__(self, name, total=None):
        self.name, self.total = name, total
        self.t0 = self.last = time.perf_counter()

    def tick(self, k):
        """Step ``k`` (1-based) is done; log it if the last line is old."""
        now = time.perf_counter()
        if now - self.last < TICK_SECONDS or not logger.isEnabledFor(logging.INFO):
            return
        self.last = now
        of = f" of at most {self.total}" if self.total is not None else ""
        logger.info("%s: %d%s (%.1f s)", self.name, k, of, now - self.t0)


@contextlib.contextmanager
def shown(enabled=True):
    """Print the INFO messages on standard error while the block runs.

    As scikit-learn's ``verbose`` prints: a handler of its own on the
    ``skdp_synth`` logger (not propagated, so no line is doubled by a root
    handler), removed afterwards with the level restored. A no-op when
    ``enabled`` is false.
    """
    if not enabled:
        yield
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("[skdp_synth] %(message)s"))
    level, propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate
