"""Replay from a sequence and from a date, with and without an end cursor
(`until`, which the client sends as to_id / to_date).

The client's integer `start_from` is the last sequence already seen: it
asks for the ones after it (from_id = start_from + 1), so 0 is "from the
beginning". A string `start_from` or `until` is a date. Both ends are
inclusive on the server.
"""

from __future__ import annotations

import pyaviso
import pytest

from heraldctl import FEED
from streams import async_test, client, read_n, read_to_end, time_ns

N = 12


async def publish(c, n: int = N, source: str = "s") -> list:
    """Publishes n feed notifications and returns them as replayed (with
    their sequence and stored time)."""
    for i in range(1, n + 1):
        await c.notify(event_type="feed", identifier={"source": source, "item": i}, payload={"i": i})
    return await read_to_end(c.listen("feed", filter={"source": source}, start_from=0, mode="replay_only"))


def seqs(notifications: list) -> list[int]:
    return [n.sequence for n in notifications]


@async_test
async def test_replay_from_sequence(start_herald, backend):
    h = start_herald({"feed": FEED})
    c = client(h.url)
    await publish(c)
    for after in (0, 1, 5, N - 1):
        got = await read_to_end(c.listen("feed", start_from=after, mode="replay_only"))
        assert seqs(got) == list(range(after + 1, N + 1)), f"start_from={after}"
        assert [n.payload for n in got] == [{"i": i} for i in range(after + 1, N + 1)]
    # Past the end: an empty replay that still ends normally.
    assert await read_to_end(c.listen("feed", start_from=N, mode="replay_only")) == []
    assert await read_to_end(c.listen("feed", start_from=N + 100, mode="replay_only")) == []
    # The same through a WatchRequest.
    got = await read_to_end(c.listen(request=pyaviso.WatchRequest.replay_only("feed", 7)))
    assert seqs(got) == list(range(8, N + 1))


@async_test
async def test_replay_from_sequence_until_sequence(start_herald, backend):
    h = start_herald({"feed": FEED})
    c = client(h.url)
    await publish(c)
    got = await read_to_end(c.listen("feed", start_from=2, until=5, mode="replay_only"))
    assert seqs(got) == [3, 4, 5]
    got = await read_to_end(c.listen("feed", start_from=0, until=1, mode="replay_only"))
    assert seqs(got) == [1]
    got = await read_to_end(c.listen("feed", start_from=9, until=N + 50, mode="replay_only"))
    assert seqs(got) == [10, 11, 12]
    got = await read_to_end(
        c.listen(request=pyaviso.WatchRequest.replay_only("feed", 3, until=4).with_filter({"source": "s"}))
    )
    assert seqs(got) == [4]


@async_test
async def test_replay_from_date_with_and_without_end(start_herald, backend):
    h = start_herald({"feed": FEED})
    c = client(h.url)
    stored = await publish(c)
    times = {n.sequence: n.cloudevent["time"] for n in stored}

    def stored_between(start: str, end: str | None = None) -> list[int]:
        lo, hi = time_ns(start), time_ns(end) if end else None
        return [s for s, t in times.items() if time_ns(t) >= lo and (hi is None or time_ns(t) <= hi)]

    # From the stored time of notification 5 (inclusive, full precision).
    start = times[5]
    got = await read_to_end(c.listen("feed", start_from=start, mode="replay_only"))
    assert seqs(got) == stored_between(start)
    assert 5 in seqs(got) and 1 not in seqs(got)

    # From a date before everything, in the other forms the client passes on.
    for early in ("2000-01-01T00:00:00Z", "2000-01-01T02:00:00+02:00", "2000-01-01 00:00:00", "946684800"):
        got = await read_to_end(c.listen("feed", start_from=early, mode="replay_only"))
        assert seqs(got) == list(range(1, N + 1)), early

    # A future date: empty.
    assert await read_to_end(c.listen("feed", start_from="2999-01-01T00:00:00Z", mode="replay_only")) == []

    # Date to date, both inclusive.
    got = await read_to_end(c.listen("feed", start_from=times[3], until=times[8], mode="replay_only"))
    assert seqs(got) == stored_between(times[3], times[8])
    assert 3 in seqs(got) and 8 in seqs(got) and 9 not in seqs(got)

    # The kinds may be mixed: from a date to a sequence, from a sequence to a date.
    got = await read_to_end(c.listen("feed", start_from="2000-01-01T00:00:00Z", until=4, mode="replay_only"))
    assert seqs(got) == [1, 2, 3, 4]
    got = await read_to_end(c.listen("feed", start_from=6, until=times[9], mode="replay_only"))
    assert seqs(got) == [s for s in stored_between("2000-01-01T00:00:00Z", times[9]) if s > 6]


@async_test
async def test_watch_from_sequence_and_from_date_then_live(start_herald, backend):
    h = start_herald({"feed": FEED})
    c = client(h.url)
    stored = await publish(c)
    by_seq = c.listen("feed", start_from=N - 3)
    by_date = c.listen("feed", start_from=stored[N - 3].cloudevent["time"])
    try:
        assert seqs(await read_n(by_seq, 3)) == [N - 2, N - 1, N]
        history = await read_n(by_date, 3)
        assert seqs(history) == [N - 2, N - 1, N]
        # Both have gone live after their history: later notifications arrive.
        await c.notify(event_type="feed", identifier={"source": "s", "item": 99}, payload="later")
        for it in (by_seq, by_date):
            (n,) = await read_n(it, 1)
            assert (n.sequence, n.payload) == (N + 1, "later")
    finally:
        await by_seq.aclose()
        await by_date.aclose()


@async_test
async def test_end_cursor_before_start_is_refused(start_herald, backend):
    h = start_herald({"feed": FEED})
    c = client(h.url)
    await publish(c, 3)
    with pytest.raises(pyaviso.AvisoError):
        await read_to_end(c.listen("feed", start_from=3, until=2, mode="replay_only"))
    with pytest.raises(pyaviso.HttpError) as e:
        await read_to_end(c.listen("feed", start_from="2025-07-02T00:00:00Z", until="2025-07-01T00:00:00Z", mode="replay_only"))
    assert e.value.status == 400
