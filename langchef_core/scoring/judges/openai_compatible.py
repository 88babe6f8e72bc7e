"""An LLM judge behind any OpenAI-compatible chat-completions endpoint (standard library only).

For each item it sends ``POST {base_url}/chat/completions`` with the model, a system and a
user message rendered from a versioned prompt template, and the temperature (0 unless the
design says otherwise). The reply's ``choices[0].message.content`` must be one JSON object

    {"verdict": "pass" | "fail", "criterion": <one design criterion, or null on a pass>,
     "rationale": "<one sentence>"}

(a Markdown code fence around it is tolerated; a criterion on a pass is dropped).

Failure handling, in the order a call meets it:

- **Transient failures** (HTTP 429, any 5xx, a timeout, a refused or dropped connection)
  are retried up to ``max_retries`` times with exponential backoff
  ``min(max_backoff_s, backoff_s · 2^attempt)``; a ``Retry-After`` header (seconds or an
  HTTP date) lengthens the wait to what the server asked, capped at ``max_backoff_s`` so a
  server cannot park the run for an hour. Other HTTP errors (400, 401, 404 …) are not
  retried: repeating them cannot help, and the error names the status and the reply.
- **Malformed replies** (not JSON, wrong fields, a fail without a criterion, a criterion
  the design does not name) are asked again ``malformed_retries`` times (default once):
  sampling can truncate or wrap a reply once, but a judge that keeps answering in the wrong
  shape is misconfigured, and the error then names the example and quotes the reply.
- **The call budget** ``max_calls`` counts every HTTP attempt, retries included, per run.
  Before the first call the run counts the items the cache cannot answer; if that alone
  exceeds the budget it refuses to start and says how many calls were needed. If retries
  use the budget up mid-run it stops and says so; the verdicts already obtained are cached.
- **Concurrency** is bounded by a thread pool of ``max_concurrency`` workers, so at most
  that many requests are in flight at once.
- **The verdict cache** (SQLite, see ``cache.py``) is keyed by (judge id, SHA-256 of the
  item content). Identical items inside one run are judged once, and re-judging the same
  answers with the same judge makes no call at all.

Secrets stay with the operator (``endpoints.py``): the key comes from ``LANGCHEF_JUDGE_API_KEY``,
the design's ``base_url`` must be on the operator's allow-list before any request is made, and
redirects are never followed, so an allowed endpoint cannot bounce the key elsewhere.

The judge id covers the model, the full prompt template text, the criteria and their
descriptions, the temperature and ``CODE_VERSION``; the endpoint address, API key,
concurrency, budget, timeouts and retry settings do not enter it (they change how verdicts
are obtained, not what they are). Serving different weights under one model name at two
addresses is therefore one judge to langchef: give them different model names.
"""

from __future__ import annotations

import concurrent.futures
import email.utils
import functools
import json
import logging
import numbers
import os
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from http.client import HTTPException

import pandas as pd

from .base import (FAIL, PASS, Item, Judge, JudgeError, Judgement, JudgeUsage, as_items, judge_id,
                   verdict_frame)
from .cache import CachedVerdict, VerdictCache, open_verdict_cache
from .endpoints import (API_KEY_VARIABLE, api_key, check_endpoint_allowed, check_transport,
                        without_credentials)
from .prompts import CRITERION_DESCRIPTIONS, PROMPT_TEMPLATES

KIND = "openai_compatible"
# Bump when request building or reply parsing changes in a way that can move a verdict.
CODE_VERSION = 1
SNIPPET_CHARS = 200
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL | re.IGNORECASE)
log = logging.getLogger(__name__)

class JudgeReplyError(JudgeError):
    """The endpoint answered, but not with a usable verdict."""

    def __init__(self, problem: str, example_id: str, reply: str):
        self.problem, self.example_id = problem, example_id
        self.snippet = reply[:SNIPPET_CHARS]
        super().__init__(f"the judge's reply for example {example_id!r} is malformed: "
                         f"{problem}; the reply began {self.snippet!r}. Check that the model "
                         f"follows the prompt's JSON format (a stronger model or prompt_version "
                         f"may be needed)")


class JudgeBudgetError(JudgeError):
    """Judging would need (or has needed) more endpoint calls than the per-run budget."""

    def __init__(self, message: str, *, needed: int | None, budget: int, used: int):
        self.needed, self.budget, self.used = needed, budget, used
        super().__init__(message)


