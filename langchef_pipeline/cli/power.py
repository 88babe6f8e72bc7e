"""`langchef power`: the smallest effect N goldens can detect, or the goldens an effect needs."""

from __future__ import annotations

import math

from .options import add_command
from .output import CommandError, emit


DESCRIPTION = """
    Answer either planning question for a paired comparison: the smallest effect N goldens can
    detect (--goldens), or the goldens needed to detect an effect (--effect); give both to get
    both. Pass rates plan with --discordant-rate (the share of goldens expected to flip);
    continuous scores with --sd (spread of per-golden differences). With --sequential the
    goldens are a sequential design's budget N, planned with the confidence sequence its
    readout is read from (over --clusters clusters when the design names a cluster column)."""
EXAMPLES = ("langchef power --goldens 90 --discordant-rate 0.2",
            "langchef power --effect 0.05 --discordant-rate 0.2",
            "langchef power --goldens 120 --discordant-rate 0.2 --sequential --clusters 20",
            "langchef power --goldens 400 --sd 0.3 --alpha 0.01",
            "langchef power --effect 0.03 --sd 0.25 --json")


def register(commands, common) -> None:
    power = add_command(commands, "power", common, help="plan the number of goldens",
                        description=DESCRIPTION, examples=EXAMPLES)
    power.add_argument("--goldens", type=int, metavar="N", help="number of goldens")
    power.add_argument("--effect", type=float, metavar="E",
                       help="difference to detect (e.g. 0.05 for five points)")
    power.add_argument("--discordant-rate", type=float, metavar="R",
                       help="assumed share of goldens that change verdict (pass rates)")
    power.add_argument("--sd", type=float, metavar="S",
                       help="assumed sd of per-golden differences (continuous scores)")
    power.add_argument("--sequential", action="store_true",
                       help="plan a sequential design: --goldens is its budget N (pass rates)")
    power.add_argument("--clusters", type=int, metavar="K",
                       help="with --sequential: the clusters (e.g. users) the N goldens hold")
    power.add_argument("--alpha", type=float, default=0.05, help="two-sided level (default 0.05)")
    power.add_argument("--power", type=float, default=0.80, dest="target_power",
                       help="power (default 0.80)")
    power.set_defaults(handler=run_power)


def run_power(arguments) -> int:
    rate, sd = arguments.discordant_rate, arguments.sd
    goldens, effect = arguments.goldens, arguments.effect
    if (rate is None) == (sd is None):
        raise CommandError("give exactly one of --discordant-rate (pass rates) or --sd "
                           "(continuous scores).")
    if goldens is None and effect is None:
        raise CommandError("give --goldens N for the smallest detectable effect, --effect E "
                           "for the goldens needed, or both.")
    if goldens is not None and goldens < 1:
        raise CommandError(f"--goldens {goldens}: a paired comparison needs at least one "
                           "golden; give the number of goldens in the suite (e.g. --goldens 90).")
    if arguments.sequential or arguments.clusters is not None:
        return run_sequential_power(arguments)
    from langchef_core.stats import power as planning

    alpha, target_power = arguments.alpha, arguments.target_power
    scale = {"discordant_rate": rate} if rate is not None else {"sd": sd}
    payload = {"alpha": alpha, "power": target_power, **scale, "goldens": goldens,
               "effect": effect, "detection_limit": None, "goldens_needed": None}
    text = []
    assumed = (f"an assumed discordant rate of {rate:g}" if rate is not None
               else f"an assumed sd of differences of {sd:g}")
    if goldens is not None:
        limit = (planning.limit_at_rate(goldens, rate, alpha=alpha, power=target_power)
                 if rate is not None else
                 planning.continuous_detection_limit(sd, goldens, alpha=alpha, power=target_power))
        payload["detection_limit"] = limit if math.isfinite(limit) else None
        # A pass-rate difference in points, a score's on its own scale (issue 15).
        shown = f"{100 * limit:.1f} points" if rate is not None else f"{limit:.3f}"
        if math.isfinite(limit):
            text.append(f"with {goldens} goldens and {assumed}, the smallest difference "
                        f"detectable at alpha {alpha:g} with at least {target_power:g} power "
                        f"is {shown}")
        else:
            text.append(f"with {goldens} goldens no difference is detectable at alpha "
                        f"{alpha:g}: even if every golden flipped one way, the exact test "
                        "could not reach that level; add goldens")
        if rate is not None and math.isfinite(limit):
            # The limit holds up to the Wilson bound on the rate; at the rate itself (and
            # never below the effect) the readout's rule is at least as strong: say how strong.
            exact = planning.decision_power(goldens, max(rate, limit), limit, alpha=alpha)
            payload["exact_power"] = exact
            text.append(f"the readout's rule (Tango interval and exact McNemar) has power "
                        f"{exact:.3f} at a difference of {shown} with these goldens and that "
                        "discordant rate")
    if effect is not None:
        needed = (planning.goldens_needed(effect, rate, alpha=alpha, power=target_power)
                  if rate is not None else
                  planning.goldens_needed_continuous(effect, sd, alpha=alpha, power=target_power))
        payload["goldens_needed"] = needed
        wanted = effect_text(effect, rate is not None)
        text.append(f"detecting a difference of {wanted} with {assumed} needs {needed} goldens "
                    f"(alpha {alpha:g}, power {target_power:g})")
        if goldens is not None:
            enough = goldens >= needed
            payload["enough"] = enough
            text.append(f"{goldens} goldens are {'enough' if enough else 'NOT enough'} for "
                        f"{wanted}")
    emit(arguments, payload, "\n".join(text))
    return 0


