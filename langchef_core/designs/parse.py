"""From parsed YAML to a validated :class:`Design`: required and optional fields, one
:class:`DesignError` per bad value naming its field and line. Each value is read by
:class:`~.fields.Fields`; the judge section is read in :mod:`.parse_judge`."""

from __future__ import annotations

import difflib
import math
from functools import partial
from pathlib import Path

from ..inputs.errors import NotUtf8, utf8_text
from ..inputs.workspace import Workspace
from .fields import Fields, num, shown
from .model import (BINARY_METRICS, GUARDRAIL_METRICS, GUARDRAIL_STATISTICS, KINDS,
                    MAX_RESAMPLES, MIN_MAX_GOLDENS, MIN_RESAMPLES, POOL_KINDS, PRIMARY_METRICS,
                    RETRIEVAL_METRICS, STOPPING_RULES, WEIGHT_TOLERANCE, ZERO_POSITIVE, Anchors,
                    Arms, Bootstrap, Design, DesignError, GateOptions, Guardrail, Pool,
                    Retrieval, Slices, Stopping)
from .parse_judge import judge_view, require_imported_criteria, require_score_judge
from .yaml_source import normalise_text, parse_yaml

_TOP_REQUIRED = ("experiment", "hypothesis", "suite", "arms", "kind", "primary")
# A judge and its criteria are needed only where a judge decides (primary: pass_rate or score);
# accuracy and retrieval designs may leave both out.
_JUDGED_REQUIRED = ("judge", "criteria")
_TOP_OPTIONAL = ("judge", "criteria", "alpha", "power", "bootstrap", "margin", "retrieval", "slices", "cluster",
                 "guardrails", "anchors", "target_effect", "assumed_discordant_rate",
                 "assumed_sd", "seeds", "gate", "stopping")


MAX_DESIGN_BYTES = 256 * 1024


def parse_design(text: str, *, file: str = "design", experiment: str | None = None) -> Design:
    """Validate a design given as YAML text; ``experiment`` is the name the file implies."""
    data, lines = parse_yaml(text, file)
    return _validate(data, Fields(file, lines), experiment)


def load_design(path: str | Path, *, label: str | None = None) -> Design:
    """Read and validate ``experiments/<experiment>.yaml``; the stem must equal ``experiment``."""
    path = Path(path)
    file = label or str(path)
    if not path.is_file():
        raise DesignError("design file not found", file=file,
                          hint="write it under experiments/ (see `langchef init`)")
    if path.stat().st_size > MAX_DESIGN_BYTES:
        raise DesignError(f"the file is larger than {MAX_DESIGN_BYTES // 1024} KiB; a design is "
                          "a short pre-registration", file=file,
                          hint="keep long descriptions out of the design")
    try:
        text = utf8_text(path.read_bytes())
    except NotUtf8 as error:
        raise DesignError(f"the file is not UTF-8 text (byte {error.byte} cannot be decoded)",
                          file=file, line=error.line, hint="save it as UTF-8") from None
    return parse_design(text, file=file, experiment=path.stem)


def validate_design(mapping: dict, *, file: str = "design",
                    experiment: str | None = None) -> Design:
    """Validate a design built in Python (no line numbers to report)."""
    return _validate(normalise_text(mapping), Fields(file, {}), experiment)


def load_workspace_design(workspace: Workspace, experiment: str) -> Design:
    path = workspace.design_path(experiment)
    return load_design(path, label=workspace.relative(path))


