"""Pre-registered designs: the YAML file that fixes an experiment before any traffic.

A design (``experiments/<experiment>.yaml``, ARCHITECTURE.md §4) is parsed with PyYAML's
node API so that every rejected value is reported with the line it sits on, validated into
the frozen :class:`Design`, and hashed. The hash is SHA-256 over a canonical serialisation
of the *parsed* design with its defaults filled in, so layout, key order and comments never
change it while any change of value does; an approval records that hash, and a design
edited afterwards no longer matches it.

Canonical form: JSON with sorted keys and no whitespace, every string in Unicode NFC, every
number normalised (``0.05``, ``5e-2`` and ``0.050`` are one float; a float with an integral
value is written as that integer), optional fields that were not given left out.

YAML scalars follow the YAML 1.2 core schema rather than PyYAML's YAML 1.1 default: ``no``
stays the text "no" (a slice for Norway is not ``false``), ``5e-2`` is a number and
``2024-05-01`` stays text, because a design's meaning must not depend on a parser's quirks.

This module also plans the size of a run (:func:`plan_power`): the smallest effect the
suite's goldens can detect at the assumed discordant rate (or spread), and how many goldens
a target effect or a margin below that limit would need.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import numbers
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..stats.paired import Record
from ..inputs.errors import InputError
from ..stats.power import (continuous_detection_limit, goldens_needed, goldens_needed_continuous,
                           limit_at_rate, z_multiplier)
from ..inputs.workspace import NAME_PATTERN, Workspace

KINDS = ("superiority", "non_inferiority")
RETRIEVAL_METRICS = ("recall", "recall_normalized", "precision", "hit", "reciprocal_rank", "ndcg")
BINARY_METRICS = ("pass_rate", "accuracy")
PRIMARY_METRICS = BINARY_METRICS + RETRIEVAL_METRICS
JUDGE_KINDS = ("recorded", "rubric", "openai_compatible")
ZERO_POSITIVE = ("exclude", "zero", "separate")
POOL_KINDS = ("full", "sampled", "hard_negative")
GUARDRAIL_METRICS = ("latency_ms", "cost_usd")
GUARDRAIL_STATISTICS = ("mean", "p50", "p95")
MIN_RESAMPLES = 1000
# Target weights are written by hand as decimals (0.333…); allow their rounding, no more.
WEIGHT_TOLERANCE = 1e-6


class DesignError(InputError):
    """A design file that cannot be accepted, naming its field and line.

    ``experiments/x.yaml, field 'margin', line 7: must be positive; write the tolerated
    drop, e.g. 0.03.`` The field is kept as ``column`` and the line as ``row`` so that code
    handling any :class:`InputError` reads it the same way.
    """

    def __init__(self, message: str, *, file=None, field: str | None = None,
                 line: int | None = None, value=None, hint: str | None = None):
        super().__init__(message, file=file, column=field, row=line, value=value, hint=hint)

    @property
    def field(self) -> str | None:
        return self.column

    @property
    def line(self) -> int | None:
        return self.row

    def describe(self) -> str:
        place = [str(self.file)] if self.file is not None else []
        if self.column is not None:
            place.append(f"field '{self.column}'")
        if self.row is not None:
            place.append(f"line {self.row}")
        text = (", ".join(place) + ": " if place else "") + self.message
        if self.hint:
            text = text.rstrip(".") + "; " + self.hint
        return text if text.endswith((".", "?")) else text + "."


# --------------------------------------------------------------------------------------
# The typed model
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Arms(Record):
    baseline: str
    variant: str


@dataclass(frozen=True)
class Judge(Record):
    """The pinned judge. ``recorded`` verdicts must all carry ``id``; the other kinds derive
    their id from ``settings`` (langchef_core.scoring.judges), so the settings are kept as written."""

    kind: str
    id: str | None
    settings: dict

    def to_dict(self) -> dict:
        plain = {"kind": self.kind, **_plain(self.settings)}
        if self.id is not None:
            plain["id"] = self.id
        return plain


@dataclass(frozen=True)
class Bootstrap(Record):
    resamples: int = 10_000
    seed: int = 0


@dataclass(frozen=True)
class Pool(Record):
    kind: str = "full"


@dataclass(frozen=True)
class Retrieval(Record):
    k: int = 10
    metrics: tuple[str, ...] = RETRIEVAL_METRICS
    zero_positive: str = "exclude"
    pool: Pool = field(default_factory=Pool)
    min_coverage: float | None = None

    def to_dict(self) -> dict:
        return _drop_none({"k": self.k, "metrics": list(self.metrics),
                           "zero_positive": self.zero_positive, "pool": self.pool.to_dict(),
                           "min_coverage": self.min_coverage})


@dataclass(frozen=True)
class Slices(Record):
    column: str
    target_weights: dict | None = None
    protected: tuple[str, ...] = ()

    @property
    def declared(self) -> tuple[str, ...]:
        return tuple(self.target_weights or ())

    def to_dict(self) -> dict:
        plain = {"column": self.column}
        if self.target_weights is not None:
            plain["target_weights"] = dict(self.target_weights)
        if self.protected:
            plain["protected"] = list(self.protected)
        return plain


@dataclass(frozen=True)
class Guardrail(Record):
    """Fail the gate when ``statistic`` of ``metric`` grows by more than ``max_increase``
    relative to the baseline (0.10 = ten per cent)."""

    metric: str
    statistic: str
    max_increase: float


@dataclass(frozen=True)
class Anchors(Record):
    set: str
    warn_kappa: float = 0.6
    fail_kappa: float = 0.4


@dataclass(frozen=True)
class Design(Record):
    """A validated design with its defaults filled in.

    ``to_dict()`` gives the canonical mapping (what is hashed): the optional fields that
    were not given are left out, so adding a new optional field to langchef later does not
    revoke every existing approval.
    """

    experiment: str
    hypothesis: str
    suite: str
    arms: Arms
    kind: str
    primary: str
    judge: Judge
    criteria: tuple[str, ...]
    alpha: float = 0.05
    power: float = 0.80
    bootstrap: Bootstrap = field(default_factory=Bootstrap)
    margin: float | None = None
    retrieval: Retrieval | None = None
    slices: Slices | None = None
    cluster: str | None = None
    guardrails: tuple[Guardrail, ...] = ()
    anchors: Anchors | None = None
    target_effect: float | None = None
    assumed_discordant_rate: float | None = None
    assumed_sd: float | None = None
    seeds: int | None = None

    def to_dict(self) -> dict:
        plain = {
            "experiment": self.experiment, "hypothesis": self.hypothesis, "suite": self.suite,
            "arms": self.arms.to_dict(), "kind": self.kind, "primary": self.primary,
            "judge": self.judge.to_dict(), "criteria": list(self.criteria),
            "alpha": self.alpha, "power": self.power, "bootstrap": self.bootstrap.to_dict(),
            "margin": self.margin,
            "retrieval": self.retrieval.to_dict() if self.retrieval else None,
            "slices": self.slices.to_dict() if self.slices else None,
            "cluster": self.cluster,
            "guardrails": [g.to_dict() for g in self.guardrails] or None,
            "anchors": self.anchors.to_dict() if self.anchors else None,
            "target_effect": self.target_effect,
            "assumed_discordant_rate": self.assumed_discordant_rate,
            "assumed_sd": self.assumed_sd, "seeds": self.seeds,
        }
        return _drop_none(plain)

    @property
    def canonical_json(self) -> str:
        return canonical_json(self.to_dict())

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.canonical_json.encode("utf-8")).hexdigest()

    @property
    def arm_names(self) -> tuple[str, str]:
        return (self.arms.baseline, self.arms.variant)

    @property
    def judge_id(self) -> str | None:
        """The id every upstream verdict must carry, when the design pins it directly."""
        return self.judge.id if self.judge.kind == "recorded" else None

    @property
    def primary_is_binary(self) -> bool:
        return self.primary in BINARY_METRICS


def canonical_json(value) -> str:
    """Sorted keys, no whitespace, NFC strings, normalised numbers; refuses NaN/infinity."""
    return json.dumps(_normalise(value), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False, allow_nan=False)


def design_sha256(design: Design) -> str:
    return design.sha256


def _normalise(value):
    if isinstance(value, dict):
        return {_nfc(str(key)): _normalise(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalise(item) for item in value]
    if isinstance(value, str):
        return _nfc(value)
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        number = float(value)
        # 1.0 and 1 are one value; beyond 2**53 floats are not exact integers any more.
        if number.is_integer() and abs(number) < 2**53:
            return int(number)
        return number
    raise TypeError(f"cannot serialise {type(value).__name__} in a design")


def _plain(value):
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _drop_none(mapping: dict) -> dict:
    return {key: value for key, value in mapping.items() if value is not None}


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


# --------------------------------------------------------------------------------------
# YAML with line numbers
# --------------------------------------------------------------------------------------

class _DesignLoader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema scalars (see the module docstring)."""


