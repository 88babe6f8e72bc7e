"""langchef_core: the statistics of a paired, pre-registered comparison of two arms.

Plain Python on numpy, scipy and pandas; it never imports dagster, so every number the
pipeline reports can be reproduced from a notebook or a test.
"""

from .attribution import Attribution, Unattributed, attribute
from .comparison import (BinaryComparison, ContinuousComparison, compare_binary,
                         compare_continuous, noninferiority_from_interval, verdict_from_interval)
from .intervals import wilson_interval
from .mcnemar import mcnemar_clustered, mcnemar_exact
from .multiplicity import holm
from .power import (continuous_detection_limit, detection_limit, goldens_needed,
                    goldens_needed_continuous, limit_at_rate)

__version__ = "0.1.0"

__all__ = [
    "Attribution", "BinaryComparison", "ContinuousComparison", "Unattributed", "attribute",
    "compare_binary", "compare_continuous", "continuous_detection_limit", "detection_limit",
    "goldens_needed", "goldens_needed_continuous", "holm", "limit_at_rate", "mcnemar_clustered",
    "mcnemar_exact", "noninferiority_from_interval", "verdict_from_interval", "wilson_interval",
]
