"""Publish through the client, then read back through the client: replay
and watch deliver the identifiers (canonical) and payloads (unchanged)
that were sent."""

from __future__ import annotations

import re

import pyaviso
import pytest

from heraldctl import ALERT, FEED, MARS
from streams import async_test, client, read_n, read_to_end, sync_client

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
PROCESSED_AT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")

# What is sent, and the identifier every reader must get back: canonical
# values, all strings (as Aviso writes its CloudEvents; docs/api.md).
SENT = [
    (
        {"class": "od", "expver": "1", "domain": "g", "date": "2025-07-06", "time": "12", "stream": "enfo", "step": 12},
        {"class": "od", "expver": "0001", "domain": "g", "date": "20250706", "time": "1200", "stream": "enfo", "step": "12"},
        {"path": "/data/od/enfo/20250706/12/step12.grib", "size": 1234, "checksum": None},
    ),
    (
        {"class": "OD", "expver": "prod", "domain": "M", "date": "20250707", "time": "6", "stream": "oper", "step": 0},
        {"class": "od", "expver": "prod", "domain": "m", "date": "20250707", "time": "0600", "stream": "oper", "step": "0"},
        ["a", 1, 2.5, True, None, {"nested": ["x"]}],
    ),
    (
        {"class": "rd", "expver": 42, "domain": "g", "date": "2025-188", "time": "18:30", "stream": "v.1", "step": "+240"},
        {"class": "rd", "expver": "0042", "domain": "g", "date": "20250707", "time": "1830", "stream": "v.1", "step": "240"},
        "plain text payload: ünïcødé ✓, quotes \" and a newline\n",
    ),
    (
        {"class": "ea", "expver": "0001", "domain": "g", "date": "2025-07-08", "time": "0000", "stream": "a*b>c%", "step": 360},
        {"class": "ea", "expver": "0001", "domain": "g", "date": "20250708", "time": "0000", "stream": "a*b>c%", "step": "360"},
        12.25,
    ),
    (
        # no payload at all: delivered as null
        {"class": "od", "expver": "", "domain": "g", "date": "2025-07-09", "time": "0", "stream": "enfo", "step": 6},
        {"class": "od", "expver": "0001", "domain": "g", "date": "20250709", "time": "0000", "stream": "enfo", "step": "6"},
        None,
    ),
]


def publish_all(url: str) -> None:
    c = sync_client(url)
    for ident, _, payload in SENT:
        if payload is None:
            r = c.notify(event_type="mars", identifier=ident)
        else:
            r = c.notify(event_type="mars", identifier=ident, payload=payload)
        assert r.status == "success"
        assert UUID.match(r.request_id), r.request_id
        assert PROCESSED_AT.match(r.processed_at), r.processed_at


def check_delivered(got: list, url: str, first_seq: int = 1) -> None:
    assert [n.sequence for n in got] == list(range(first_seq, first_seq + len(SENT)))
    for n, (_, canonical, payload) in zip(got, SENT):
        assert n.event_type == "mars"
        assert n.identifier == canonical
        assert n.payload == payload
        ce = n.cloudevent
        assert ce["specversion"] == "1.0"
        assert ce["id"] == f"mars@{n.sequence}"
        assert ce["type"] == "int.ecmwf.aviso.mars"
        assert ce["source"] == url
        assert ce["dataschema"] == f"{url}/schema/mars"
        assert ce["datacontenttype"] == "application/json"
        assert ce["data"] == {"identifier": canonical, "payload": payload}


@async_test
async def test_notify_then_replay_returns_what_was_sent(start_herald, backend):
    h = start_herald({"mars": MARS})
    publish_all(h.url)
    c = client(h.url)
    got = await read_to_end(c.listen("mars", filter={"class": {"in": ["od", "rd", "ea"]}}, start_from=0, mode="replay_only"))
    check_delivered(got, h.url)


def test_sync_iterator_replay(start_herald):
    """The synchronous client's iterator (what most scripts use) ends after
    a replay-only listen."""
    h = start_herald({"mars": MARS})
    publish_all(h.url)
    c = sync_client(h.url)
    with c.listen(request=pyaviso.WatchRequest.replay_only("mars", 0).with_filter({"class": {"in": ["od", "rd", "ea"]}, "domain": "g"})) as it:
        got = list(it)
    assert [n.identifier["domain"] for n in got] == ["g", "g", "g", "g"]
    assert [n.sequence for n in got] == [1, 3, 4, 5]


