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

This module holds the model (the frozen records and the allowed values) and the canonical
form; reading YAML is in ``yaml_source``, validation in ``parse``, and planning the size
of a run in ``power_plan``.
"""

from __future__ import annotations

import hashlib
import json
import numbers
import unicodedata
from dataclasses import dataclass, field

from ..inputs.errors import InputError
from ..stats.records import Record

KINDS = ("superiority", "non_inferiority")
RETRIEVAL_METRICS = ("recall", "recall_normalized", "precision", "hit", "reciprocal_rank", "ndcg")
BINARY_METRICS = ("pass_rate", "accuracy")
# A judge's continuous score per golden (an imported scorer's numeric value)
SCORE_METRICS = ("score",)
PRIMARY_METRICS = BINARY_METRICS + RETRIEVAL_METRICS + SCORE_METRICS
JUDGE_KINDS = ("recorded", "rubric", "openai_compatible", "imported")
ZERO_POSITIVE = ("exclude", "zero", "separate")
POOL_KINDS = ("full", "sampled", "hard_negative")
GUARDRAIL_METRICS = ("latency_ms", "cost_usd")
GUARDRAIL_STATISTICS = ("mean", "p50", "p95")
MIN_RESAMPLES = 1000
# The documented range of bootstrap.resamples: more buys no visible precision and can
# exhaust memory on a large suite.
MAX_RESAMPLES = 100_000
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
class GateOptions(Record):
    """``gate: {strict: true}``: the gate also fails when a proof is missing — traffic time
    that cannot be verified, a sampled pool nobody wrote down, a repeated look."""

    strict: bool = False


STOPPING_RULES = ("fixed", "sequential")
# A confidence sequence needs a few goldens before its first bound means anything, and a
# budget below this cannot stop "early" in any useful sense.
MIN_MAX_GOLDENS = 20


@dataclass(frozen=True)
class Stopping(Record):
    """``stopping: {rule: sequential, max_goldens: N, order: created_at}``: goldens are read
    in the traffic order the goldens column ``order`` gives, a readout may be taken at any
    look before ``max_goldens``, and the verdict comes from an always-valid confidence
    sequence (langchef_core.stats.sequential). ``rule: fixed`` is the default and is kept
    as no ``stopping`` at all, so fixed-n designs hash as they always did."""

    rule: str
    max_goldens: int
    order: str = "created_at"


# The warnings a strict gate turns into failures: each is a proof the readout lacks.
STRICT_PROOFS = {
    "traffic_unverified": "traffic time unverifiable",
    "pool_unproven": "sampled pool unproven",
    "repeated_look": "repeated look at changed data",
}


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
    judge: Judge | None      # None: no judge decides (accuracy and retrieval designs)
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
    gate: GateOptions | None = None
    stopping: Stopping | None = None   # None: fixed n, one readout after every golden

    def to_dict(self) -> dict:
        plain = {
            "experiment": self.experiment, "hypothesis": self.hypothesis, "suite": self.suite,
            "arms": self.arms.to_dict(), "kind": self.kind, "primary": self.primary,
            "judge": self.judge.to_dict() if self.judge is not None else None,
            # Left out only with the judge: designs written when both were required keep
            # their hash (and their approval).
            "criteria": list(self.criteria) if self.judge is not None or self.criteria
            else None,
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
            "gate": self.gate.to_dict() if self.gate is not None else None,
            "stopping": self.stopping.to_dict() if self.stopping is not None else None,
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
        return self.judge.id if self.judge is not None and self.judge.kind == "recorded" \
            else None

    @property
    def judge_kind(self) -> str | None:
        return self.judge.kind if self.judge is not None else None

    def criterion_named(self, cited) -> str | None:
        """The design's spelling of a cited criterion (case ignored), or None if unknown."""
        if not isinstance(cited, str):
            return None
        key = cited.strip().casefold()
        return next((name for name in self.criteria if name.strip().casefold() == key), None)

    @property
    def strict_gate(self) -> bool:
        return self.gate is not None and self.gate.strict

    @property
    def sequential(self) -> bool:
        return self.stopping is not None and self.stopping.rule == "sequential"

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
        return {nfc(str(key)): _normalise(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalise(item) for item in value]
    if isinstance(value, str):
        return nfc(value)
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


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)
