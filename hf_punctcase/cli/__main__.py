"""``python -m hf_punctcase.cli``: the ``hf-punctcase`` command."""

import sys

from . import main

sys.exit(main())