class JudgeEndpointError(JudgeError):
    """The endpoint could not be reached or kept failing after the retries."""


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
    cache_path: str | os.PathLike | None = field(default=None, compare=False)
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
        return judge_id(KIND, {
            "code_version": CODE_VERSION, "model": self.model,
            "prompt_version": self.prompt_version,
            "prompt": {"system": template.system, "user": template.user},
            "criteria": [[name, text] for name, text in zip(self.criteria, self.descriptions)],
            "temperature": float(self.temperature),
        })

    @property
    def endpoint(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def describe(self) -> dict:
        return {"kind": KIND, "id": self.id, "model": self.model,
                "base_url": without_credentials(self.base_url),
                "prompt_version": self.prompt_version, "temperature": float(self.temperature),
                "criteria": list(self.criteria), "max_concurrency": self.max_concurrency,
                "max_calls": self.max_calls}

    def run(self, items: pd.DataFrame, *, source: str | None = None) -> Judgement:
        parsed = as_items(items, source=source)
        keys = [item.content_sha256() for item in parsed]
        cache = open_verdict_cache(self.cache_path) if self.cache_path is not None else None
        try:
            return self._run(parsed, keys, cache, items.index)
        finally:
            if cache is not None:
                cache.close()

    def _run(self, parsed: list[Item], keys: list[str], cache, index) -> Judgement:
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
        session = _Session(self, cache) if pending else None  # the key is needed only to call
        fresh = session.judge_all(pending) if session is not None else {}
        verdicts = {**known, **fresh}
        rows = [{"example_id": item.example_id, "verdict": verdicts[key].verdict,
                 "criterion": verdicts[key].criterion, "judge": self.id,
                 "rationale": verdicts[key].rationale} for key, item in zip(keys, parsed)]
        usage = JudgeUsage(items=len(parsed), calls=session.calls if session else 0,
                           cache_hits=sum(key in known for key in keys),
                           retries=session.retries if session else 0)
        return Judgement(verdict_frame(rows, index), usage)

    def messages(self, item: Item) -> list[dict]:
        """The chat messages for one item: the version's template with the criteria listed."""
        block = "\n".join(f"- {name}: {text}"
                          for name, text in zip(self.criteria, self.descriptions))
        return PROMPT_TEMPLATES[self.prompt_version].render(item, block)

    def parse_reply(self, body: bytes | str, example_id: str) -> CachedVerdict:
        """The verdict in a chat-completions response body, or a ``JudgeReplyError``."""
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        try:
            content = json.loads(text)["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise JudgeReplyError("the response is not a chat completion with "
                                  "choices[0].message.content", example_id, text) from None
        if not isinstance(content, str):
            raise JudgeReplyError("choices[0].message.content is not text", example_id, text)
        return parse_verdict(content, self.criteria, example_id)


def parse_verdict(content: str, criteria: tuple[str, ...], example_id: str) -> CachedVerdict:
    """Read ``{"verdict", "criterion", "rationale"}`` from a model's reply text."""
    stripped = content.strip()
    fenced = _FENCE.match(stripped)
    try:
        reply = json.loads(fenced.group(1) if fenced else stripped)
    except ValueError:
        raise JudgeReplyError("it is not JSON", example_id, content) from None
    if not isinstance(reply, dict):
        raise JudgeReplyError("it is not a JSON object", example_id, content)
    verdict = reply.get("verdict")
    if not isinstance(verdict, str) or verdict.strip().lower() not in (PASS, FAIL):
        raise JudgeReplyError(f"'verdict' must be \"pass\" or \"fail\", got {verdict!r}",
                              example_id, content)
    verdict = verdict.strip().lower()
    rationale = reply.get("rationale", "")
    if rationale is None:
        rationale = ""
    if not isinstance(rationale, str):
        raise JudgeReplyError(f"'rationale' must be text, got {rationale!r}", example_id, content)
    if verdict == PASS:
        return CachedVerdict(PASS, None, rationale.strip())
    cited = reply.get("criterion")
    if not isinstance(cited, str) or not cited.strip():
        raise JudgeReplyError("a fail must cite exactly one criterion, got "
                              f"{cited!r}", example_id, content)
    by_name = {name.lower(): name for name in criteria}
    if cited.strip().lower() not in by_name:
        raise JudgeReplyError(f"criterion {cited!r} is not one of {list(criteria)}",
                              example_id, content)
    return CachedVerdict(FAIL, by_name[cited.strip().lower()], rationale.strip())


class _Retryable(Exception):
    """A transient failure: worth another attempt after ``wait`` seconds (or the backoff)."""

    def __init__(self, description: str, retry_after: float | None = None):
        self.description, self.retry_after = description, retry_after
        super().__init__(description)


class _Session:
    """One run's shared state: the budget, counters, the cancel flag and the API key."""

    def __init__(self, judge: OpenAICompatibleJudge, cache: VerdictCache | None):
        self.judge, self.cache = judge, cache
        self.calls = self.retries = 0
        self._lock = threading.Lock()
        self.cancelled = threading.Event()
        check_endpoint_allowed(judge.base_url)  # before the key is read or anything is sent
        self.key = api_key()

    def judge_all(self, pending: dict[str, Item]) -> dict[str, CachedVerdict]:
        order = list(pending)
        results: dict[str, CachedVerdict] = {}
        errors: dict[str, BaseException] = {}
        workers = min(self.judge.max_concurrency, len(order))
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers,
                                                   thread_name_prefix="langchef-judge") as pool:
            futures = {pool.submit(self.judge_one, pending[key]): key for key in order}
            for future in concurrent.futures.as_completed(futures):
                key = futures[future]
                try:
                    results[key] = future.result()
                except _Cancelled:
                    continue
                except BaseException as error:  # noqa: BLE001 - re-raised below, in order
                    errors[key] = error
                    self.cancelled.set()  # queued items stop before calling
        if errors:
            first = min(errors, key=order.index)  # the earliest item, not the fastest thread
            error = errors[first]
            if isinstance(error, JudgeBudgetError):
                error = JudgeBudgetError(
                    f"the per-run call budget max_calls={self.judge.max_calls} ran out after "
                    f"{self.calls} calls (retries included) with {len(order) - len(results)} of "
                    f"{len(order)} items still unjudged; the {len(results)} verdicts obtained "
                    f"are cached, so raising max_calls and re-running pays only for the rest",
                    needed=None, budget=self.judge.max_calls, used=self.calls)
            raise error
        return results

    def judge_one(self, item: Item) -> CachedVerdict:
        if self.cancelled.is_set():
            raise _Cancelled()
        payload = json.dumps({"model": self.judge.model, "messages": self.judge.messages(item),
                              "temperature": float(self.judge.temperature)}).encode("utf-8")
        malformed_left = self.judge.malformed_retries
        while True:
            body = self.call(payload, item.example_id)
            try:
                verdict = self.judge.parse_reply(body, item.example_id)
                break
            except JudgeReplyError as error:
                if malformed_left == 0:
                    raise
                malformed_left -= 1
                log.warning("%s; asking again", error)
                self._count_retry()
        if self.cache is not None:
            self.cache.put(self.judge.id, item.content_sha256(), verdict)
        return verdict

    def call(self, payload: bytes, example_id: str) -> bytes:
        """One successful response body, after retrying transient failures."""
        judge = self.judge
        for attempt in range(judge.max_retries + 1):
            self._spend(example_id)
            try:
                return self._post(payload, example_id)
            except _Retryable as failure:
                if attempt == judge.max_retries:
                    raise JudgeEndpointError(
                        f"the judge endpoint {judge.endpoint} failed for example {example_id!r} "
                        f"after {attempt + 1} attempts (last: {failure.description}); check "
                        f"that the server is up and not overloaded, or raise max_retries/"
                        f"timeout_s") from None
                wait = min(judge.max_backoff_s, judge.backoff_s * 2 ** attempt)
                if failure.retry_after is not None:
                    wait = max(wait, min(failure.retry_after, judge.max_backoff_s))
                log.warning("judge call for %r failed (%s); retrying in %.2fs", example_id,
                            failure.description, wait)
                self._count_retry()
                if self.cancelled.wait(wait):
                    raise _Cancelled()
        raise AssertionError("unreachable: the loop returns or raises")

    def _post(self, payload: bytes, example_id: str) -> bytes:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        request = urllib.request.Request(self.judge.endpoint, data=payload, headers=headers,
                                         method="POST")
        try:
            with _OPENER.open(request, timeout=self.judge.timeout_s) as response:
                return response.read()
        except urllib.error.HTTPError as error:
            detail = _read_snippet(error)
            if error.code == 429 or error.code >= 500:
                raise _Retryable(f"HTTP {error.code} {detail!r}".strip(),
                                 _retry_after(error.headers.get("Retry-After"))) from None
            raise JudgeEndpointError(
                f"the judge endpoint {self.judge.endpoint} refused example {example_id!r} with "
                f"HTTP {error.code} ({detail!r}); check the base_url, the model name and the "
                f"API key in {API_KEY_VARIABLE}") from None
        except urllib.error.URLError as error:
            raise _Retryable(f"connection failed: {error.reason}") from None
        except (TimeoutError, ConnectionError, HTTPException, OSError) as error:
            raise _Retryable(f"{type(error).__name__}: {error}".rstrip(": ")) from None

    def _spend(self, example_id: str) -> None:
        with self._lock:
            budget = self.judge.max_calls
            if budget is not None and self.calls >= budget:
                raise JudgeBudgetError(f"call budget spent before judging {example_id!r}",
                                       needed=None, budget=budget, used=self.calls)
            self.calls += 1

    def _count_retry(self) -> None:
        with self._lock:
            self.retries += 1


class _Cancelled(Exception):
    """Another item failed first; this one stops without calling."""


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is an error: following it would send the key to an address nobody allowed."""

    def redirect_request(self, request, fp, code, message, headers, new_url):
        raise urllib.error.HTTPError(request.full_url, code, f"redirect to {new_url} refused",
                                     headers, fp)


_OPENER = urllib.request.build_opener(_NoRedirects)


def _read_snippet(error: urllib.error.HTTPError) -> str:
    try:
        return error.read()[:SNIPPET_CHARS].decode("utf-8", "replace").strip()
    except Exception:  # noqa: BLE001 - the body is only decoration for the message
        return ""


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header: a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


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
