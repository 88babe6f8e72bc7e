"""View model of where a readout came from: the judge and its anchors, the goldens that
changed, the design as approved, input fingerprints and warnings."""

from __future__ import annotations

from dataclasses import dataclass

from .filters import as_json
from .view_common import (DRIFT_LEVEL_WORDS, WARNING_TITLES, as_sentence, cell_text, need_field,
                          text_or_none)


@dataclass(frozen=True)
class DriftView:
    became_wrong: int
    became_right: int
    p_value: float | None
    kappa_then: float | None
    kappa_now: float | None
    kappa_change: float | None
    kappa_change_low: float | None
    kappa_change_high: float | None
    significant: bool


@dataclass(frozen=True)
class AnchorsView:
    set: str | None
    set_sha256: str | None
    judge_id: str | None
    n: int
    kappa: float | None
    kappa_low: float | None
    kappa_high: float | None
    kappa_undefined: str | None
    observed: float | None
    caught: float | None            # share of the reviewers' failures the judge failed too
    caught_k: int | None
    caught_n: int | None
    passed_right: float | None      # share of the reviewers' passes the judge passed too
    level: str | None
    level_word: str | None
    meaning: str | None
    reasons: tuple[str, ...]
    drift: DriftView | None
    compared_with: str | None       # the judge id of the earlier run the drift test used
    length_warning: str | None      # set when the judge seems to let longer failures through


@dataclass(frozen=True)
class JudgeView:
    id: str | None
    kind: str | None
    settings: tuple[tuple[str, str], ...]
    anchors: AnchorsView | None

    @property
    def shown(self) -> bool:
        """Only a readout a judge took part in has a judge to show (accuracy and
        retrieval readouts are scored without one)."""
        return self.id is not None or self.anchors is not None


@dataclass(frozen=True)
class ChangedGolden:
    example_id: str
    input: str | None
    ideal: str | None
    baseline_output: str | None
    variant_output: str | None
    baseline_criterion: str | None
    variant_criterion: str | None
    baseline_rationale: str | None
    variant_rationale: str | None


@dataclass(frozen=True)
class GoldensView:
    broke: tuple[ChangedGolden, ...]
    fixed: tuple[ChangedGolden, ...]
    broke_total: int | None
    fixed_total: int | None


@dataclass(frozen=True)
class DesignView:
    sha256: str | None
    approved_by: str | None
    approved_at: str | None
    kind: str | None
    primary: str | None
    suite: str | None
    alpha: float | None
    power: float | None
    margin: float | None
    margin_unit: str
    resamples: int | None
    seed: int | None
    criteria: tuple[str, ...]
    as_approved: str | None


@dataclass(frozen=True)
class InputFile:
    path: str
    rows: int | None
    sha256: str | None


@dataclass(frozen=True)
class Provenance:
    inputs_sha256: str | None
    files: tuple[InputFile, ...]
    traffic_verified: bool | None
    traffic_sentence: str | None
    look_number: int | None
    repeated_look: bool | None


@dataclass(frozen=True)
class WarningView:
    code: str
    title: str
    sentence: str


def judge_view(section) -> JudgeView:
    settings = section.get("settings") or {}
    # kind and id have their own rows; the pipeline's settings repeat them
    shown = tuple((str(key), value if isinstance(value, str) else as_json(value))
                  for key, value in sorted(settings.items()) if key not in ("kind", "id"))
    return JudgeView(id=section.get("id"), kind=section.get("kind"), settings=shown,
                     anchors=_anchors(section.get("anchors")))


