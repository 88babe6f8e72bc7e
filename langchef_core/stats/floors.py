"""The minimum evidence a verdict needs, whatever its interval says (see ``paired``).

Kept apart from the procedures that use them so that `langchef gate`, which re-derives the
rule from a readout's counts, can read them without loading scipy.stats.
"""

MIN_PAIRS = 10       # a real-valued verdict needs at least this many pairs (and some spread)
MIN_CLUSTERS = 5     # fewer clusters: refused, the verdict inconclusive
WARN_CLUSTERS = 10   # fewer clusters: read with a warning
