"""The historical cap (`notification_replay_limit_reached`) as the client
reports it: HistoryGapError with reason "replay_limit_reached" and
max_allowed, after the first max_allowed notifications."""

from __future__ import annotations

import asyncio

import pyaviso
import pytest

from heraldctl import CAPPED, CAPPED_MAX, FEED
from streams import READ_TIMEOUT, async_test, client, next_within, read_n, read_to_end


async def publish(c, kinds: list[str]) -> None:
    for n, kind in enumerate(kinds, start=1):
        await c.notify(event_type="capped", identifier={"kind": kind, "n": n}, payload={"n": n})


@async_test
async def test_replay_over_the_cap_raises_history_gap(start_herald, backend):
    h = start_herald({"capped": CAPPED})
    c = client(h.url)
    await publish(c, ["a"] * (CAPPED_MAX + 3))
    it = c.listen("capped", start_from=0, mode="replay_only")
    got = await read_n(it, CAPPED_MAX)
    assert [n.sequence for n in got] == list(range(1, CAPPED_MAX + 1))
    with pytest.raises(pyaviso.HistoryGapError) as e:
        await read_to_end(it)
    assert e.value.reason == "replay_limit_reached"
    assert e.value.max_allowed == CAPPED_MAX


@async_test
async def test_watch_over_the_cap_raises_history_gap_and_does_not_go_live(start_herald, backend):
    h = start_herald({"capped": CAPPED})
    c = client(h.url)
    await publish(c, ["b"] * (CAPPED_MAX + 1))
    it = c.listen("capped", filter={"kind": "b"}, start_from=0)
    try:
        got = await read_n(it, CAPPED_MAX)
        assert [n.payload["n"] for n in got] == list(range(1, CAPPED_MAX + 1))
        with pytest.raises(pyaviso.HistoryGapError) as e:
            await read_n(it, 1)
        assert (e.value.reason, e.value.max_allowed) == ("replay_limit_reached", CAPPED_MAX)
    finally:
        await it.aclose()


@async_test
async def test_exactly_the_cap_and_filtered_out_notifications_are_not_truncation(start_herald, backend):
    h = start_herald({"capped": CAPPED})
    c = client(h.url)
    # CAPPED_MAX of kind a among many of kind b: a filter on a ends normally.
    await publish(c, ["b", "a", "b", "b", "a", "a", "b", "a", "b", "a", "b", "b"])
    got = await read_to_end(c.listen("capped", filter={"kind": "a"}, start_from=0, mode="replay_only"))
    assert [n.payload["n"] for n in got] == [2, 5, 6, 8, 10]
    # The unfiltered replay of the same stream is over the cap.
    with pytest.raises(pyaviso.HistoryGapError):
        await read_to_end(c.listen("capped", start_from=0, mode="replay_only"))
    # A fresh request gets a fresh quota: the last CAPPED_MAX fit.
    got = await read_to_end(c.listen("capped", start_from=12 - CAPPED_MAX, mode="replay_only"))
    assert [n.sequence for n in got] == list(range(12 - CAPPED_MAX + 1, 13))


@async_test
async def test_global_cap_applies_to_other_event_types(start_herald, backend):
    h = start_herald({"feed": FEED, "capped": CAPPED}, watch={"max_historical_notifications": 20})
    c = client(h.url)
    for i in range(25):
        await c.notify(event_type="feed", identifier={"source": "x", "item": i}, payload=i)
    it = c.listen("feed", start_from=0, mode="replay_only")
    assert len(await read_n(it, 20)) == 20
    with pytest.raises(pyaviso.HistoryGapError) as e:
        await read_to_end(it)
    assert (e.value.reason, e.value.max_allowed) == ("replay_limit_reached", 20)


@async_test
async def test_listen_many_reports_the_cap_as_a_listener_failure(start_herald, backend):
    h = start_herald({"capped": CAPPED, "feed": FEED})
    c = client(h.url)
    await publish(c, ["a"] * (CAPPED_MAX + 1))
    await c.notify(event_type="feed", identifier={"source": "x", "item": 1}, payload="still here")
    many = c.listen_many(
        {"capped": {"event_type": "capped", "filter": {}}, "feed": {"event_type": "feed", "filter": {}}},
        start_from=0,
        on_error="continue",
    )
    try:
        got = await read_n(many, CAPPED_MAX + 1)
        assert sorted((name, n.sequence) for name, n in got) == [("capped", i) for i in range(1, CAPPED_MAX + 1)] + [("feed", 1)]
        # The capped listener has stopped; the other one goes on live.
        await c.notify(event_type="feed", identifier={"source": "x", "item": 2}, payload="live")
        (name, n), = await read_n(many, 1)
        assert (name, n.sequence, n.payload) == ("feed", 2, "live")
        # The failure is recorded when the loop reads it, in whatever order
        # it arrived relative to the other listener's notifications.
        deadline = asyncio.get_running_loop().time() + READ_TIMEOUT
        while not many.errors and asyncio.get_running_loop().time() < deadline:
            try:
                extra = await next_within(many, 0.2)
            except asyncio.TimeoutError:
                continue
            raise AssertionError(f"unexpected {extra}")
        assert [(f.listener, f.kind) for f in many.errors] == [("capped", pyaviso.ListenFailureKind.LISTENER)]
        err = many.errors[0].error
        assert isinstance(err, pyaviso.HistoryGapError)
        assert (err.reason, err.max_allowed) == ("replay_limit_reached", CAPPED_MAX)
    finally:
        await many.aclose()
