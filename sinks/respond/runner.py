"""Run the asyncio responder beside a synchronous dataflow, so slow answers never stall it.

* `ResponderRunner` — a `Responder` on its own event loop in a daemon thread. `submit()` hands
  a `ResponderItem` over (a ResponseRequest or a UserCorrection; the responder dispatches on its
  type, in the session's arrival order) and returns at once; each finished `Outcome`
  (`ResponseOutcome` or `CorrectionOutcome`) goes to the outcome handlers on one handler thread
  (file/topic writes, supersede execution), never on the loop. `close()` drains what is in
  flight (up to `drain_timeout_s`) and stops the loop.
* `ResponderSink` — a Bytewax sink over a runner: `write_batch` only submits. Partitions of one
  process share one runner (one semaphore, one per-session answer memory); the last partition
  to close drains it. Upstream the responder feed is keyed by session, so a session's requests
  and corrections reach the same process in order and reflection sees the previous answer.
* `answer_all()` / `handle_all()` — the embedded calls: requests (or requests and corrections)
  in, their outcomes out, in order.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import threading
from collections.abc import Callable, Sequence

from bytewax.outputs import DynamicSink, StatelessSinkPartition

from schemas.response import ResponderItem, ResponseRequest
from sinks.respond.responder import Outcome, Responder, ResponseOutcome

log = logging.getLogger(__name__)

OutcomeHandler = Callable[[Outcome], None]


def answer_all(responder: Responder, requests: Sequence[ResponseRequest]) -> list[ResponseOutcome]:
    """Answer `requests` concurrently on a fresh event loop and return the outcomes in order."""

    async def _run() -> list[ResponseOutcome]:
        try:
            return await responder.respond_many(requests)
        finally:
            await responder.aclose()

    return asyncio.run(_run())


def handle_all(responder: Responder, items: Sequence[ResponderItem]) -> list[Outcome]:
    """Handle requests and corrections (per session in the given order) on a fresh event loop."""

    async def _run() -> list[Outcome]:
        try:
            return await responder.handle_many(items)
        finally:
            await responder.aclose()

    return asyncio.run(_run())


class ResponderRunner:
    def __init__(
        self, responder: Responder, handlers: Sequence[OutcomeHandler] = (), *, drain_timeout_s: float = 60.0
    ) -> None:
        self._responder = responder
        self._handlers = tuple(handlers)
        self._drain_timeout_s = drain_timeout_s
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="responder-loop", daemon=True)
        self._outbox = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="responder-out")
        self._pending: set[concurrent.futures.Future[Outcome]] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._thread.start()

    def submit(self, item: ResponderItem) -> concurrent.futures.Future[Outcome]:
        """Start handling `item` (answer a request, reflect on a correction); returns at once with a
        future of its outcome. Items of one session are handled in the order they were submitted."""
        if self._closed:
            raise RuntimeError("responder runner is closed")  # a programming error, not data
        future = asyncio.run_coroutine_threadsafe(self._responder.handle(item), self._loop)
        with self._lock:
            self._pending.add(future)
        future.add_done_callback(self._done)
        return future

    def _done(self, future: concurrent.futures.Future[Outcome]) -> None:
        with self._lock:
            self._pending.discard(future)
        if future.cancelled():
            return
        exc = future.exception()
        if exc is not None:
            # handle() degrades every endpoint failure to a fallback; anything else is a bug to see.
            log.error(json.dumps({"op": "respond", "error": f"{type(exc).__name__}: {exc}"}))
            return
        outcome = future.result()
        self._outbox.submit(self._deliver, outcome)

    def _deliver(self, outcome: Outcome) -> None:
        for handler in self._handlers:
            handler(outcome)

    def in_flight(self) -> int:
        with self._lock:
            return len(self._pending)

    def close(self) -> None:
        """Wait for in-flight answers (bounded), deliver them, stop the loop."""
        if self._closed:
            return
        self._closed = True
        with self._lock:
            pending = list(self._pending)
        _, not_done = concurrent.futures.wait(pending, timeout=self._drain_timeout_s)
        for future in not_done:
            future.cancel()
        if not_done:
            log.warning(json.dumps({"op": "responder.close", "abandoned": len(not_done)}))
        self._outbox.shutdown(wait=True)
        asyncio.run_coroutine_threadsafe(self._responder.aclose(), self._loop).result(timeout=5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()


class _ResponderPartition(StatelessSinkPartition[ResponderItem]):
    def __init__(self, owner: ResponderSink) -> None:
        self._owner = owner
        self._runner = owner._acquire()

    def write_batch(self, items: list[ResponderItem]) -> None:
        for item in items:
            self._runner.submit(item)

    def close(self) -> None:
        self._owner._release()


class ResponderSink(DynamicSink[ResponderItem]):
    """Bytewax sink: hands each request or correction to a shared background runner and moves on."""

    def __init__(self, make_runner: Callable[[], ResponderRunner]) -> None:
        self._make_runner = make_runner
        self._runner: ResponderRunner | None = None
        self._users = 0
        self._lock = threading.Lock()

    def _acquire(self) -> ResponderRunner:
        with self._lock:
            if self._runner is None:
                self._runner = self._make_runner()
            self._users += 1
            return self._runner

    def _release(self) -> None:
        with self._lock:
            self._users -= 1
            runner = self._runner if self._users == 0 else None
            if runner is not None:
                self._runner = None
        if runner is not None:
            runner.close()

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _ResponderPartition:
        return _ResponderPartition(self)