_REPLACED_TAGS = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
                  "tag:yaml.org,2002:timestamp"}
_DesignLoader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag not in _REPLACED_TAGS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_DesignLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_DesignLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^[-+]?[0-9]+$"), list("-+0123456789"))
_DesignLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
               r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+0123456789."))


def _construct_decimal_int(loader, node):
    # YAML 1.1 reads "010" as octal 8; in YAML 1.2 core (and to a person) it is ten.
    return int(loader.construct_scalar(node).replace("_", ""), 10)


_DesignLoader.add_constructor("tag:yaml.org,2002:int", _construct_decimal_int)


def _parse_yaml(text: str, file: str) -> tuple[object, dict]:
    """The document as plain values, plus the 1-based line of every key and list item."""
    loader = _DesignLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise DesignError("the file is empty", file=file, line=1,
                              hint="write the design as a YAML mapping (see `langchef init`)")
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or "not valid YAML"
        raise DesignError(f"not valid YAML ({problem})", file=file,
                          line=mark.line + 1 if mark else None,
                          hint="fix the indentation or quoting at that line") from None
    except (yaml.YAMLError, ValueError) as error:
        raise DesignError(f"not valid YAML ({error})", file=file) from None
    finally:
        loader.dispose()
    lines: dict[tuple, int] = {(): node.start_mark.line + 1}
    _record_lines(node, (), lines, file)
    return _normalise_text(data), lines


