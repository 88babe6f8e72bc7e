"""An LLM judge behind any OpenAI-compatible chat-completions endpoint, on aiohttp's client.

For each item it sends ``POST {base_url}/chat/completions`` with the model, a system and a
user message rendered from a versioned prompt template, and the temperature (0 unless the
design says otherwise). The reply's ``choices[0].message.content`` must be one JSON object

    {"verdict": "pass" | "fail", "criterion": <one design criterion, or null on a pass>,
     "rationale": "<one sentence>"}

(a Markdown code fence around it is tolerated; a criterion on a pass is dropped). With
``response_format: json_schema`` in the design the request also carries that object's JSON
schema (``response_format: {"type": "json_schema", ...}``, strict), for servers that constrain
decoding to it (OpenAI, vLLM, llama.cpp server, Ollama); the reply is parsed the same way.

The client (``http_session.py``; replies are read in ``replies.py``) is one
``aiohttp.ClientSession`` per run, on an event loop of its own inside ``run``
(a private thread when the caller already runs a loop): a keep-alive connection pool bounded
by the in-flight ceiling, redirects never followed and ``trust_env=False`` (proxy variables
and .netrc cannot reroute the key). A few hundred requests in flight cost one thread, not a
few hundred, and about 0.3 ms of CPU each (httpx's AsyncClient, tried first, cost 2-6 ms:
README "The LLM judge's client").

Failure handling, in the order a call meets it:

- **Transient failures** (HTTP 429, any 5xx, a timeout, a refused or dropped connection)
  are retried up to ``max_retries`` times by tenacity with exponential backoff
  ``min(max_backoff_s, backoff_s · 2^(attempt − 1))`` (the first retry waits ``backoff_s``);
  a ``Retry-After`` header (seconds or an HTTP date) lengthens the wait to what the server
  asked, capped at ``max_backoff_s`` so a server cannot park the run for an hour. Other
  HTTP errors (400, 401, 404, any 3xx …) are not retried: repeating them cannot help, and
  the error names the status and the reply.
- **Overload** (HTTP 429 or 503) also counts against the in-flight limit: more than a
  quarter of a window refused halves it, a window within that raises it by one, up to
  ``max_concurrency`` (``concurrency.py``: AIMD), so one ceiling suits every provider.
- **Malformed replies** (not JSON, wrong fields, a fail without a criterion, a criterion
  the design does not name) are asked again ``malformed_retries`` times (default once):
  sampling can truncate or wrap a reply once, but a judge that keeps answering in the wrong
  shape is misconfigured, and the error then names the example and quotes the reply.
- **The call budget** ``max_calls`` counts every HTTP attempt, retries included, per run.
  Before the first call the run counts the items the cache cannot answer; if that alone
  exceeds the budget it refuses to start and says how many calls were needed. If retries
  use the budget up mid-run it stops and says so; the verdicts already obtained are cached.
- **The first failure** stops the run: queued items are not sent, waits are cut short, and
  the error of the earliest item (in input order) is raised.
- **The verdict cache** (SQLite or PostgreSQL, see ``cache.py``) is keyed by (judge id,
  SHA-256 of the item content). Identical items inside one run are judged once, and
  re-judging the same answers with the same judge makes no call at all.

``run`` reports what judging cost (``JudgeUsage``: calls, cache hits, retries, 429s, the
prompt and completion tokens of each reply's ``usage``, wall seconds) and, given a
``progress`` callback, calls it with a ``JudgingProgress`` as items complete.

Secrets stay with the operator (``endpoints.py``): the key comes from ``LANGCHEF_JUDGE_API_KEY``,
the design's ``base_url`` must be on the operator's allow-list before any request is made, and
redirects are never followed, so an allowed endpoint cannot bounce the key elsewhere. An
operator serving Azure OpenAI sets ``LANGCHEF_JUDGE_AZURE_API_VERSION``: the request then goes
to ``{base_url}/chat/completions?api-version=…`` with an ``api-key`` header instead of a
bearer token.

The judge id covers the model, the full prompt template text, the criteria and their
descriptions, the temperature, ``CODE_VERSION`` and, only when enabled, the response format;
the endpoint address, API key, concurrency, budget, timeouts and retry settings do not enter
it (they change how verdicts are obtained, not what they are). Serving different weights under
one model name at two addresses is therefore one judge to langchef: give them different model
names.
"""

import functools
import numbers
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

from .base import Item, Judge, Judgement, JudgeUsage, as_items, judge_id, verdict_frame
from .cache import CachedVerdict, open_verdict_cache
from .endpoints import check_transport, without_credentials
from .http_session import Session, Tracker, run_coroutine
from .prompts import (CRITERION_DESCRIPTIONS, JSON_SCHEMA, PROMPT_ONLY, PROMPT_TEMPLATES,
                      RESPONSE_FORMATS)
