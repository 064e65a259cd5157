"""Live listeners: a watch without a cursor receives what is published
after it started, and nothing from before."""

from __future__ import annotations

from heraldctl import FEED, MARS
from streams import async_test, client, go_live, next_within, nothing_more, read_n

OD_ENFO = {"class": "od", "expver": "1", "domain": "g", "date": "2025-07-06", "time": "00", "stream": "enfo"}


@async_test
async def test_live_listener_receives_later_notifications(start_herald, backend):
    h = start_herald({"mars": MARS})
    c = client(h.url)
    # Published before the listener exists: a live-only watch must not see it.
    await c.notify(event_type="mars", identifier={**OD_ENFO, "step": 1}, payload={"old": True})
    it = c.listen("mars", filter={"class": "od", "stream": "enfo"})
    try:
        last_probe = await go_live(c, it, "mars", {**OD_ENFO, "step": 0})
        for step in range(1, 31):
            await c.notify(event_type="mars", identifier={**OD_ENFO, "step": step}, payload={"step": step})
        got = await read_n(it, 30)
        assert [n.sequence for n in got] == list(range(last_probe + 1, last_probe + 31))
        assert [n.payload for n in got] == [{"step": s} for s in range(1, 31)]
        assert [n.identifier["step"] for n in got] == [str(s) for s in range(1, 31)]
        assert all(n.identifier["date"] == "20250706" and n.identifier["time"] == "0000" for n in got)
        await nothing_more(it, 0.3)
    finally:
        await it.aclose()


@async_test
async def test_live_filter_passes_only_matching_notifications(start_herald, backend):
    h = start_herald({"mars": MARS})
    c = client(h.url)
    it = c.listen("mars", filter={"class": "od", "stream": "enfo", "step": {"gte": 100}})
    try:
        await go_live(c, it, "mars", {**OD_ENFO, "step": 360})
        for i, (cls, stream, step) in enumerate(
            [("od", "enfo", 99), ("od", "enfo", 100), ("rd", "enfo", 200), ("od", "oper", 200), ("od", "enfo", 240)]
        ):
            await c.notify(event_type="mars", identifier={**OD_ENFO, "class": cls, "stream": stream, "step": step}, payload=i)
        got = await read_n(it, 2)
        assert [n.payload for n in got] == [1, 4]
        await nothing_more(it, 0.3)
    finally:
        await it.aclose()


@async_test
async def test_listen_many_delivers_each_listener_its_notifications(start_herald, backend):
    h = start_herald({"mars": MARS, "feed": FEED})
    c = client(h.url)
    # Two listeners through one loop, each replaying from the start and
    # then live.
    many = c.listen_many(
        {
            "forecasts": {"event_type": "mars", "filter": {"class": "od"}},
            "everything": {"event_type": "feed", "filter": {}},
        },
        start_from=0,
    )
    try:
        await c.notify(event_type="feed", identifier={"source": "x", "item": 1}, payload="f1")
        await c.notify(event_type="mars", identifier={**OD_ENFO, "step": 6}, payload="m1")
        await c.notify(event_type="feed", identifier={"source": "y", "item": 2}, payload="f2")
        got = [await next_within(many) for _ in range(3)]
        by_name: dict[str, list] = {}
        for name, n in got:
            by_name.setdefault(name, []).append((n.event_type, n.sequence, n.payload))
        assert by_name == {
            "forecasts": [("mars", 1, "m1")],
            "everything": [("feed", 1, "f1"), ("feed", 2, "f2")],
        }
        assert many.errors == []
    finally:
        await many.aclose()
