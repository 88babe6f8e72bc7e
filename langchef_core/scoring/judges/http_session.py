"""One judging run's HTTP side: an aiohttp session on an event loop of its own, tenacity's
retries, the adaptive in-flight limit, the call budget and the counters of ``JudgeUsage``
(``openai_compatible.py`` documents the promises; this module keeps them).
"""

from __future__ import annotations

import asyncio
import collections
import email.utils
import functools
import json
import logging
import ssl
import threading
import time
from typing import TYPE_CHECKING

import certifi
import tenacity

if TYPE_CHECKING:
    import aiohttp

from .base import Item, Judge
from .cache import CachedVerdict, VerdictCache
from .concurrency import AdaptiveLimit
from .endpoints import API_KEY_VARIABLE, api_key, azure_api_version, check_endpoint_allowed
from .replies import (SNIPPET_CHARS, JudgeBudgetError, JudgeEndpointError, JudgeReplyError,
                      JudgingProgress, read_reply)

WORKERS_PER_SLOT = 4  # see Session.judge_all
log = logging.getLogger("langchef_core.scoring.judges.openai_compatible")


class _Retryable(Exception):
    """A transient failure: worth another attempt after the backoff (or ``retry_after``).
    ``overload`` marks the server saying it is too busy (429/503): the in-flight limit halves."""

    def __init__(self, description: str, retry_after: float | None = None, *,
                 overload: bool = False):
        self.description, self.retry_after, self.overload = description, retry_after, overload
        super().__init__(description)


class _Cancelled(Exception):
    """Another item failed first; this one stops without calling."""


class _BackoffOrRetryAfter(tenacity.wait.wait_base):
    """``min(max_backoff_s, backoff_s · 2^(attempt-1))``, lengthened to the server's
    ``Retry-After`` (capped at ``max_backoff_s``, so a server cannot park the run for an hour)."""

    def __init__(self, backoff_s: float, max_backoff_s: float):
        self.backoff_s, self.max_backoff_s = backoff_s, max_backoff_s

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        wait = min(self.max_backoff_s, self.backoff_s * 2 ** (retry_state.attempt_number - 1))
        failure = retry_state.outcome.exception() if retry_state.outcome else None
        retry_after = getattr(failure, "retry_after", None)
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.max_backoff_s))
        return wait