from .replies import (JudgeBudgetError, JudgeEndpointError, JudgeReplyError, JudgingProgress,
                      parse_verdict, read_reply, verdict_schema)

__all__ = ["CODE_VERSION", "KIND", "JudgeBudgetError", "JudgeEndpointError", "JudgeReplyError",
           "JudgingProgress", "OpenAICompatibleJudge", "parse_verdict", "verdict_schema"]

KIND = "openai_compatible"
# Bump when request building or reply parsing changes in a way that can move a verdict.
CODE_VERSION = 1


@dataclass(frozen=True)
class OpenAICompatibleJudge(Judge):
    """LLM judge over ``POST {base_url}/chat/completions`` (see the module doc)."""

    base_url: str
    model: str
    criteria: tuple[str, ...]
    descriptions: tuple[str, ...] = ()      # one per criterion; defaults where known
    prompt_version: str = "v1"
    temperature: float = 0.0
    max_concurrency: int = 4
    max_calls: int | None = None
    timeout_s: float = 30.0
    max_retries: int = 4
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    malformed_retries: int = 1
    response_format: str = PROMPT_ONLY
    cache_path: str | os.PathLike | None = field(default=None, compare=False)
    # Called with a JudgingProgress as items complete (a CLI's progress line); not a setting.
    progress: Callable[[JudgingProgress], None] | None = field(default=None, compare=False,
                                                              repr=False)
    kind = KIND

    def __post_init__(self):
        for name in ("criteria", "descriptions"):
            if isinstance(getattr(self, name), list):
                object.__setattr__(self, name, tuple(getattr(self, name)))
        for name in ("max_concurrency", "max_calls", "max_retries", "malformed_retries"):
            value = getattr(self, name)
            if isinstance(value, float) and value.is_integer():
                # The design reader hands every YAML number over as a float: 4.0 means 4.
                object.__setattr__(self, name, int(value))
        _check_settings(self)
        if not self.descriptions:
            object.__setattr__(self, "descriptions", tuple(
                CRITERION_DESCRIPTIONS.get(name, "as the design defines it")
                for name in self.criteria))

    @functools.cached_property
    def id(self) -> str:
        template = PROMPT_TEMPLATES[self.prompt_version]
        identity = {
            "code_version": CODE_VERSION, "model": self.model,
            "prompt_version": self.prompt_version,
            "prompt": {"system": template.system, "user": template.user},
            "criteria": [[name, text] for name, text in zip(self.criteria, self.descriptions)],
            "temperature": float(self.temperature),
        }
        if self.response_format != PROMPT_ONLY:
            # Constrained decoding can change what the model answers; the default stays out so
            # every judge pinned before this setting existed keeps its id and its cache.
            identity["response_format"] = self.response_format
        return judge_id(KIND, identity)

    @property
    def endpoint(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def describe(self) -> dict:
        return {"kind": KIND, "id": self.id, "model": self.model,
                "base_url": without_credentials(self.base_url),
                "prompt_version": self.prompt_version, "temperature": float(self.temperature),
                "criteria": list(self.criteria), "max_concurrency": self.max_concurrency,
                "max_calls": self.max_calls,
                **({"response_format": self.response_format}
                   if self.response_format != PROMPT_ONLY else {})}

    def run(self, items: pd.DataFrame, *, source: str | None = None,
            progress: Callable[[JudgingProgress], None] | None = None) -> Judgement:
        """Judge every row; ``progress`` (or the judge's own) hears of each completed item."""
        started = time.perf_counter()
        parsed = as_items(items, source=source)
        keys = [item.content_sha256() for item in parsed]
        cache = open_verdict_cache(self.cache_path) if self.cache_path is not None else None
        try:
            return self._run(parsed, keys, cache, items.index, progress or self.progress,
                             started)
        finally:
            if cache is not None:
                cache.close()

    def _run(self, parsed: list[Item], keys: list[str], cache, index, progress,
             started: float) -> Judgement:
        known = cache.get_many(self.id, keys) if cache is not None else {}
        pending: dict[str, Item] = {}
        for key, item in zip(keys, parsed):
            if key not in known:
                pending.setdefault(key, item)  # identical content is judged once
        if self.max_calls is not None and len(pending) > self.max_calls:
            raise JudgeBudgetError(
                f"judging these {len(parsed)} items needs at least {len(pending)} endpoint "
                f"calls ({len(parsed) - sum(key not in known for key in keys)} answered from "
                f"the verdict cache), but the per-run budget max_calls is {self.max_calls}; "
                f"raise max_calls in the design's judge or judge fewer items",
                needed=len(pending), budget=self.max_calls, used=0)
        hits = sum(key in known for key in keys)
        tracker = Tracker(progress, keys, hits, started) if progress is not None else None
        # The key is needed only to call: a run the cache answers reads no key, checks no list.
        session = Session(self, cache, tracker.tick if tracker else None) if pending else None
        if tracker is not None:
            tracker.session = session
            tracker.report()
        fresh = run_coroutine(session.judge_all(pending)) if session is not None else {}
        verdicts = {**known, **fresh}
        rows = [{"example_id": item.example_id, "verdict": verdicts[key].verdict,
                 "criterion": verdicts[key].criterion, "judge": self.id,
                 "rationale": verdicts[key].rationale} for key, item in zip(keys, parsed)]
        usage = JudgeUsage(items=len(parsed), cache_hits=hits,
                           seconds=time.perf_counter() - started,
                           **(session.usage() if session is not None else {}))
        return Judgement(verdict_frame(rows, index), usage)

    def messages(self, item: Item) -> list[dict]:
        """The chat messages for one item: the version's template with the criteria listed."""
        block = "\n".join(f"- {name}: {text}"
                          for name, text in zip(self.criteria, self.descriptions))
        return PROMPT_TEMPLATES[self.prompt_version].render(item, block)

    def parse_reply(self, body: bytes | str, example_id: str) -> CachedVerdict:
        """The verdict in a chat-completions response body, or a ``JudgeReplyError``."""
        return read_reply(self, body, example_id)

    def request_body(self, item: Item) -> dict:
        """The chat-completions request for one item (``response_format`` when asked for)."""
        body = {"model": self.model, "messages": self.messages(item),
                "temperature": float(self.temperature)}
        if self.response_format == JSON_SCHEMA:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "langchef_verdict", "strict": True, "schema": verdict_schema(self.criteria)}}
        return body