def _record_lines(node, path: tuple, lines: dict, file: str) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                raise DesignError("a key must be plain text", file=file, field=_dotted(path),
                                  line=line)
            key = _nfc(key_node.value)
            if key in seen and key != "<<":
                raise DesignError(f"key '{key}' appears twice (first on line {seen[key]})",
                                  file=file, field=_dotted(path + (key,)), line=line,
                                  hint="keep one of them")
            seen[key] = line
            lines[path + (key,)] = line
            _record_lines(value_node, path + (key,), lines, file)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[path + (index,)] = item.start_mark.line + 1
            _record_lines(item, path + (index,), lines, file)


def _normalise_text(value):
    if isinstance(value, dict):
        return {(_nfc(key) if isinstance(key, str) else key): _normalise_text(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [_normalise_text(item) for item in value]
    if isinstance(value, str):
        return _nfc(value)
    return value


def _dotted(path: tuple) -> str | None:
    if not path:
        return None
    text = ""
    for part in path:
        # List items are counted from 1, as a person reading the file counts them.
        text += f"[{part + 1}]" if isinstance(part, int) else ("." if text else "") + str(part)
    return text


# --------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------

class _Fields:
    """Reads one design, raising a DesignError that names the field and its line."""

    def __init__(self, file: str, lines: dict):
        self.file, self.lines = file, lines

    def error(self, path: tuple, message: str, hint: str | None = None) -> DesignError:
        return DesignError(message, file=self.file, field=_dotted(path),
                           line=self.line(path), hint=hint)

    def line(self, path: tuple) -> int | None:
        for end in range(len(path), -1, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return None

    def mapping(self, value, path: tuple, *, required=(), optional=(), closed=True,
                what="a mapping"):
        if not isinstance(value, dict):
            raise self.error(path, f"must be {what}, got {_shown(value)}",
                             hint="write it as 'key: value' lines indented under the field")
        known = tuple(required) + tuple(optional)
        for key in value:
            if not isinstance(key, str):
                raise self.error(path, f"key {key!r} must be text", hint="put it in quotes")
            if closed and key not in known:
                close = difflib.get_close_matches(key, known, n=1)
                hint = (f"did you mean '{close[0]}'?" if close
                        else "allowed here: " + ", ".join(known))
                raise self.error(path + (key,), "unknown field", hint=hint)
        for key in required:
            if key not in value or value[key] is None:
                given = key in value
                raise DesignError("has no value" if given else "missing required field",
                                  file=self.file, field=_dotted(path + (key,)),
                                  line=self.line(path + (key,) if given else path),
                                  hint=_REQUIRED_HINTS.get(key))
        return value

    def text(self, value, path: tuple, *, name_kind: str | None = None) -> str:
        if not isinstance(value, str):
            raise self.error(path, f"must be text, got {_shown(value)}", hint="put it in quotes")
        if not value.strip():
            raise self.error(path, "must not be empty")
        if name_kind and (not NAME_PATTERN.match(value) or ".." in value):
            raise self.error(path, f"{name_kind} name {value!r} is not allowed",
                             hint="use letters, digits, '-', '_' and '.', starting with a "
                                  "letter or digit")
        return value

    def choice(self, value, path: tuple, options) -> str:
        if not isinstance(value, str) or value not in options:
            raise self.error(path, f"unknown value {_shown(value)}",
                             hint="use one of: " + ", ".join(options))
        return value

    def number(self, value, path: tuple, *, low=None, high=None, low_open=True,
               high_open=True, hint=None, positive=False) -> float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise self.error(path, f"must be a number, got {_shown(value)}", hint=hint)
        number = float(value)
        if not math.isfinite(number):
            raise self.error(path, f"must be a finite number, got {value!r}", hint=hint)
        too_low = low is not None and (number <= low if low_open else number < low)
        too_high = high is not None and (number >= high if high_open else number > high)
        if too_low and positive:
            raise self.error(path, f"must be positive, got {_num(number)}", hint=hint)
        if too_low or too_high:
            left = "(" if low_open else "["
            right = ")" if high_open else "]"
            span = f"{left}{_num(low) if low is not None else '-inf'}, " \
                   f"{_num(high) if high is not None else 'inf'}{right}"
            raise self.error(path, f"must lie in {span}, got {_num(number)}", hint=hint)
        return number

    def whole(self, value, path: tuple, *, minimum: int, hint=None) -> int:
        # 1e4 is a natural way to write ten thousand; 10.5 is not a count.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise self.error(path, f"must be a whole number, got {_shown(value)}", hint=hint)
        if value < minimum:
            raise self.error(path, f"must be at least {minimum}, got {value}", hint=hint)
        return int(value)

    def text_list(self, value, path: tuple, *, options=None, allow_empty=False) -> tuple:
        if not isinstance(value, list):
            raise self.error(path, f"must be a list, got {_shown(value)}",
                             hint="write it as [a, b] or as '- a' lines")
        if not value and not allow_empty:
            raise self.error(path, "must not be empty")
        seen = set()
        for index, item in enumerate(value):
            if options is None:
                self.text(item, path + (index,))
            else:
                self.choice(item, path + (index,), options)
            if item in seen:
                raise self.error(path + (index,), f"{item!r} is listed twice",
                                 hint="list each name once")
            seen.add(item)
        return tuple(value)


_REQUIRED_HINTS = {
    "experiment": "write the experiment name, equal to the file name",
    "hypothesis": "state, in one sentence, what the variant is expected to change",
    "suite": "name the goldens suite (goldens/<suite>.jsonl)",
    "arms": "name the two arms as 'arms: {baseline: NAME, variant: NAME}'",
    "baseline": "name the arm compared against",
    "variant": "name the arm being tried",
    "kind": "write 'kind: superiority' or 'kind: non_inferiority'",
    "primary": "name the primary metric, e.g. 'primary: pass_rate'",
    "judge": "pin the judge, e.g. 'judge: {kind: recorded, id: my-judge-v1}'",
    "criteria": "list the judge criteria, e.g. 'criteria: [correctness, groundedness]'",
    "margin": "write the tolerated drop, e.g. 'margin: 0.03' for three points",
    "column": "name the goldens column that holds the slice",
    "metric": "use latency_ms or cost_usd",
    "statistic": "use mean, p50 or p95",
    "max_increase": "write the tolerated relative increase, e.g. 0.10",
    "set": "name the anchor set (anchors/<set>.jsonl)",
    "id": "a recorded judge needs the id its verdicts carry",
    "resamples": "e.g. 10000",
    "seed": "e.g. 0",
}

_TOP_REQUIRED = ("experiment", "hypothesis", "suite", "arms", "kind", "primary", "judge",
                 "criteria")
_TOP_OPTIONAL = ("alpha", "power", "bootstrap", "margin", "retrieval", "slices", "cluster",
                 "guardrails", "anchors", "target_effect", "assumed_discordant_rate",
                 "assumed_sd", "seeds")


def parse_design(text: str, *, file: str = "design", experiment: str | None = None) -> Design:
    """Validate a design given as YAML text; ``experiment`` is the name the file implies."""
    data, lines = _parse_yaml(text, file)
    return _validate(data, _Fields(file, lines), experiment)


def load_design(path: str | Path, *, label: str | None = None) -> Design:
    """Read and validate ``experiments/<experiment>.yaml``; the stem must equal ``experiment``."""
    path = Path(path)
    file = label or str(path)
    if not path.is_file():
        raise DesignError("design file not found", file=file,
                          hint="write it under experiments/ (see `langchef init`)")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise DesignError("the file is not UTF-8 text", file=file) from None
    return parse_design(text, file=file, experiment=path.stem)


def validate_design(mapping: dict, *, file: str = "design",
                    experiment: str | None = None) -> Design:
    """Validate a design built in Python (no line numbers to report)."""
    return _validate(_normalise_text(mapping), _Fields(file, {}), experiment)


def load_workspace_design(workspace: Workspace, experiment: str) -> Design:
    path = workspace.design_path(experiment)
    return load_design(path, label=workspace.relative(path))


def _validate(data, fields: _Fields, experiment: str | None) -> Design:
    top = fields.mapping(data, (), required=_TOP_REQUIRED, optional=_TOP_OPTIONAL,
                         what="a mapping of design fields")
    name = fields.text(top["experiment"], ("experiment",), name_kind="experiment")
    if experiment is not None and name != experiment:
        raise fields.error(("experiment",), f"says {name!r} but the file is named {experiment!r}",
                           hint=f"write 'experiment: {experiment}' or rename the file")
    kind = fields.choice(top["kind"], ("kind",), KINDS)
    primary = fields.choice(top["primary"], ("primary",), PRIMARY_METRICS)
    margin = _margin(top, fields, kind)
    retrieval = _retrieval(top.get("retrieval"), fields, primary)
    criteria = fields.text_list(top["criteria"], ("criteria",),
                                allow_empty=primary not in ("pass_rate",))
    return Design(
        experiment=name,
        hypothesis=fields.text(top["hypothesis"], ("hypothesis",)),
        suite=fields.text(top["suite"], ("suite",), name_kind="suite"),
        arms=_arms(top["arms"], fields),
        kind=kind,
        primary=primary,
        judge=_judge(top["judge"], fields),
        criteria=criteria,
        alpha=_optional(top, "alpha", 0.05, lambda v, p: fields.number(
            v, p, low=0, high=0.5, high_open=False, hint="the usual choice is 0.05")),
        power=_optional(top, "power", 0.80, lambda v, p: fields.number(
            v, p, low=0.5, high=1, hint="the usual choice is 0.80")),
        bootstrap=_bootstrap(top.get("bootstrap"), fields),
        margin=margin,
        retrieval=retrieval,
        slices=_slices(top.get("slices"), fields),
        cluster=_optional(top, "cluster", None, lambda v, p: fields.text(v, p)),
        guardrails=_guardrails(top.get("guardrails"), fields),
        anchors=_anchors(top.get("anchors"), fields),
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
    )


def _optional(top: dict, key: str, default, read):
    value = top.get(key)
    return default if value is None else read(value, (key,))


def _margin(top: dict, fields: _Fields, kind: str) -> float | None:
    if top.get("margin") is None:
        if kind == "non_inferiority":
            raise DesignError("required when kind is non_inferiority", file=fields.file,
                              field="margin", line=fields.line(("kind",)),
                              hint="write the tolerated drop, e.g. 'margin: 0.03' for three "
                                   "points")
        return None
    return fields.number(top["margin"], ("margin",), low=0, high=1, positive=True,
                         hint="write the tolerated drop as a positive share, e.g. 0.03")


def _arms(value, fields: _Fields) -> Arms:
    arms = fields.mapping(value, ("arms",), required=("baseline", "variant"))
    baseline = fields.text(arms["baseline"], ("arms", "baseline"), name_kind="arm")
    variant = fields.text(arms["variant"], ("arms", "variant"), name_kind="arm")
    if baseline == variant:
        raise fields.error(("arms", "variant"), f"is the same arm as the baseline ({baseline!r})",
                           hint="compare two different arms")
    return Arms(baseline, variant)


def _judge(value, fields: _Fields) -> Judge:
    path = ("judge",)
    if not isinstance(value, dict):
        raise fields.error(path, f"must be a mapping, got {_shown(value)}",
                           hint="e.g. 'judge: {kind: recorded, id: my-judge-v1}'")
    fields.mapping(value, path, required=("kind",), closed=False)
    kind = fields.choice(value["kind"], path + ("kind",), JUDGE_KINDS)
    judge_id = None
    if kind == "recorded":
        if value.get("id") is None:
            raise DesignError("missing required field", file=fields.file, field="judge.id",
                              line=fields.line(path + ("id",)) or fields.line(path),
                              hint=_REQUIRED_HINTS["id"])
        judge_id = fields.text(value["id"], path + ("id",))
    settings = {}
    for key, item in value.items():
        if key == "kind" or (key == "id" and kind == "recorded"):
            continue
        settings[key] = _loose_setting(item, path + (key,), fields)
    return Judge(kind, judge_id, settings)


def _loose_setting(value, path: tuple, fields: _Fields):
    """Judge settings are owned by the judge implementation: accept plain data, nothing else."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Real):
        return fields.number(value, path)
    if isinstance(value, list):
        return [_loose_setting(item, path + (index,), fields) for index, item in enumerate(value)]
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise fields.error(path, f"key {key!r} must be text", hint="put it in quotes")
        return {key: _loose_setting(item, path + (key,), fields) for key, item in value.items()}
    raise fields.error(path, f"must be text, a number, true/false, a list or a mapping, got "
                             f"{_shown(value)}")


def _bootstrap(value, fields: _Fields) -> Bootstrap:
    if value is None:
        return Bootstrap()
    path = ("bootstrap",)
    fields.mapping(value, path, optional=("resamples", "seed"))
    resamples = Bootstrap.resamples
    if value.get("resamples") is not None:
        resamples = fields.whole(value["resamples"], path + ("resamples",), minimum=MIN_RESAMPLES,
                                 hint="a percentile interval needs at least 1000 resamples; "
                                      "10000 is the default")
    seed = Bootstrap.seed
    if value.get("seed") is not None:
        seed = fields.whole(value["seed"], path + ("seed",), minimum=0)
    return Bootstrap(resamples, seed)


def _retrieval(value, fields: _Fields, primary: str) -> Retrieval | None:
    path = ("retrieval",)
    if value is None:
        # A retrieval primary needs retrieval settings; the defaults are spelled out so the
        # hash covers them.
        return Retrieval() if primary in RETRIEVAL_METRICS else None
    fields.mapping(value, path, optional=("k", "metrics", "zero_positive", "pool", "min_coverage"))
    k = 10 if value.get("k") is None else fields.whole(value["k"], path + ("k",), minimum=1)
    metrics = RETRIEVAL_METRICS
    if value.get("metrics") is not None:
        metrics = fields.text_list(value["metrics"], path + ("metrics",), options=RETRIEVAL_METRICS)
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


def _slices(value, fields: _Fields) -> Slices | None:
    if value is None:
        return None
    path = ("slices",)
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
            raise fields.error(weights_path, f"weights sum to {_num(total)}, not 1",
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


def _guardrails(value, fields: _Fields) -> tuple[Guardrail, ...]:
    if value is None:
        return ()
    path = ("guardrails",)
    if not isinstance(value, list):
        raise fields.error(path, f"must be a list, got {_shown(value)}",
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


def _anchors(value, fields: _Fields) -> Anchors | None:
    if value is None:
        return None
    path = ("anchors",)
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
                           f"{_num(anchors.fail_kappa)} is above warn_kappa "
                           f"{_num(anchors.warn_kappa)}",
                           hint="the failing agreement must not exceed the warning one")
    return anchors


def _shown(value) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"{str(value).lower()} (true/false)"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return repr(value)
    return f"{value!r} ({type(value).__name__})"


def _num(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


# --------------------------------------------------------------------------------------
# Power planning
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Shortfall(Record):
    """A target effect or margin below the run's detection limit, and what would reach it."""

    field: str
    value: float
    goldens_needed: int | None
    note: str


@dataclass(frozen=True)
class PowerPlan(Record):
    """What this design can detect with its suite, at an assumed discordant rate or spread.

    Binary primaries: limit = (z₁₋α/₂ + z_power) · √(U/n), U the Wilson upper bound of the
    assumed discordant rate (``langchef_core.stats.power.limit_at_rate``). Continuous
    (retrieval) primaries: limit = (z₁₋α/₂ + z_power) · sd/√n. ``underpowered`` is None
    when no limit could be computed (no goldens yet, or nothing to assume).
    """

    experiment: str
    primary: str
    scale: str  # "discordant_rate" (binary primary) or "sd" (continuous primary)
    n_goldens: int | None
    assumed: float | None
    source: str | None
    alpha: float
    power: float
    detection_limit: float | None
    target_effect: float | None
    margin: float | None
    underpowered: bool | None
    shortfalls: tuple[Shortfall, ...]
    sentence: str

    def underpowered_record(self) -> dict | None:
        """What an approval (and every readout) carries as its "underpowered" warning."""
        if not self.underpowered:
            return None
        return {"detection_limit": self.detection_limit, "n_goldens": self.n_goldens,
                "scale": self.scale, "assumed": self.assumed, "source": self.source,
                "shortfalls": [shortfall.to_dict() for shortfall in self.shortfalls],
                "sentence": self.sentence}


def plan_power(design: Design, n_goldens: int | None, *, assumed: float | None = None,
               source: str | None = None, missing: str | None = None) -> PowerPlan:
    """Detection limit of ``design`` on ``n_goldens`` at an ``assumed`` rate (or sd).

    ``assumed`` defaults to the design's own ``assumed_discordant_rate`` (binary primary)
    or ``assumed_sd`` (retrieval primary). ``missing`` explains a missing goldens count.
    """
    binary = design.primary_is_binary
    scale = "discordant_rate" if binary else "sd"
    if assumed is None:
        assumed = design.assumed_discordant_rate if binary else design.assumed_sd
        source = f"design field 'assumed_{scale}'" if assumed is not None else None
    elif source is None:
        source = "given"
    common = dict(experiment=design.experiment, primary=design.primary, scale=scale,
                  n_goldens=n_goldens, assumed=assumed, source=source, alpha=design.alpha,
                  power=design.power, target_effect=design.target_effect, margin=design.margin)
    if n_goldens is None or n_goldens == 0 or assumed is None:
        reason = missing if n_goldens is None else ("the suite has no goldens"
                                                    if n_goldens == 0 else None)
        if reason is None:
            what = "assumed_discordant_rate" if binary else "assumed_sd"
            reason = (f"no {scale.replace('_', ' ')} to plan with: set {what} in the design "
                      "or read out an experiment on the same suite first")
        return PowerPlan(**common, detection_limit=None, underpowered=None, shortfalls=(),
                         sentence=f"detection limit unknown: {reason}")
    if binary:
        limit = limit_at_rate(n_goldens, assumed, alpha=design.alpha, power=design.power)
    else:
        limit = continuous_detection_limit(assumed, n_goldens, alpha=design.alpha,
                                           power=design.power)
    shortfalls = tuple(_shortfall(design, name, value, assumed, binary)
                       for name, value in (("target_effect", design.target_effect),
                                           ("margin", design.margin))
                       if value is not None and value < limit)
    measure = "pass-rate difference" if binary else f"difference in mean {design.primary}"
    sentence = (f"with {n_goldens} goldens and an assumed {scale.replace('_', ' ')} of "
                f"{assumed:g} ({source}), the smallest {measure} this design can detect is "
                f"{limit:.4g} (alpha {design.alpha:g}, power {design.power:g})")
    if shortfalls:
        sentence += "; UNDERPOWERED: " + "; ".join(item.note for item in shortfalls)
    return PowerPlan(**common, detection_limit=limit, underpowered=bool(shortfalls),
                     shortfalls=shortfalls, sentence=sentence)


def _shortfall(design: Design, name: str, value: float, assumed: float, binary: bool) -> Shortfall:
    try:
        if binary:
            needed = goldens_needed(value, assumed, alpha=design.alpha, power=design.power)
        else:
            needed = goldens_needed_continuous(value, assumed, alpha=design.alpha,
                                               power=design.power)
    except ValueError as error:
        return Shortfall(name, value, None, f"{name} {value:g} is below the limit and no "
                                            f"number of goldens reaches it ({error})")
    return Shortfall(name, value, needed, f"{name} {value:g} is below the limit; reaching it "
                                          f"needs about {needed} goldens")


def count_goldens(workspace: Workspace, suite: str) -> int | None:
    """Distinct goldens in ``goldens/<suite>``; None when the suite file does not exist yet."""
    from ..inputs.tables import read_table

    path = workspace.goldens_path(suite)
    if not path.exists():
        return None
    frame = read_table(path, label=workspace.relative(path))
    if "example_id" not in frame.columns:
        raise InputError("missing column", file=workspace.relative(path), column="example_id",
                         hint="give every golden a unique example_id")
    return int(frame["example_id"].nunique())


@dataclass(frozen=True)
class MeasuredAssumption(Record):
    value: float
    source: str


def measured_assumption(workspace: Workspace, design: Design) -> MeasuredAssumption | None:
    """The discordant rate (or sd) seen in the latest readout of the same suite and metric.

    Latest by the time the readout was taken (its ``created_at``, else its version's
    ``manifest.json``), then by experiment name and version.

    Binary: (broke + fixed) / n of that readout's primary comparison. Continuous: the sd of
    per-golden differences recovered from the reported limit, sd = limit · √n / (z₁₋α/₂ +
    z_power), the inverse of ``continuous_detection_limit``. Readouts that cannot be read
    are passed over: they are evidence for planning only, and the gate reads them itself.
    """
    candidates = []
    for path in sorted(workspace.reports.glob("*/v*/readout.json")):
        readout = _readable_json(path)
        if readout is None or not _same_suite(workspace, readout, design.suite):
            continue
        primary = readout.get("primary")
        if not isinstance(primary, dict) or primary.get("metric") != design.primary:
            continue
        value = _assumption_from(primary, design.primary_is_binary)
        if value is None:
            continue
        taken = _taken_at(path, readout)
        version = readout.get("version") if isinstance(readout.get("version"), int) else 0
        candidates.append(((taken, str(readout.get("experiment")), version),
                           MeasuredAssumption(value, f"measured in {workspace.relative(path)}")))
    return max(candidates, key=lambda pair: pair[0])[1] if candidates else None


def _taken_at(path: Path, readout: dict) -> str:
    """When a readout was taken: its own field if any, else its version's manifest.json
    (the readout document itself carries no clock, so that re-runs are byte-identical)."""
    manifest = _readable_json(path.parent / "manifest.json") or {}
    for value in (readout.get("created_at"), readout.get("taken_at"), manifest.get("created_at")):
        if isinstance(value, str) and value:
            return value
    return ""


def _readable_json(path: Path) -> dict | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _same_suite(workspace: Workspace, readout: dict, suite: str) -> bool:
    design = readout.get("design")
    if isinstance(design, dict) and isinstance(design.get("suite"), str):
        return design["suite"] == suite
    name = readout.get("experiment")
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        return False
    try:
        return load_workspace_design(workspace, name).suite == suite
    except InputError:
        return False


def _assumption_from(primary: dict, binary: bool) -> float | None:
    def real(key):
        value = primary.get(key)
        finite = (isinstance(value, numbers.Real) and not isinstance(value, bool)
                  and math.isfinite(value))
        return float(value) if finite else None

    n = real("n")
    if not n or n < 1:
        return None
    if binary:
        broke, fixed = real("broke"), real("fixed")
        if broke is None or fixed is None or broke + fixed > n:
            return None
        return (broke + fixed) / n
    limit, alpha, power = real("detection_limit"), real("alpha"), real("power")
    if limit is None or alpha is None or power is None or not 0 < alpha < 1 or not 0 < power < 1:
        return None
    sd = limit * math.sqrt(n) / z_multiplier(alpha, power)
    return sd if sd > 0 else None


def assess_power(workspace: Workspace, design: Design) -> PowerPlan:
    """The power plan `langchef design check` prints and `langchef approve` records.

    Goldens are counted from the suite file; the assumed rate is the design's field, else
    the one measured in the latest readout of the same suite.
    """
    n = count_goldens(workspace, design.suite)
    missing = None
    if n is None:
        missing = (f"{workspace.relative(workspace.goldens_path(design.suite))} does not exist "
                   "yet, so the number of goldens is unknown")
    explicit = design.assumed_discordant_rate if design.primary_is_binary else design.assumed_sd
    if explicit is None:
        measured = measured_assumption(workspace, design)
        if measured is not None:
            return plan_power(design, n, assumed=measured.value, source=measured.source,
                              missing=missing)
    return plan_power(design, n, missing=missing)