class Session:
    """One run's shared state: the budget, the counters, the cancel flag, the key and the
    HTTP client. Everything runs on one event loop, so the counters need no lock."""

    def __init__(self, judge: Judge, cache: VerdictCache | None,
                 tick=None):
        self.judge, self.cache, self.tick = judge, cache, tick
        self.calls = self.retries = self.rate_limited = 0
        self.prompt_tokens = self.completion_tokens = 0
        check_endpoint_allowed(judge.base_url)  # before the key is read or anything is sent
        self.key = api_key()
        self.azure_version = azure_api_version()
        url, params, self.headers = request_shape(judge.endpoint, self.key, self.azure_version)
        # Parsed once, not on every request. aiohttp (yarl is its URL type) is imported only
        # once a session is made: about 0.1 s that every process importing the judges paid,
        # and most of them (a recorded judge, the gate, status) never call an endpoint.
        import yarl
        self.url = yarl.URL(url).update_query(params) if params else yarl.URL(url)
        self.limit = AdaptiveLimit(judge.max_concurrency)
        self.cancelled: asyncio.Event | None = None

    async def judge_all(self, pending: dict[str, Item]) -> dict[str, CachedVerdict]:
        self.cancelled = asyncio.Event()
        order = list(pending)
        queue = collections.deque(order)
        results: dict[str, CachedVerdict] = {}
        errors: dict[str, BaseException] = {}
        # More workers than slots: an item waiting out a Retry-After holds no slot, and its
        # worker would otherwise leave that slot idle (5 % of 429s with Retry-After 1 s kept
        # about half the ceiling busy). The slots, not the workers, bound what is in flight.
        workers = min(WORKERS_PER_SLOT * self.judge.max_concurrency, len(order))
        async with self._client(self.judge.max_concurrency) as client:

            async def worker() -> None:
                while queue and not self.cancelled.is_set():
                    key = queue.popleft()
                    try:
                        results[key] = await self.judge_one(client, pending[key])
                    except _Cancelled:
                        continue
                    except Exception as error:  # noqa: BLE001 - re-raised below, in order
                        errors[key] = error
                        self.cancelled.set()  # queued items stop before calling
                        continue
                    if self.tick is not None:
                        self.tick(key)

            await asyncio.gather(*(worker() for _ in range(workers)))
        if errors:
            first = min(errors, key=order.index)  # the earliest item, not the fastest task
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

    def _client(self, connections: int) -> aiohttp.ClientSession:
        """One keep-alive pool of ``connections``. trust_env=False: HTTP(S)_PROXY, ALL_PROXY,
        NO_PROXY and .netrc cannot send the key anywhere but the allow-listed endpoint; each
        request refuses redirects (``_post``), so an allowed endpoint cannot bounce the key
        elsewhere either. The timeout covers one attempt from sending to the last byte, not
        the wait for a slot (the in-flight limit keeps that outside the session)."""
        import aiohttp
        return aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=connections, ssl=_tls_context()),
            trust_env=False, headers=self.headers,
            timeout=aiohttp.ClientTimeout(total=self.judge.timeout_s))

    async def judge_one(self, client: aiohttp.ClientSession, item: Item) -> CachedVerdict:
        if self.cancelled.is_set():
            raise _Cancelled()
        payload = json.dumps(self.judge.request_body(item)).encode("utf-8")
        try:  # the common case outside tenacity's loop, whose CPU exceeds the request's own
            return await self._store(item, await self.ask(client, payload, item.example_id))
        except JudgeReplyError as error:
            first: JudgeReplyError | None = error
        # Asked again (no wait: sampling, not the server, went wrong).
        asking = tenacity.AsyncRetrying(
            stop=tenacity.stop_after_attempt(self.judge.malformed_retries + 1),
            retry=tenacity.retry_if_exception_type(JudgeReplyError),
            before_sleep=self._asking_again, sleep=self._sleep, reraise=True)
        async for attempt in asking:
            with attempt:
                if first is not None:
                    failure, first = first, None
                    raise failure  # the first ask's answer, replayed: tenacity takes it from here
                verdict = await self.ask(client, payload, item.example_id)
        return await self._store(item, verdict)

    async def _store(self, item: Item, verdict: CachedVerdict) -> CachedVerdict:
        if self.cache is not None:
            await asyncio.to_thread(self.cache.put, self.judge.id, item.content_sha256(), verdict)
        return verdict

    async def ask(self, client: aiohttp.ClientSession, payload: bytes,
                  example_id: str) -> CachedVerdict:
        body = await self.call(client, payload, example_id)
        return read_reply(self.judge, body, example_id, self.count_tokens)

    async def call(self, client: aiohttp.ClientSession, payload: bytes, example_id: str) -> bytes:
        """One successful response body, after retrying transient failures."""
        judge = self.judge
        try:  # the common case outside tenacity's loop, whose CPU exceeds the request's own
            return await self._attempt(client, payload, example_id)
        except _Retryable as failure:
            first: _Retryable | None = failure
        retrying = tenacity.AsyncRetrying(
            stop=tenacity.stop_after_attempt(judge.max_retries + 1),
            wait=_BackoffOrRetryAfter(judge.backoff_s, judge.max_backoff_s),
            retry=tenacity.retry_if_exception_type(_Retryable),
            before_sleep=self._retrying, sleep=self._sleep, reraise=True)
        try:
            async for attempt in retrying:
                with attempt:
                    if first is not None:
                        failure, first = first, None
                        raise failure  # the first attempt's, replayed: tenacity waits after it
                    return await self._attempt(client, payload, example_id)
        except _Retryable as failure:
            raise JudgeEndpointError(
                f"the judge endpoint {judge.endpoint} failed for example {example_id!r} after "
                f"{judge.max_retries + 1} attempts (last: {failure.description}); check that "
                f"the server is up and not overloaded, or raise max_retries/timeout_s") from None
        raise AssertionError("unreachable: tenacity returns or raises")

    async def _attempt(self, client: aiohttp.ClientSession, payload: bytes, example_id: str) -> bytes:
        """One HTTP attempt inside one slot of the adaptive in-flight limit."""
        if self.cancelled.is_set():
            raise _Cancelled()
        slot = await self.limit.acquire()
        try:
            if self.cancelled.is_set():  # another item failed while this one waited for a slot
                raise _Cancelled()
            self._spend(example_id)
            try:
                body = await self._post(client, payload, example_id)
            except _Retryable as failure:
                if failure.overload:
                    self.limit.overloaded(slot)
                raise
            self.limit.succeeded(slot)
            return body
        finally:
            await self.limit.release()

    async def _post(self, client: aiohttp.ClientSession, payload: bytes, example_id: str) -> bytes:
        import aiohttp  # loaded by ``_client`` already: a lookup in sys.modules
        try:
            async with client.post(self.url, data=payload, allow_redirects=False) as response:
                status, headers = response.status, response.headers
                content = await response.read()
        except (TimeoutError, asyncio.TimeoutError) as error:
            raise _Retryable(f"timed out ({type(error).__name__})") from None
        except aiohttp.ClientError as error:
            raise _Retryable(f"connection failed: {type(error).__name__}: {error}"
                             .rstrip(": ")) from None
        if 200 <= status < 300:
            return content
        detail = content[:SNIPPET_CHARS].decode("utf-8", "replace").strip()
        if status == 429 or status >= 500:
            if status == 429:
                self.rate_limited += 1
            raise _Retryable(f"HTTP {status} {detail!r}".strip(),
                             _retry_after(headers.get("Retry-After")),
                             overload=status in (429, 503))
        if 300 <= status < 400:
            detail = f"redirect to {headers.get('Location', '?')} refused"
        raise JudgeEndpointError(
            f"the judge endpoint {self.judge.endpoint} refused example {example_id!r} with "
            f"HTTP {status} ({detail!r}); check the base_url, the model name and the API key "
            f"in {API_KEY_VARIABLE}")

    def _spend(self, example_id: str) -> None:
        budget = self.judge.max_calls
        if budget is not None and self.calls >= budget:
            raise JudgeBudgetError(f"call budget spent before judging {example_id!r}",
                                   needed=None, budget=budget, used=self.calls)
        self.calls += 1

    def usage(self) -> dict:
        """This session's share of ``JudgeUsage``."""
        return {"calls": self.calls, "retries": self.retries, "rate_limited": self.rate_limited,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens}

    def count_tokens(self, usage: dict) -> None:
        self.prompt_tokens += usage.get("prompt_tokens", 0)
        self.completion_tokens += usage.get("completion_tokens", 0)

    async def _sleep(self, seconds: float) -> None:
        """Tenacity's wait, cut short when another item has failed."""
        if self.cancelled.is_set():
            raise _Cancelled()
        if seconds <= 0:
            return
        try:
            await asyncio.wait_for(self.cancelled.wait(), seconds)
        except (TimeoutError, asyncio.TimeoutError):
            return
        raise _Cancelled()

    def _retrying(self, retry_state: tenacity.RetryCallState) -> None:
        self.retries += 1
        failure = retry_state.outcome.exception()
        # A 429 is the limiter's business and expected at scale: not a warning each time.
        log.log(logging.INFO if failure.overload else logging.WARNING,
                "judge call failed (%s); retrying in %.2fs", failure.description,
                retry_state.upcoming_sleep)

    def _asking_again(self, retry_state: tenacity.RetryCallState) -> None:
        self.retries += 1
        log.warning("%s; asking again", retry_state.outcome.exception())


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