def _check_settings(judge: OpenAICompatibleJudge) -> None:
    """Refuse each bad setting with the design key to fix."""
    if not isinstance(judge.base_url, str):
        raise ValueError(f"base_url must be an http(s) URL such as https://api.openai.com/v1, "
                         f"got {judge.base_url!r}")
    try:
        check_transport(judge.base_url)
    except ValueError as error:
        raise ValueError(f"base_url {error}, got {judge.base_url!r}") from None
    if not isinstance(judge.model, str) or not judge.model.strip():
        raise ValueError(f"model must name the judge model, got {judge.model!r}")
    if judge.prompt_version not in PROMPT_TEMPLATES:
        raise ValueError(f"unknown prompt_version {judge.prompt_version!r}; this langchef has "
                         f"{sorted(PROMPT_TEMPLATES)}")
    names = judge.criteria
    if not isinstance(names, tuple) or not names or \
            not all(isinstance(name, str) and name.strip() for name in names) or \
            len({name.lower() for name in names}) != len(names):
        raise ValueError("an LLM judge needs the design's criteria: distinct, non-empty names "
                         f"(they go into the prompt), got {names!r}")
    if judge.descriptions and len(judge.descriptions) != len(names):
        raise ValueError("give one description per criterion")
    _number(judge.temperature, "temperature", low=0.0, high=2.0)
    _whole(judge.max_concurrency, "max_concurrency", low=1)
    if judge.max_calls is not None:
        _whole(judge.max_calls, "max_calls", low=0)
    _number(judge.timeout_s, "timeout_s", low=0.0, strict=True)
    _whole(judge.max_retries, "max_retries", low=0)
    _number(judge.backoff_s, "backoff_s", low=0.0)
    _number(judge.max_backoff_s, "max_backoff_s", low=0.0)
    _whole(judge.malformed_retries, "malformed_retries", low=0)
    if judge.response_format not in RESPONSE_FORMATS:
        raise ValueError(f"response_format must be one of {list(RESPONSE_FORMATS)} "
                         f"({JSON_SCHEMA!r} asks the server for a reply that follows the "
                         f"verdict's JSON schema; {PROMPT_ONLY!r}, the default, relies on the "
                         f"prompt alone), got {judge.response_format!r}")


def _number(value, name, *, low, high=None, strict=False) -> None:
    ok = not isinstance(value, bool) and isinstance(value, numbers.Real) and value == value
    ok = ok and (value > low if strict else value >= low) and (high is None or value <= high)
    if not ok:
        bound = f"greater than {low}" if strict else f"at least {low}"
        bound += f" and at most {high}" if high is not None else ""
        raise ValueError(f"{name} must be a number {bound}, got {value!r}")


def _whole(value, name, *, low) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be a whole number of at least {low}, got {value!r}")