def effect_text(effect: float, rate: bool) -> str:
    """An effect as every output prints it: points for a pass rate, its own scale otherwise."""
    return f"{100 * effect:.1f} points" if rate else f"{effect:g}"


def run_sequential_power(arguments) -> int:
    """A sequential design's budget planned with its confidence sequence (issue 29)."""
    rate, goldens, effect = arguments.discordant_rate, arguments.goldens, arguments.effect
    clusters = arguments.clusters
    if rate is None:
        raise CommandError("--sequential plans pass rates: give --discordant-rate (a sequential "
                           "readout's primary is a pass rate or accuracy).")
    if clusters is not None and (goldens is None or not 1 <= clusters <= goldens):
        raise CommandError(f"--clusters {clusters}: give it with --goldens N, as the number of "
                           "clusters those N goldens hold (at least 1, at most N).")
    from langchef_core.stats import power as planning
    from langchef_core.stats.sequential import budget_needed, plan_sequence

    alpha, target_power = arguments.alpha, arguments.target_power
    per_cluster = None if clusters is None else goldens / clusters
    payload = {"alpha": alpha, "power": target_power, "discordant_rate": rate,
               "sequential": True, "goldens": goldens, "clusters": clusters, "effect": effect,
               "detection_limit": None, "half_width": None, "goldens_needed": None}
    text = []
    if goldens is not None:
        plan = plan_sequence(rate, goldens, alpha=alpha, power=target_power,
                             goldens_per_cluster=per_cluster)
        fixed = planning.limit_at_rate(goldens, rate, alpha=alpha, power=target_power)
        payload.update(half_width=plan.half_width, units=plan.units, unit=plan.unit,
                       detection_limit=plan.detection_limit if plan.resolves_anything else None,
                       fixed_n_detection_limit=fixed if math.isfinite(fixed) else None)
        read_as = (f" read as about {plan.units} clusters of {per_cluster:.3g} goldens (goldens "
                   "of one cluster assumed to flip independently)" if clusters else "")
        resolves = (f"resolves a difference of {effect_text(plan.detection_limit, True)}"
                    if plan.resolves_anything else "resolves no difference at all")
        text.append(f"a sequential design with a budget of {goldens} goldens{read_as} and an "
                    f"assumed discordant rate of {rate:g}: at N its confidence sequence is about "
                    f"±{100 * plan.half_width:.1f} points wide and {resolves} (alpha {alpha:g}, "
                    f"power {target_power:g})")
        if math.isfinite(fixed):
            text.append(f"one fixed-n readout of the same {goldens} goldens would resolve "
                        f"{effect_text(fixed, True)}")
    if effect is not None:
        needed = budget_needed(effect, rate, alpha=alpha, power=target_power,
                               goldens_per_cluster=per_cluster)
        payload["goldens_needed"] = needed
        size = "" if per_cluster is None else f" in clusters of {per_cluster:.3g} goldens"
        text.append(f"resolving a difference of {effect_text(effect, True)} sequentially needs a "
                    + (f"budget of about {needed} goldens{size}" if needed else
                       "budget beyond a million goldens") + f" (alpha {alpha:g}, power "
                    f"{target_power:g})")
        if goldens is not None:
            enough = needed is not None and goldens >= needed
            payload["enough"] = enough
            text.append(f"{goldens} goldens are {'enough' if enough else 'NOT enough'} for "
                        f"{effect_text(effect, True)}")
    emit(arguments, payload, "\n".join(text))
    return 0
