"""Identifier filters, constraint filters and spatial filters, written as
the client's `filter` argument."""

from __future__ import annotations

import pyaviso
import pytest

from heraldctl import ALERT, MARS
from streams import async_test, client, read_to_end

# (identifier, payload) in publish order; the payload names the entry.
FORECASTS = [
    ({"class": "od", "expver": "1", "domain": "g", "date": "2025-07-06", "time": "00", "stream": "enfo", "step": 0}, "od-enfo-0"),
    ({"class": "od", "expver": "1", "domain": "g", "date": "2025-07-06", "time": "00", "stream": "enfo", "step": 6}, "od-enfo-6"),
    ({"class": "od", "expver": "1", "domain": "g", "date": "2025-07-06", "time": "12", "stream": "enfo", "step": 12}, "od-enfo-12"),
    ({"class": "od", "expver": "1", "domain": "m", "date": "2025-07-06", "time": "00", "stream": "oper", "step": 24}, "od-oper-24"),
    ({"class": "rd", "expver": "xyz", "domain": "g", "date": "2025-07-07", "time": "00", "stream": "enfo", "step": 48}, "rd-enfo-48"),
    ({"class": "od", "expver": "2", "domain": "g", "date": "2025-07-07", "time": "06", "stream": "oper", "step": 240}, "od-oper-240"),
    ({"class": "ea", "expver": "1", "domain": "m", "date": "2025-07-07", "time": "18", "stream": "a.b", "step": 360}, "ea-ab-360"),
]

# filter -> payloads expected, in sequence order
CASES = [
    # exact identifier filters (values canonicalised like the notification's)
    ({"class": "od"}, ["od-enfo-0", "od-enfo-6", "od-enfo-12", "od-oper-24", "od-oper-240"]),
    ({"class": "OD", "stream": "enfo"}, ["od-enfo-0", "od-enfo-6", "od-enfo-12"]),
    ({"class": "od", "date": "20250706", "time": "0"}, ["od-enfo-0", "od-enfo-6", "od-oper-24"]),
    ({"class": "od", "date": "2025-187"}, ["od-enfo-0", "od-enfo-6", "od-enfo-12", "od-oper-24"]),
    ({"class": "od", "expver": 2}, ["od-oper-240"]),
    ({"class": "rd", "expver": "XYZ"}, ["rd-enfo-48"]),
    ({"class": "ea", "stream": "a.b"}, ["ea-ab-360"]),
    ({"class": "od", "step": 12}, ["od-enfo-12"]),
    ({"class": "od", "step": "6"}, ["od-enfo-6"]),
    ({"class": "od", "stream": "nothing"}, []),
    # integer constraints
    ({"class": "od", "step": {"gte": 12}}, ["od-enfo-12", "od-oper-24", "od-oper-240"]),
    ({"class": "od", "step": {"gt": 12}}, ["od-oper-24", "od-oper-240"]),
    ({"class": "od", "step": {"lt": 12}}, ["od-enfo-0", "od-enfo-6"]),
    ({"class": "od", "step": {"lte": 6}}, ["od-enfo-0", "od-enfo-6"]),
    ({"class": "od", "step": {"eq": 24}}, ["od-oper-24"]),
    ({"class": "od", "step": {"in": [0, 24, 48]}}, ["od-enfo-0", "od-oper-24"]),
    ({"class": "od", "step": {"between": [6, 24]}}, ["od-enfo-6", "od-enfo-12", "od-oper-24"]),
    # enum constraints
    ({"class": {"in": ["rd", "ea"]}}, ["rd-enfo-48", "ea-ab-360"]),
    ({"class": {"eq": "ea"}}, ["ea-ab-360"]),
    ({"class": {"in": ["od", "rd"]}, "domain": {"in": ["M"]}}, ["od-oper-24"]),
    # several at once
    ({"class": {"in": ["od", "rd"]}, "stream": "enfo", "step": {"between": [1, 48]}}, ["od-enfo-6", "od-enfo-12", "rd-enfo-48"]),
]


@async_test
async def test_identifier_and_constraint_filters(start_herald, backend):
    h = start_herald({"mars": MARS})
    c = client(h.url)
    for ident, payload in FORECASTS:
        await c.notify(event_type="mars", identifier=ident, payload=payload)
    for flt, want in CASES:
        got = await read_to_end(c.listen("mars", filter=flt, start_from=0, mode="replay_only"))
        assert [n.payload for n in got] == want, f"filter {flt}"


EUROPE = [[50.0, 0.0], [50.0, 10.0], [55.0, 10.0], [55.0, 0.0], [50.0, 0.0]]
SAHARA = [[20.0, 0.0], [20.0, 10.0], [25.0, 10.0], [25.0, 0.0], [20.0, 0.0]]


@async_test
async def test_float_and_spatial_filters(start_herald, backend):
    h = start_herald({"alert": ALERT})
    c = client(h.url)
    await c.notify(event_type="alert", identifier={"region": "europe", "severity": 3, "anomaly": 1.5, "polygon": EUROPE}, payload="storm")
    await c.notify(event_type="alert", identifier={"region": "africa", "severity": 5, "anomaly": 42.25, "polygon": SAHARA}, payload="heat")
    await c.notify(event_type="alert", identifier={"region": "europe", "severity": 1, "anomaly": -0.5, "polygon": EUROPE}, payload="breeze")

    async def payloads(flt):
        return [n.payload for n in await read_to_end(c.listen("alert", filter=flt, start_from=0, mode="replay_only"))]

    assert await payloads({"region": {"in": ["europe", "africa"]}, "anomaly": {"gte": 1.5}}) == ["storm", "heat"]
    assert await payloads({"region": "europe", "anomaly": {"lt": 0}}) == ["breeze"]
    assert await payloads({"region": "europe", "anomaly": 1.5}) == ["storm"]
    assert await payloads({"region": {"in": ["europe", "africa"]}, "point": [52.5, 5.0]}) == ["storm", "breeze"]
    assert await payloads({"region": {"in": ["europe", "africa"]}, "point": "22.0,5.0"}) == ["heat"]
    assert await payloads({"region": {"in": ["europe", "africa"]}, "point": [0.0, 0.0]}) == []
    overlap = [[54.0, 9.0], [54.0, 20.0], [60.0, 20.0], [60.0, 9.0], [54.0, 9.0]]
    assert await payloads({"region": {"in": ["europe", "africa"]}, "polygon": overlap}) == ["storm", "breeze"]
    # The stored polygon comes back in the identifier, as an array.
    got = await read_to_end(c.listen("alert", filter={"region": "africa"}, start_from=0, mode="replay_only"))
    assert got[0].identifier == {"region": "africa", "severity": "5", "anomaly": "42.25", "polygon": SAHARA}


@pytest.mark.parametrize(
    "flt",
    [
        {"class": "od", "step": {"gte": 400}},  # outside the field's range
        {"class": "od", "step": {"gte": 1, "lte": 5}},  # two operators
        {"class": "od", "stream": {"in": ["enfo"]}},  # no constraints on strings
        {"class": "zz"},  # not an allowed value
    ],
)
@async_test
async def test_invalid_filters_are_refused(start_herald, flt):
    h = start_herald({"mars": MARS})
    c = client(h.url)
    with pytest.raises(pyaviso.HttpError) as e:
        await read_to_end(c.listen("mars", filter=flt, start_from=0, mode="replay_only"))
    assert e.value.status == 400
    assert "INVALID_REPLAY_REQUEST" in e.value.body