@async_test
async def test_watch_from_start_replays_then_delivers_live(start_herald, backend):
    h = start_herald({"mars": MARS})
    publish_all(h.url)
    c = client(h.url)
    it = c.listen("mars", filter={"class": {"in": ["od", "rd", "ea"]}}, start_from=0)
    try:
        check_delivered(await read_n(it, len(SENT)), h.url)
        # Published after the history was read: arrives live, on the same
        # listener, with the next sequences.
        publish_all(h.url)
        check_delivered(await read_n(it, len(SENT)), h.url, first_seq=len(SENT) + 1)
    finally:
        await it.aclose()


@async_test
async def test_async_notify_and_notify_many(start_herald, backend):
    h = start_herald({"feed": FEED})
    c = client(h.url)
    r = await c.notify(event_type="feed", identifier={"source": "one", "item": 1}, payload={"n": 1})
    assert r.status == "success"
    batch = [{"event_type": "feed", "identifier": {"source": "many", "item": i}, "payload": {"n": i}} for i in range(2, 22)]
    results = await c.notify_many(batch)
    assert [(r.index, r.ok) for r in results] == [(i, True) for i in range(20)]
    got = await read_to_end(c.listen("feed", start_from=0, mode="replay_only"))
    # notify_many may send concurrently: every notification is there once,
    # with dense sequences, in some order.
    assert [n.sequence for n in got] == list(range(1, 22))
    assert sorted(n.payload["n"] for n in got) == list(range(1, 22))
    for n in got:
        source = "one" if n.payload["n"] == 1 else "many"
        assert n.identifier == {"source": source, "item": str(n.payload["n"])}


def test_schema_discovery(start_herald):
    h = start_herald({"mars": MARS, "alert": ALERT})
    c = sync_client(h.url)
    cat = c.schema()
    assert cat.status == "success"
    assert sorted(cat.event_types) == ["alert", "mars"]
    assert cat.total_schemas == 2
    one = c.schema_for("mars")
    assert one.event_type == "mars"
    ident = one.schema["identifier"]
    assert ident["class"]["type"] == "EnumHandler"
    assert ident["class"]["required"] is True
    assert ident["step"]["range"] == [0, 360]
    with pytest.raises(pyaviso.HttpError) as e:
        c.schema_for("nope")
    assert e.value.status == 404


def test_client_errors_carry_status_and_request_id(start_herald):
    h = start_herald({"mars": MARS})
    c = sync_client(h.url)
    with pytest.raises(pyaviso.HttpError) as e:
        c.notify(event_type="unknown", identifier={"class": "od"})
    assert e.value.status == 400
    assert UUID.match(e.value.request_id or ""), e.value.request_id
    assert "UNKNOWN_EVENT_TYPE" in e.value.body
    with pytest.raises(pyaviso.HttpError) as e:
        # step is outside its range [0, 360]
        c.notify(event_type="mars", identifier={**SENT[0][0], "step": 999})
    assert e.value.status == 400
    assert "INVALID_NOTIFICATION_REQUEST" in e.value.body


@async_test
async def test_schemaless_server(start_herald):
    """No schema at all (Aviso's generic mode): the schema list is empty
    (and decodes), any event type is accepted, and a watcher filtering on
    all its identifiers gets its notifications back."""
    h = start_herald({}, strict=False)
    c = client(h.url)
    cat = await c.schema()
    assert (cat.event_types, cat.total_schemas, cat.schema) == ([], 0, {})
    await c.notify(event_type="build", identifier={"project": "herald", "branch": "main"}, payload={"ok": True})
    await c.notify(event_type="build", identifier={"project": "herald", "branch": "dev"}, payload={"ok": False})
    got = await read_to_end(c.listen("build", filter={"project": "herald", "branch": "main"}, start_from=0, mode="replay_only"))
    assert [(n.event_type, n.sequence, n.identifier, n.payload) for n in got] == [
        ("build", 1, {"branch": "main", "project": "herald"}, {"ok": True})
    ]


def test_strict_server_without_schema_refuses_every_event_type(start_herald):
    h = start_herald({}, strict=True)
    c = sync_client(h.url)
    assert c.schema().event_types == []
    with pytest.raises(pyaviso.HttpError) as e:
        c.notify(event_type="build", identifier={"project": "herald"})
    assert e.value.status == 400
    assert '"configured_event_types":[]' in e.value.body
