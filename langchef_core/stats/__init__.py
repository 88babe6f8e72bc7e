"""Every statistical procedure of a paired comparison, on plain arrays.

McNemar, bootstraps, intervals, multiplicity, power, the paired comparisons, attribution,
slices and weights, training-run variance, cost statistics, agreement (κ) and drift. This
package imports numpy, scipy and pandas only — never the rest of langchef — so each number
can be checked against a reference implementation from a notebook.
"""
