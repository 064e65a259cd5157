"""Unfiltered watchers and the client's gap detection.

For a watcher without a filter the client expects every sequence of the
event type, one after the other, and raises HistoryGapError
(reason "sequence_jump") on a jump. herald's sequences are dense per event
type, whatever other event types are published in between, in history and
live alike.
"""

from __future__ import annotations

import pyaviso
import pytest

from heraldctl import FEED, MARS
from streams import async_test, client, go_live, read_n, read_to_end

MARS_ID = {"class": "od", "expver": "1", "domain": "g", "date": "2025-07-06", "time": "00", "stream": "enfo", "step": 0}
HISTORY = 1500  # 15 replay batches of 100
LIVE = 200


async def publish_interleaved(c, first: int, count: int) -> None:
    """count feed notifications (items first..), with a mars notification
    published after every third, as notify_many batches."""
    batch = []
    for i in range(first, first + count):
        batch.append({"event_type": "feed", "identifier": {"source": f"src{i % 7}", "item": i}, "payload": {"i": i}})
        if i % 3 == 0:
            batch.append({"event_type": "mars", "identifier": {**MARS_ID, "step": i % 361}, "payload": {"mars": i}})
    # concurrency 1 keeps the order, so feed sequence k carries item k
    results = await c.notify_many(batch, concurrency=1)
    assert all(r.ok for r in results), [r.error for r in results if not r.ok][:3]


@async_test
async def test_unfiltered_watcher_over_many_notifications(start_herald, backend):
    # Aviso's default pause of 100 ms between history batches.
    h = start_herald({"feed": FEED, "mars": MARS}, watch={"replay_batch_delay_ms": 100})
    c = client(h.url)
    await publish_interleaved(c, 1, HISTORY)
    # No filter at all, and an empty filter: both unfiltered.
    watchers = [c.listen("feed", start_from=0), c.listen("feed", filter={}, start_from=0)]
    try:
        for it in watchers:
            got = await read_n(it, HISTORY, timeout=60)
            assert [n.sequence for n in got] == list(range(1, HISTORY + 1))
            assert [n.payload["i"] for n in got] == list(range(1, HISTORY + 1))
        # Live after the history, still interleaved with the other event type.
        await publish_interleaved(c, HISTORY + 1, LIVE)
        for it in watchers:
            got = await read_n(it, LIVE, timeout=60)
            assert [n.sequence for n in got] == list(range(HISTORY + 1, HISTORY + LIVE + 1))
            assert all(n.event_type == "feed" for n in got)
    finally:
        for it in watchers:
            await it.aclose()
    # The other event type has its own dense sequence.
    mars = await read_to_end(c.listen("mars", filter={"class": "od"}, start_from=0, mode="replay_only"), timeout=60)
    assert [n.sequence for n in mars] == list(range(1, (HISTORY + LIVE) // 3 + 1))


@async_test
async def test_unfiltered_live_only_watcher_sees_no_jump(start_herald, backend):
    h = start_herald({"feed": FEED, "mars": MARS})
    c = client(h.url)
    await publish_interleaved(c, 1, 30)
    it = c.listen("feed")
    try:
        last = await go_live(c, it, "feed", {"source": "probe", "item": 0})
        await publish_interleaved(c, 1000, LIVE)
        got = await read_n(it, LIVE, timeout=60)
        assert [n.sequence for n in got] == list(range(last + 1, last + LIVE + 1))
    finally:
        await it.aclose()


@async_test
async def test_client_detects_a_sequence_jump_in_an_unfiltered_replay(start_herald, backend):
    """The check the tests above rely on is live: after an admin deletes a
    notification, an unfiltered replay over the hole raises
    HistoryGapError, while a filtered one (which expects holes) does not."""
    h = start_herald({"feed": FEED})
    c = client(h.url)
    for i in range(1, 7):
        await c.notify(event_type="feed", identifier={"source": "s", "item": i}, payload=i)
    await c.delete_notification("feed@4")
    it = c.listen("feed", start_from=0, mode="replay_only")
    assert [n.sequence for n in await read_n(it, 3)] == [1, 2, 3]
    with pytest.raises(pyaviso.HistoryGapError) as e:
        await read_to_end(it)
    assert (e.value.reason, e.value.expected, e.value.observed) == ("sequence_jump", 4, 5)
    # An empty filter is no filter.
    with pytest.raises(pyaviso.HistoryGapError):
        await read_to_end(c.listen("feed", filter={}, start_from=0, mode="replay_only"))
    got = await read_to_end(c.listen("feed", filter={"source": "s"}, start_from=0, mode="replay_only"))
    assert [n.sequence for n in got] == [1, 2, 3, 5, 6]
    # Wiping the stream through the client empties its history.
    await c.wipe_stream("FEED")
    assert await read_to_end(c.listen("feed", filter={"source": "s"}, start_from=0, mode="replay_only")) == []