def _anchors(section) -> AnchorsView | None:
    if not section:
        return None
    agreement = section.get("agreement") or {}
    status = section.get("status") or {}
    drift = section.get("drift")
    tpr, tnr, observed = (agreement.get(key) or {} for key in ("tpr", "tnr", "observed"))
    level_key = status.get("level")
    earlier = section.get("compared_with") or {}
    length = section.get("length_bias") or {}
    return AnchorsView(
        set=section.get("anchor_set", section.get("set")),
        set_sha256=section.get("anchor_set_sha256"), judge_id=section.get("judge_id"),
        n=int(agreement.get("n", 0)), kappa=agreement.get("kappa"),
        kappa_low=agreement.get("kappa_low"), kappa_high=agreement.get("kappa_high"),
        kappa_undefined=agreement.get("kappa_undefined"), observed=observed.get("value"),
        caught=tpr.get("value"), caught_k=tpr.get("k"), caught_n=tpr.get("n"),
        passed_right=tnr.get("value"), level=level_key,
        level_word=DRIFT_LEVEL_WORDS.get(level_key, level_key) if level_key else None,
        meaning=status.get("meaning"), reasons=tuple(status.get("reasons") or ()),
        drift=DriftView(
            became_wrong=int(drift.get("became_wrong", 0)),
            became_right=int(drift.get("became_right", 0)), p_value=drift.get("p_value"),
            kappa_then=drift.get("kappa_then"), kappa_now=drift.get("kappa_now"),
            kappa_change=drift.get("kappa_change"), kappa_change_low=drift.get("kappa_change_low"),
            kappa_change_high=drift.get("kappa_change_high"),
            significant=bool(drift.get("significant"))) if drift else None,
        compared_with=earlier.get("judge_id"),
        length_warning=length.get("warning") if length.get("significant") else None)


def goldens_view(readout, primary) -> GoldensView:
    return GoldensView(
        broke=tuple(_changed(entry) for entry in readout.get("broke") or ()),
        fixed=tuple(_changed(entry) for entry in readout.get("fixed") or ()),
        broke_total=primary.get("broke"), fixed_total=primary.get("fixed"))


def _changed(entry) -> ChangedGolden:
    return ChangedGolden(
        example_id=text_or_none(need_field(entry, "example_id", "broke/fixed entry")),
        input=cell_text(entry.get("input")), ideal=cell_text(entry.get("ideal")),
        baseline_output=cell_text(entry.get("baseline_output")),
        variant_output=cell_text(entry.get("variant_output")),
        baseline_criterion=text_or_none(entry.get("baseline_criterion")),
        variant_criterion=text_or_none(entry.get("variant_criterion")),
        baseline_rationale=cell_text(entry.get("baseline_rationale")),
        variant_rationale=cell_text(entry.get("variant_rationale")))


def design_view(design, unit) -> DesignView:
    bootstrap = design.get("bootstrap") or {}
    as_approved = design.get("as_approved")
    return DesignView(
        sha256=design.get("sha256"), approved_by=design.get("approved_by"),
        approved_at=design.get("approved_at"), kind=design.get("kind"),
        primary=design.get("primary"), suite=design.get("suite"), alpha=design.get("alpha"),
        power=design.get("power"), margin=design.get("margin"), margin_unit=unit,
        resamples=bootstrap.get("resamples"), seed=bootstrap.get("seed"),
        criteria=tuple(str(c) for c in design.get("criteria") or ()),
        as_approved=as_json(as_approved) if as_approved is not None else None)


def provenance_view(readout) -> Provenance:
    inputs = readout.get("inputs") or {}
    files = inputs.get("files") or {}
    traffic = readout.get("traffic") or {}
    looks = readout.get("looks") or {}
    return Provenance(
        inputs_sha256=inputs.get("sha256"),
        files=tuple(InputFile(path=str(path), rows=(files[path] or {}).get("rows"),
                              sha256=(files[path] or {}).get("sha256")) for path in sorted(files)),
        traffic_verified=traffic.get("verified"), traffic_sentence=traffic.get("sentence"),
        look_number=looks.get("look_number"), repeated_look=looks.get("repeated"))


def warning_view(entry) -> WarningView:
    code = str(need_field(entry, "code", "warnings[]"))
    title = WARNING_TITLES.get(code, code.replace("_", " ").capitalize())
    return WarningView(code=code, title=title, sentence=as_sentence(entry.get("sentence") or ""))
