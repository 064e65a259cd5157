#!/usr/bin/env python3
"""A walk-through of herald's WebSocket session protocol (herald.v1).

    python3 -m venv build/venv && build/venv/bin/pip install websockets
    build/venv/bin/python examples/session.py [ws://localhost:8000/api/v1/session]

against `go run .` (the default config's `mars` event type). It subscribes
with a WHERE predicate, notifies, prints the event, publishes a producer
batch, and lets a DROPPING subscription fall behind a slow reader.
"""
import asyncio, itertools, json, socket, sys
from urllib.parse import urlparse

import websockets

URL = sys.argv[1] if len(sys.argv) > 1 else "ws://localhost:8000/api/v1/session"
ids = itertools.count(1)


def mars(step, cls="od"):
    return {"class": cls, "expver": "1", "domain": "g", "date": "2025-07-06",
            "time": "12", "stream": "enfo", "step": step}


# Frames that arrived while call() waited for a reply, per connection: a
# notification's event may reach its subscriber before the notify reply.
early = {}


async def call(ws, op, **fields):
    """Send one request and return its reply; frames before it are kept for next_frame."""
    rid = next(ids)
    await ws.send(json.dumps({"id": rid, "op": op, **fields}))
    while True:
        frame = json.loads(await ws.recv())
        if frame.get("type") == "reply" and frame["id"] == rid:
            return frame
        early.setdefault(ws, []).append(frame)


async def next_frame(ws):
    """The next frame of ws, in order, including those call() kept."""
    if early.get(ws):
        return early[ws].pop(0)
    return json.loads(await ws.recv())


def show(frame):
    if frame["type"] == "events":
        for ev in frame["events"]:
            print(f"  {frame['sub']}: {frame['phase']} {ev['id']} step={ev['data']['identifier']['step']}")
    else:
        print("  frame:", json.dumps(frame))


async def main():
    async with websockets.connect(URL, subprotocols=["herald.v1"]) as ws:
        welcome = json.loads(await ws.recv())
        print("welcome: session", welcome["session_id"], "limits", welcome["limits"])

        # A live subscription with a WHERE predicate on typed identifiers.
        r = await call(ws, "subscribe", name="late-steps", event_type="mars",
                       identifier={"class": "od"}, where="step >= 6 AND stream = 'enfo'")
        print("subscribed:", r["topic"], "boundary", r["boundary"])
        for step in (3, 12):
            r = await call(ws, "notify", event_type="mars", identifier=mars(step), payload={"step": step})
            print("notified:", r["notification_id"])
        show(await next_frame(ws))  # step 12 only: step 3 fails the WHERE
        await call(ws, "unsubscribe", name="late-steps")

        # A producer: batches with credit, one terminal reply per batch.
        r = await call(ws, "open_producer", producer="p", event_type="mars")
        print("producer: credit", r["credit"], "max_batch", r["max_batch"])
        r = await call(ws, "publish", producer="p", batch=[{"identifier": mars(s), "payload": None} for s in (24, 36, 48)])
        print("batch:", r["outcome"], r["ids"])

        # DROPPING: a reader with a tiny receive buffer sleeps while 20,000
        # notifications arrive; what its queue cannot hold is counted.
        u = urlparse(URL)
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect((u.hostname, u.port or 80))
        async with websockets.connect(URL, subprotocols=["herald.v1"], sock=sock, max_queue=1) as slow:
            await slow.recv()  # welcome
            await call(slow, "subscribe", name="all", event_type="mars", identifier={"class": "rd"}, mode="dropping")
            for _ in range(20):
                r = await call(ws, "publish", producer="p", batch=[{"identifier": mars(s % 361, "rd"), "payload": None} for s in range(1000)])
                assert r["outcome"] == "completed", r
            got = dropped = 0

            def count(frame):
                nonlocal got, dropped
                if frame["type"] == "dropped":
                    dropped += frame["count"]
                elif frame["type"] == "events":
                    got += len(frame["events"])
                    return frame["events"][-1]["id"]

            try:  # read what the queue held, until it is quiet
                while True:
                    count(await asyncio.wait_for(next_frame(slow), 1))
            except TimeoutError:
                pass
            # A count goes out before the subscription's next events: one
            # more notification brings the last one.
            last = (await call(ws, "notify", event_type="mars", identifier=mars(0, "rd"), payload="last"))["notification_id"]
            while count(await next_frame(slow)) != last:
                pass
            print(f"slow reader: {got} delivered + {dropped} dropped = {got + dropped} of 20001")
        await call(ws, "close_producer", producer="p")


asyncio.run(main())