def _validate(data, fields: Fields, experiment: str | None) -> Design:
    top = fields.mapping(data, (), required=_TOP_REQUIRED, optional=_TOP_OPTIONAL,
                         what="a mapping of design fields")
    name = fields.text(top["experiment"], ("experiment",), name_kind="experiment")
    if experiment is not None and name != experiment:
        raise fields.error(("experiment",), f"says {name!r} but the file is named {experiment!r}",
                           hint=f"write 'experiment: {experiment}' or rename the file")
    kind = fields.choice(top["kind"], ("kind",), KINDS)
    primary = metric_name(top["primary"], ("primary",), fields, PRIMARY_METRICS)
    margin = _margin(top, fields, kind)
    retrieval = retrieval_view(top.get("retrieval"), fields, primary)
    judged = primary in ("pass_rate", "score")
    if judged:
        fields.mapping(top, (), required=_JUDGED_REQUIRED, closed=False)
    judge = None if top.get("judge") is None else judge_view(top["judge"], fields)
    criteria = () if top.get("criteria") is None else _criteria(top["criteria"], fields, judged)
    if primary == "score":
        require_score_judge(judge, fields)
    if judge is not None and judge.kind == "imported":
        require_imported_criteria(judge, criteria, fields)
        if top.get("anchors") is not None:
            raise fields.error(("anchors",), "an imported judge scored upstream and cannot "
                               "re-judge anchors", hint="remove 'anchors' from this design")
    if judge is None and top.get("anchors") is not None:
        raise fields.error(("anchors",), "anchors watch a judge, and this design pins none",
                           hint=f"a {primary} design is scored without a judge; remove "
                                "'anchors' (or pin the judge the anchors should watch)")
    return Design(
        experiment=name,
        hypothesis=fields.text(top["hypothesis"], ("hypothesis",)),
        suite=fields.text(top["suite"], ("suite",), name_kind="suite"),
        arms=_arms(top["arms"], fields),
        kind=kind,
        primary=primary,
        judge=judge,
        criteria=criteria,
        alpha=_optional(top, "alpha", 0.05, lambda v, p: fields.number(
            v, p, low=0, high=0.5, high_open=False, hint="the usual choice is 0.05")),
        power=_optional(top, "power", 0.80, lambda v, p: fields.number(
            v, p, low=0.5, high=1, hint="the usual choice is 0.80")),
        bootstrap=_optional(top, "bootstrap", Bootstrap(), partial(_bootstrap, fields)),
        margin=margin,
        retrieval=retrieval,
        slices=_optional(top, "slices", None, partial(slices_view, fields)),
        cluster=_optional(top, "cluster", None, lambda v, p: fields.text(v, p)),
        guardrails=_optional(top, "guardrails", (), partial(_guardrails, fields)),
        anchors=_optional(top, "anchors", None, partial(_anchors, fields)),
        target_effect=_optional(top, "target_effect", None, lambda v, p: fields.number(
            v, p, low=0, high=1, positive=True, hint="write the difference to detect, e.g. 0.05")),
        assumed_discordant_rate=_optional(top, "assumed_discordant_rate", None,
                                          lambda v, p: fields.number(
                                              v, p, low=0, high=1, low_open=False,
                                              high_open=False,
                                              hint="write the share of goldens expected to "
                                                   "flip, e.g. 0.2")),
        assumed_sd=_optional(top, "assumed_sd", None, lambda v, p: fields.number(
            v, p, low=0, high=1, high_open=False, positive=True,
            hint="write the expected spread of per-golden differences, e.g. 0.3")),
        seeds=_optional(top, "seeds", None, lambda v, p: fields.whole(
            v, p, minimum=2, hint="compare at least two independently trained seeds per arm")),
        gate=_optional(top, "gate", None, partial(_gate, fields)),
        stopping=_stopping(top, fields, primary),
    )