class Tracker:
    """Turns completed items into monotone ``JudgingProgress`` reports (an item repeated in
    the table is done when its one call is)."""

    def __init__(self, progress, keys: list[str], hits: int, started: float):
        self.progress, self.hits, self.started = progress, hits, started
        self.copies = collections.Counter(keys)
        self.total = len(keys)
        self.done = hits
        self.session: Session | None = None

    def tick(self, key: str) -> None:
        self.done += self.copies[key]
        self.report()

    def report(self) -> None:
        session = self.session
        self.progress(JudgingProgress(
            done=self.done, total=self.total, calls=session.calls if session else 0,
            cache_hits=self.hits, retries=session.retries if session else 0,
            rate_limited=session.rate_limited if session else 0,
            seconds=time.perf_counter() - self.started))


def request_shape(endpoint: str, key: str | None,
                  azure_version: str | None) -> tuple[str, dict, dict]:
    """URL, query parameters and headers of every request: OpenAI's bearer token, or Azure
    OpenAI's ``api-key`` header and ``api-version`` query when the operator configured it."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    params = {}
    if azure_version is not None:
        params["api-version"] = azure_version
        if key:
            headers["api-key"] = key
    elif key:
        headers["Authorization"] = f"Bearer {key}"
    return endpoint, params, headers


@functools.lru_cache(maxsize=1)
def _tls_context() -> ssl.SSLContext:
    """Verification against certifi's CA bundle (as the urllib and httpx clients before),
    built once per process: loading the bundle costs ~40 ms, which every run (every shard
    slice) would otherwise pay."""
    return ssl.create_default_context(cafile=certifi.where())


def run_coroutine(coroutine):
    """Run the judging coroutine to its end: on a new event loop here, or, when this thread
    already runs one (a notebook, an async caller), on a new loop in a private thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    outcome: dict = {}

    def in_thread() -> None:
        try:
            outcome["value"] = asyncio.run(coroutine)
        except BaseException as error:  # noqa: BLE001 - handed to the caller's thread
            outcome["error"] = error

    thread = threading.Thread(target=in_thread, name="langchef-judge")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
