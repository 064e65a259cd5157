"""Resume across a herald restart (JetStream engine, same store directory).

An unfiltered listener is running when herald stops. The client keeps its
cursor and reconnects with from_id = last sequence + 1 once herald is back
on the same port; it must then get every later notification exactly once:
no gap (its gap detection would raise HistoryGapError) and no duplicate.
"""

from __future__ import annotations

from heraldctl import FEED, jetstream_backend, keep_all_history
from streams import async_test, client, nothing_more, read_n, read_to_end

# JetStream keeps one message per subject unless duplicates are allowed;
# every notification here has its own subject anyway.
SCHEMAS = keep_all_history({"feed": FEED})


async def publish(c, first: int, last: int) -> None:
    for i in range(first, last + 1):
        await c.notify(event_type="feed", identifier={"source": f"s{i % 3}", "item": i}, payload={"i": i})


def check(got: list, first: int, last: int) -> None:
    assert [n.sequence for n in got] == list(range(first, last + 1))
    assert [n.payload for n in got] == [{"i": i} for i in range(first, last + 1)]


@async_test
async def test_listener_resumes_after_restart_without_gap_or_duplicate(start_herald, tmp_path):
    store = tmp_path / "jetstream"
    h = start_herald(SCHEMAS, backend=jetstream_backend(store))
    c = client(h.url)
    await publish(c, 1, 40)
    it = c.listen("feed", start_from=0)  # unfiltered: the client checks for jumps
    try:
        check(await read_n(it, 40), 1, 40)  # history
        await publish(c, 41, 60)
        check(await read_n(it, 20), 41, 60)  # live

        # Stop herald while the listener runs: the open stream is closed
        # with server_shutdown and nothing answers on the port.
        assert h.stop() == 0
        await nothing_more(it, 0.5)

        # Same port, same store. What is published right away is most
        # likely stored before the client has reconnected (history of its
        # resumed watch), what follows once it is reading again is live.
        h.start()
        await publish(c, 61, 90)
        check(await read_n(it, 30, timeout=60), 61, 90)
        await publish(c, 91, 110)
        check(await read_n(it, 20), 91, 110)

        # A second restart, with nothing published while herald is away.
        assert h.stop() == 0
        h.start()
        await publish(c, 111, 120)
        check(await read_n(it, 10, timeout=60), 111, 120)
        await nothing_more(it, 0.5)
    finally:
        await it.aclose()
    # The store survived both restarts: a new replay sees everything once.
    everything = await read_to_end(c.listen("feed", start_from=0, mode="replay_only"))
    check(everything, 1, 120)