def _stopping(top: dict, fields: Fields, primary: str) -> Stopping | None:
    """``stopping: {rule: sequential, max_goldens: N, order: COLUMN}``; ``rule: fixed`` (the
    default) is no stopping block at all, so it hashes like a design without one."""
    value = top.get("stopping")
    if value is None:
        return None
    path = ("stopping",)
    fields.mapping(value, path, required=("rule",), optional=("max_goldens", "order"))
    rule = fields.choice(value["rule"], path + ("rule",), STOPPING_RULES)
    if rule == "fixed":
        extra = [key for key in ("max_goldens", "order") if value.get(key) is not None]
        if extra:
            raise fields.error(path + (extra[0],), "applies to rule: sequential only",
                               hint="remove it, or write 'rule: sequential'")
        return None
    if value.get("max_goldens") is None:
        raise DesignError("missing required field", file=fields.file, field="stopping.max_goldens",
                          line=fields.line(path), hint="write the most goldens the experiment "
                          "may score, e.g. 'max_goldens: 2000'; it caps the run")
    max_goldens = fields.whole(value["max_goldens"], path + ("max_goldens",),
                               minimum=MIN_MAX_GOLDENS,
                               hint="write the most goldens the experiment may score, e.g. 2000")
    order = "created_at" if value.get("order") is None else \
        fields.text(value["order"], path + ("order",))
    # Always-valid bounds exist here for outcomes in [0, 1] read one golden at a time: a
    # pass/fail (or correct/wrong) per golden. Retrieval metrics are read per query and
    # seeds per checkpoint; neither has a sequential readout yet.
    if primary not in BINARY_METRICS:
        raise fields.error(path + ("rule",), f"a sequential readout is built for pass_rate and "
                           f"accuracy designs; this design's primary is {primary}",
                           hint="use 'rule: fixed' (or leave 'stopping' out) for this metric")
    if top.get("seeds") is not None:
        raise fields.error(path + ("rule",), "a sequential readout pairs one run per arm; this "
                           "design compares training seeds",
                           hint="leave 'stopping' out, or remove 'seeds'")
    return Stopping(rule, max_goldens, order)


def _gate(fields: Fields, value, path: tuple) -> GateOptions:
    fields.mapping(value, path, optional=("strict",))
    strict = value.get("strict", False)
    if not isinstance(strict, bool):
        raise fields.error(path + ("strict",), f"must be true or false, got {shown(strict)}",
                           hint="write 'gate: {strict: true}' to fail the gate on a missing "
                                "proof")
    return GateOptions(strict)


# Spellings of the retrieval metrics that other tools use, and the name langchef gives them.
METRIC_ALIASES = {"mrr": "reciprocal_rank", "rr": "reciprocal_rank",
                  "mean_reciprocal_rank": "reciprocal_rank", "hit_rate": "hit",
                  "hits": "hit", "success": "hit", "normalized_recall": "recall_normalized",
                  "recall_norm": "recall_normalized", "ndcg_score": "ndcg"}


def metric_name(value, path: tuple, fields: Fields, options) -> str:
    """A metric name, with the usual aliases (``mrr``) read as langchef's own name so the
    hash does not depend on the spelling; ``recall@10`` is refused with the exact rewrite,
    because the cut-off belongs in ``retrieval.k``."""
    if isinstance(value, str):
        written = value.strip()
        lowered = written.lower().replace("-", "_").replace(" ", "_")
        if lowered in options:
            return lowered
        if lowered in METRIC_ALIASES and METRIC_ALIASES[lowered] in options:
            return METRIC_ALIASES[lowered]
        base, at, cut = lowered.partition("@")
        if at:
            name = METRIC_ALIASES.get(base, base)
            if name in options:
                k = f"k: {cut}" if cut.isdigit() else "k: 10"
                raise fields.error(path, f"metric {value!r} names its cut-off in the metric",
                                   hint=f"write '{name}' and put the cut-off in the design as "
                                        f"'retrieval: {{{k}}}'")
    if not isinstance(value, str) or value not in options:
        close = difflib.get_close_matches(value, options, n=1) if isinstance(value, str) else []
        hint = (f"did you mean '{close[0]}'? " if close else "") + "use one of: " + \
            ", ".join(options)
        raise fields.error(path, f"unknown value {shown(value)}", hint=hint)
    return value


def _criteria(value, fields: Fields, judged: bool) -> tuple:
    """The judge's criteria as the design spells them (the canonical spelling: a judge that
    cites ``Correctness`` for ``correctness`` is matched without regard to case)."""
    criteria = fields.text_list(value, ("criteria",), allow_empty=not judged)
    seen = {}
    for index, name in enumerate(criteria):
        key = name.strip().casefold()
        if key in seen:
            raise fields.error(("criteria", index),
                               f"{name!r} is {seen[key]!r} again (criteria match without "
                               "regard to case)", hint="list each criterion once")
        seen[key] = name
    return criteria


