"""``python -m skdp_synth.cli``: the same as the ``skdp-synth`` console script."""

import sys

from ._main import main

sys.exit(main())
