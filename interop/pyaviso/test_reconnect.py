"""The client reconnects when herald closes a watch, and resumes from its
last sequence: nothing lost, nothing twice (in-memory engine; the restart
case with a durable store is in test_resume.py)."""

from __future__ import annotations

import asyncio
import time

import pyaviso

from heraldctl import FEED
from streams import async_test, client, go_live, next_within, nothing_more, read_n


@async_test
async def test_listener_resumes_after_max_duration_closes(start_herald, backend):
    # Every watch is closed with max_duration_reached after 1 s; the client
    # reconnects with from_id = last + 1 each time.
    h = start_herald({"feed": FEED}, watch={"connection_max_duration_sec": 1, "sse_heartbeat_interval_sec": 1})
    c = client(h.url, heartbeat_interval=1.0)
    it = c.listen("feed", start_from=0)  # unfiltered: a jump would raise
    got: list = []
    published = 0

    async def reader() -> None:
        while True:
            got.append(await next_within(it, 30))

    task = asyncio.create_task(reader())
    try:
        # Publish for about 3.5 s, across at least three closes.
        end = time.monotonic() + 3.5
        while time.monotonic() < end:
            published += 1
            await c.notify(event_type="feed", identifier={"source": "tick", "item": published}, payload=published)
            await asyncio.sleep(0.01)  # pacing of the publisher, not a wait for a result
        deadline = time.monotonic() + 30
        while len(got) < published and time.monotonic() < deadline and not task.done():
            await asyncio.sleep(0.05)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await it.aclose()
    if task.done() and not task.cancelled() and task.exception():
        raise task.exception()
    assert [n.sequence for n in got] == list(range(1, published + 1))
    assert [n.payload for n in got] == list(range(1, published + 1))


@async_test
async def test_idle_live_listener_keeps_receiving(start_herald, backend):
    # Only heartbeats for a while: the client must neither fail nor lose
    # what comes after.
    h = start_herald({"feed": FEED}, watch={"sse_heartbeat_interval_sec": 1})
    c = client(h.url, heartbeat_interval=1.0)
    it = c.listen("feed", filter={"source": "quiet"})
    try:
        last = await go_live(c, it, "feed", {"source": "quiet", "item": 0})
        try:
            n = await next_within(it, 3.5)
            raise AssertionError(f"unexpected notification {n.sequence}")
        except asyncio.TimeoutError:
            pass
        await c.notify(event_type="feed", identifier={"source": "quiet", "item": 1}, payload="after the silence")
        (n,) = await read_n(it, 1)
        assert (n.sequence, n.payload) == (last + 1, "after the silence")
    finally:
        await it.aclose()


@async_test
async def test_listener_that_falls_behind_resumes_without_gap(start_herald, backend):
    # A watcher further behind than live_queue_size is closed by herald so
    # that it reconnects from its last sequence. The client must go on by
    # itself: no error, nothing lost, nothing twice. (It treats an `error`
    # event as terminal, so herald must close such a watch with a
    # connection-closing end_of_stream only.)
    h = start_herald({"feed": FEED}, watch={"live_queue_size": 2})
    c = client(h.url)
    it = c.listen("feed")  # unfiltered, live only
    try:
        last = await go_live(c, it, "feed", {"source": "probe", "item": 0})
        # Nobody reads while 3000 notifications of 20 kB are published:
        # the socket buffers fill, then the watcher's queue of 2 overflows.
        pad = "x" * 20000
        batch = [{"event_type": "feed", "identifier": {"source": "bulk", "item": i}, "payload": {"i": i, "pad": pad}} for i in range(1, 3001)]
        results = await c.notify_many(batch, concurrency=1)
        assert all(r.ok for r in results)
        got = await read_n(it, 3000, timeout=90)
        assert [n.sequence for n in got] == list(range(last + 1, last + 3001))
        assert [n.payload["i"] for n in got] == list(range(1, 3001))
    finally:
        await it.aclose()


@async_test
async def test_new_client_resumes_from_its_state_store(start_herald, backend, tmp_path):
    # A listener that stops and a new client (a new process, say) with the
    # same cursor file: it continues after the last notification handled,
    # from herald's history, then live.
    h = start_herald({"feed": FEED})
    c = client(h.url)
    for i in range(1, 6):
        await c.notify(event_type="feed", identifier={"source": "s", "item": i}, payload=i)
    state = tmp_path / "aviso-state.json"

    def stateful() -> pyaviso.AsyncAvisoClient:
        return pyaviso.AsyncAvisoClient(
            base_url=h.url, auth=pyaviso.Anonymous(), state_store=pyaviso.JsonFileStore(state), flush_cursor_on_exit=True
        )

    first = stateful().listen("feed", filter={"source": "s"}, start_from=0)
    assert [n.payload for n in await read_n(first, 5)] == [1, 2, 3, 4, 5]
    await first.aclose()
    for i in range(6, 9):
        await c.notify(event_type="feed", identifier={"source": "s", "item": i}, payload=i)
    second = stateful().listen("feed", filter={"source": "s"})  # no start_from: the stored cursor
    try:
        assert [n.sequence for n in await read_n(second, 3)] == [6, 7, 8]
        await c.notify(event_type="feed", identifier={"source": "s", "item": 9}, payload=9)
        assert [n.sequence for n in await read_n(second, 1)] == [9]
        await nothing_more(second, 0.3)
    finally:
        await second.aclose()