def _optional(top: dict, key: str, default, read):
    """``default`` where the design leaves ``key`` out (or empty), else ``read(value, (key,))``."""
    value = top.get(key)
    return default if value is None else read(value, (key,))


def _margin(top: dict, fields: Fields, kind: str) -> float | None:
    if top.get("margin") is None:
        if kind == "non_inferiority":
            raise DesignError("required when kind is non_inferiority", file=fields.file,
                              field="margin", line=fields.line(("kind",)),
                              hint="write the tolerated drop, e.g. 'margin: 0.03' for three "
                                   "points")
        return None
    return fields.number(top["margin"], ("margin",), low=0, high=1, positive=True,
                         hint="write the tolerated drop as a positive share, e.g. 0.03")


def _arms(value, fields: Fields) -> Arms:
    arms = fields.mapping(value, ("arms",), required=("baseline", "variant"))
    baseline = fields.text(arms["baseline"], ("arms", "baseline"), name_kind="arm")
    variant = fields.text(arms["variant"], ("arms", "variant"), name_kind="arm")
    if baseline == variant:
        raise fields.error(("arms", "variant"), f"is the same arm as the baseline ({baseline!r})",
                           hint="compare two different arms")
    return Arms(baseline, variant)


def _bootstrap(fields: Fields, value, path: tuple) -> Bootstrap:
    fields.mapping(value, path, optional=("resamples", "seed"))
    resamples = Bootstrap.resamples
    if value.get("resamples") is not None:
        resamples = fields.whole(value["resamples"], path + ("resamples",), minimum=MIN_RESAMPLES,
                                 maximum=MAX_RESAMPLES,
                                 hint=f"use {MIN_RESAMPLES} to {MAX_RESAMPLES} resamples; "
                                      "10000 is the default")
    seed = Bootstrap.seed
    if value.get("seed") is not None:
        seed = fields.whole(value["seed"], path + ("seed",), minimum=0)
    return Bootstrap(resamples, seed)


def retrieval_view(value, fields: Fields, primary: str) -> Retrieval | None:
    path = ("retrieval",)
    if value is None:
        # A retrieval primary needs retrieval settings; the defaults are spelled out so the
        # hash covers them.
        return Retrieval() if primary in RETRIEVAL_METRICS else None
    fields.mapping(value, path, optional=("k", "metrics", "zero_positive", "pool", "min_coverage"))
    k = 10 if value.get("k") is None else fields.whole(value["k"], path + ("k",), minimum=1)
    metrics = RETRIEVAL_METRICS
    if value.get("metrics") is not None:
        metrics = _metric_list(value["metrics"], path + ("metrics",), fields)
    if primary in RETRIEVAL_METRICS and primary not in metrics:
        raise fields.error(("primary",), f"the primary metric {primary!r} is not among "
                                         "retrieval.metrics",
                           hint=f"add {primary} to retrieval.metrics")
    zero_positive = "exclude"
    if value.get("zero_positive") is not None:
        zero_positive = fields.choice(value["zero_positive"], path + ("zero_positive",),
                                      ZERO_POSITIVE)
    pool = Pool()
    if value.get("pool") is not None:
        fields.mapping(value["pool"], path + ("pool",), required=("kind",))
        pool = Pool(fields.choice(value["pool"]["kind"], path + ("pool", "kind"), POOL_KINDS))
    min_coverage = None
    if value.get("min_coverage") is not None:
        min_coverage = fields.number(value["min_coverage"], path + ("min_coverage",), low=0,
                                     high=1, low_open=False, high_open=False,
                                     hint="write the share of queries that must have a "
                                          "judged positive, e.g. 0.9")
    return Retrieval(k, metrics, zero_positive, pool, min_coverage)


