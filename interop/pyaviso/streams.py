"""Reading pyaviso listeners with deadlines.

The tests read notifications through the client's async iterators so that
every wait has a deadline (asyncio.wait_for): a herald that stops
delivering fails the test with a timeout instead of hanging the suite.
Cancelling a read leaves the listener open (pyaviso documents this), so a
read that timed out may be retried.
"""

from __future__ import annotations

import asyncio
import functools
import re
import time
from collections.abc import Callable, Coroutine
from typing import Any

import pyaviso

# Deadline for one expected notification or one whole finite replay.
READ_TIMEOUT = 20.0
# Deadline for a whole test body.
TEST_TIMEOUT = 120.0


def async_test(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Runs an async test body in its own event loop, with TEST_TIMEOUT."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(asyncio.wait_for(fn(*args, **kwargs), TEST_TIMEOUT))

    return run


def client(url: str, auth: Any = None, **kw: Any) -> pyaviso.AsyncAvisoClient:
    """An async client for url; anonymous unless auth is given, with a
    fresh in-memory cursor store, so nothing from the environment or the
    user's aviso config files leaks in."""
    return pyaviso.AsyncAvisoClient(
        base_url=url,
        auth=auth if auth is not None else pyaviso.Anonymous(),
        state_store=pyaviso.MemoryStore(),
        **kw,
    )


def sync_client(url: str, auth: Any = None, **kw: Any) -> pyaviso.AvisoClient:
    """As client, synchronous."""
    return pyaviso.AvisoClient(
        base_url=url,
        auth=auth if auth is not None else pyaviso.Anonymous(),
        state_store=pyaviso.MemoryStore(),
        **kw,
    )


async def next_within(it: Any, timeout: float = READ_TIMEOUT) -> Any:
    """The next item of an async iterator, or TimeoutError."""
    return await asyncio.wait_for(it.__anext__(), timeout)


async def read_n(it: Any, n: int, timeout: float = READ_TIMEOUT) -> list:
    """Exactly n items, all read within timeout."""
    deadline = time.monotonic() + timeout
    out = []
    while len(out) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"read {len(out)} of {n} notifications within {timeout}s: {summary(out)}")
        try:
            out.append(await next_within(it, left))
        except asyncio.TimeoutError:
            raise TimeoutError(f"read {len(out)} of {n} notifications within {timeout}s: {summary(out)}") from None
    return out


async def read_to_end(it: Any, timeout: float = READ_TIMEOUT) -> list:
    """Every item until the iterator ends (a finite replay), within timeout."""
    deadline = time.monotonic() + timeout
    out = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"stream did not end within {timeout}s after {summary(out)}")
        try:
            out.append(await next_within(it, left))
        except StopAsyncIteration:
            return out
        except asyncio.TimeoutError:
            raise TimeoutError(f"stream did not end within {timeout}s after {summary(out)}") from None


async def nothing_more(it: Any, within: float) -> None:
    """Asserts that no notification arrives within `within` seconds (the
    listener stays open)."""
    try:
        n = await next_within(it, within)
    except asyncio.TimeoutError:
        return
    raise AssertionError(f"unexpected notification {n.cloudevent and n.cloudevent.get('id')}: {n.payload!r}")


async def go_live(
    c: pyaviso.AsyncAvisoClient,
    it: Any,
    event_type: str,
    identifier: dict,
    timeout: float = READ_TIMEOUT,
) -> int:
    """Waits until a live-only listener is subscribed.

    A live-only watch sees only what is published after its subscription
    exists, and the client subscribes in the background. So this publishes
    probe notifications (payload {"probe": k}, matching the listener's
    filter) until the listener receives one, then reads on to the last
    probe published: every notification published afterwards is then
    delivered. Returns the sequence of that last probe.
    """
    deadline = time.monotonic() + timeout
    k = 0
    while True:
        k += 1
        await c.notify(event_type=event_type, identifier=identifier, payload={"probe": k})
        try:
            n = await next_within(it, 0.25)
        except asyncio.TimeoutError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"listener received none of {k} probes within {timeout}s") from None
            continue
        while True:
            assert isinstance(n.payload, dict) and "probe" in n.payload, f"not a probe: {n.payload!r}"
            if n.payload["probe"] == k:
                return n.sequence
            n = await next_within(it, max(deadline - time.monotonic(), 0.1))


def summary(notifications: list) -> str:
    ids = [n.cloudevent.get("id") if n.cloudevent else n.sequence for n in notifications]
    if len(ids) > 12:
        ids = ids[:5] + ["..."] + ids[-5:]
    return f"{len(notifications)} notifications {ids}"


_TIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$")


def time_ns(rfc3339: str) -> int:
    """Nanoseconds since the epoch of a CloudEvent `time` (RFC 3339 UTC,
    up to 9 fraction digits, which datetime cannot hold)."""
    import calendar

    m = _TIME.match(rfc3339)
    assert m, f"CloudEvent time {rfc3339!r} is not RFC 3339 UTC"
    y, mo, d, h, mi, s, frac = m.groups()
    secs = calendar.timegm((int(y), int(mo), int(d), int(h), int(mi), int(s)))
    return secs * 1_000_000_000 + int((frac or "0").ljust(9, "0"))
