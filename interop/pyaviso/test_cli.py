"""The `aviso` command-line program (aviso-cli 2.4.2, shipped in the
pyaviso wheel) against herald, as users run it: a listener survives a
configuration reload (SIGHUP) and receives what is published after it,
and `aviso admin wipe-stream <event_type>` wipes an event type's stream.

aviso-cli accepts only end_of_stream, max_duration_reached and
server_shutdown as a connection-closing reason: any other ends its
listener for good. A reload that changes the event type ends the watch
with end_of_stream (herald's cause in an extra field), on which the
listener reconnects by itself and resumes after its last notification.
"""

from __future__ import annotations

import copy

import pyaviso

import avisocli
from heraldctl import MARS
from streams import sync_client


def mars(step: int) -> dict:
    return {"class": "od", "expver": "1", "domain": "g", "date": "20250706", "time": "1200", "stream": "enfo", "step": step}


def test_listener_survives_reload(start_herald, backend):
    h = start_herald({"mars": MARS})
    c = sync_client(h.url)
    listener = avisocli.Listener(h.url, "mars", {"class": "od"})
    try:
        listener.wait_for("the listener's stream", lambda: "client.watch.subscribed" in listener.log_events())
        c.notify(event_type="mars", identifier=mars(1), payload={"n": 1})
        listener.wait_for("notification 1", lambda: len(listener.notifications()) == 1)

        # A change of the event type's schema ends its open streams.
        cfg = copy.deepcopy(h.cfg)
        cfg["notification_schema"]["mars"]["identifier"]["class"]["values"].append("ei")
        h.reload(cfg)
        listener.wait_for("the reload's end of the stream", lambda: "client.connection.server_closed" in listener.log_events())

        c.notify(event_type="mars", identifier=mars(2), payload={"n": 2})
        c.notify(event_type="mars", identifier={**mars(3), "class": "ei"}, payload={"n": 3})  # the new value: filtered out
        c.notify(event_type="mars", identifier=mars(4), payload={"n": 4})
        listener.wait_for("notifications 2 and 4", lambda: len(listener.notifications()) == 3)
        assert listener.proc.poll() is None, f"the listener exited:\n{listener.output()}"
        got = listener.notifications()
        assert [(n["sequence"], n["payload"]) for n in got] == [(1, {"n": 1}), (2, {"n": 2}), (4, {"n": 4})]
        assert all(n["event_type"] == "mars" for n in got)
        # It reconnected once, on its own.
        assert listener.log_events().count("client.watch.subscribed") == 2, listener.output()
    finally:
        listener.stop()


def test_admin_wipe_stream_by_event_type(start_herald, backend):
    h = start_herald({"mars": MARS})
    c = sync_client(h.url)
    for step in (1, 2):
        c.notify(event_type="mars", identifier=mars(step))
    # The argument is the event type, as users type it.
    r = avisocli.run("admin", "wipe-stream", "mars", "--yes", "--base-url", h.url)
    assert r.returncode == 0, f"exit {r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr}"
    with c.listen(request=pyaviso.WatchRequest.replay_only("mars", 0).with_filter({"class": "od"})) as it:
        assert list(it) == []
    # The counter goes on after a wipe.
    assert c.notify(event_type="mars", identifier=mars(3)).status == "success"

    # An unknown stream is a 404 naming the known event types: the
    # command fails with the server's message.
    r = avisocli.run("admin", "wipe-stream", "nosuch", "--yes", "--base-url", h.url)
    assert r.returncode != 0
    assert "Stream not found: nosuch. Known event types: mars" in r.stdout + r.stderr, f"stdout: {r.stdout}\nstderr: {r.stderr}"


def test_aviso_cli_is_the_pinned_version():
    r = avisocli.run("--version")
    assert r.returncode == 0 and r.stdout.strip() == "aviso 2.4.2", r.stdout + r.stderr