def _metric_list(value, path: tuple, fields: Fields) -> tuple:
    names = fields.text_list(value, path)
    metrics = []
    for index, name in enumerate(names):
        metric = metric_name(name, path + (index,), fields, RETRIEVAL_METRICS)
        if metric in metrics:
            raise fields.error(path + (index,), f"{name!r} is listed twice (as {metric!r})",
                               hint="list each metric once")
        metrics.append(metric)
    return tuple(metrics)


def slices_view(fields: Fields, value, path: tuple) -> Slices:
    fields.mapping(value, path, required=("column",), optional=("target_weights", "protected"))
    column = fields.text(value["column"], path + ("column",))
    weights = None
    if value.get("target_weights") is not None:
        weights_path = path + ("target_weights",)
        raw = fields.mapping(value["target_weights"], weights_path, closed=False,
                             what="a mapping of slice name to weight")
        if not raw:
            raise fields.error(weights_path, "must name at least one slice")
        weights = {name: fields.number(weight, weights_path + (name,), low=0, high=1,
                                       low_open=False, high_open=False)
                   for name, weight in raw.items()}
        total = math.fsum(weights.values())
        if abs(total - 1) > WEIGHT_TOLERANCE:
            raise fields.error(weights_path, f"weights sum to {num(total)}, not 1",
                               hint="make the target weights of all slices add up to 1")
    protected = ()
    if value.get("protected") is not None:
        protected = fields.text_list(value["protected"], path + ("protected",))
        declared = set(weights or ())
        for index, name in enumerate(protected):
            if name not in declared:
                raise fields.error(path + ("protected", index),
                                   f"protected slice {name!r} is not a declared slice",
                                   hint="declare it in slices.target_weights" if not declared
                                   else "declared slices: " + ", ".join(weights))
    return Slices(column, weights, protected)


def _guardrails(fields: Fields, value, path: tuple) -> tuple[Guardrail, ...]:
    if not isinstance(value, list):
        raise fields.error(path, f"must be a list, got {shown(value)}",
                           hint="write '- {metric: latency_ms, statistic: p95, max_increase: 0.1}'")
    guardrails, seen = [], set()
    for index, item in enumerate(value):
        here = path + (index,)
        fields.mapping(item, here, required=("metric", "statistic", "max_increase"))
        guardrail = Guardrail(
            fields.choice(item["metric"], here + ("metric",), GUARDRAIL_METRICS),
            fields.choice(item["statistic"], here + ("statistic",), GUARDRAIL_STATISTICS),
            fields.number(item["max_increase"], here + ("max_increase",), low=0, low_open=False,
                          hint="write the tolerated relative increase, e.g. 0.10 for ten per cent"),
        )
        if (guardrail.metric, guardrail.statistic) in seen:
            raise fields.error(here, f"{guardrail.statistic} of {guardrail.metric} is guarded "
                                     "twice", hint="keep one limit per metric and statistic")
        seen.add((guardrail.metric, guardrail.statistic))
        guardrails.append(guardrail)
    return tuple(guardrails)


def _anchors(fields: Fields, value, path: tuple) -> Anchors:
    fields.mapping(value, path, required=("set",), optional=("warn_kappa", "fail_kappa"))
    kappa = dict(low=-1, high=1, low_open=False, high_open=False)
    anchors = Anchors(
        fields.text(value["set"], path + ("set",), name_kind="anchor set"),
        0.6 if value.get("warn_kappa") is None
        else fields.number(value["warn_kappa"], path + ("warn_kappa",), **kappa),
        0.4 if value.get("fail_kappa") is None
        else fields.number(value["fail_kappa"], path + ("fail_kappa",), **kappa),
    )
    if anchors.fail_kappa > anchors.warn_kappa:
        raise fields.error(path + ("fail_kappa",),
                           f"{num(anchors.fail_kappa)} is above warn_kappa "
                           f"{num(anchors.warn_kappa)}",
                           hint="the failing agreement must not exceed the warning one")
    return anchors
