"""`python -m langchef_pipeline.cli`, the same as the `langchef` console script."""

import sys

from . import main

sys.exit(main())
