"""The ``skdp-synth`` command line: ``main`` is the console script."""

from ._main import (
    main,
)

__all__ = [
    "main",
]
