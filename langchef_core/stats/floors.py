"""The minimum evidence a verdict needs, whatever its interval says (see ``paired``).

Kept apart from the procedures that use them so that `langchef gate`, which re-derives the
rule from a readout's counts, can read them without loading scipy.stats.
"""

MIN_PAIRS = 10       # a real-valued verdict needs at least this many pairs (and some spread)
# Below MIN_CLUSTERS the cluster-robust df fall to about 1-2 and any working model of the
# within-cluster correlation is guesswork: the verdict is refused (inconclusive).
MIN_CLUSTERS = 5
WARN_CLUSTERS = 10   # fewer clusters: read with a warning
