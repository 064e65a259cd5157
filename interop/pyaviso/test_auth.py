"""A client configured with a Bearer token against a stream with read and
write roles (auth mode trusted_proxy: herald verifies the HS256 JWT an
authenticating proxy would forward)."""

from __future__ import annotations

import time

import pyaviso
import pytest

from heraldctl import FEED, JWT_SECRET, SECURE, hs256_token, user_token
from streams import async_test, client, read_to_end

AUTH = {
    "enabled": True,
    "mode": "trusted_proxy",
    "jwt_secret": JWT_SECRET,
    "admin_roles": {"ecmwf": ["admin"]},
}


@async_test
async def test_bearer_token_with_read_and_write_roles(start_herald):
    h = start_herald({"secure": SECURE, "feed": FEED}, auth=AUTH)
    writer_reader = client(h.url, auth=pyaviso.Bearer(user_token("ada", ["reader", "writer"])))
    assert writer_reader.config.auth.kind == "bearer"

    # Write role: notify is accepted; read role: replay returns it.
    r = await writer_reader.notify(event_type="secure", identifier={"desk": "ops"}, payload={"secret": 1})
    assert r.status == "success"
    got = await read_to_end(writer_reader.listen("secure", start_from=0, mode="replay_only"))
    assert [(n.sequence, n.identifier, n.payload) for n in got] == [(1, {"desk": "ops"}, {"secret": 1})]

    # Read role only: may replay, may not notify.
    reader = client(h.url, auth=pyaviso.Bearer(user_token("bob", ["reader"])))
    assert len(await read_to_end(reader.listen("secure", start_from=0, mode="replay_only"))) == 1
    with pytest.raises(pyaviso.HttpError) as e:
        await reader.notify(event_type="secure", identifier={"desk": "ops"})
    assert e.value.status == 403

    # Write role only: may notify, may not read.
    writer = client(h.url, auth=pyaviso.Bearer(user_token("cy", ["writer"])))
    await writer.notify(event_type="secure", identifier={"desk": "ops"}, payload={"secret": 2})
    with pytest.raises(pyaviso.HttpError) as e:
        await read_to_end(writer.listen("secure", start_from=0, mode="replay_only"))
    assert e.value.status == 403

    # No credential: 401 on both; a token of another realm or signed with
    # another secret: refused too.
    anonymous = client(h.url)
    with pytest.raises(pyaviso.HttpError) as e:
        await read_to_end(anonymous.listen("secure", start_from=0, mode="replay_only"))
    assert e.value.status == 401
    with pytest.raises(pyaviso.HttpError) as e:
        await anonymous.notify(event_type="secure", identifier={"desk": "ops"})
    assert e.value.status == 401
    other_realm = client(h.url, auth=pyaviso.Bearer(user_token("dan", ["reader", "writer"], realm="elsewhere")))
    with pytest.raises(pyaviso.HttpError) as e:
        await read_to_end(other_realm.listen("secure", start_from=0, mode="replay_only"))
    assert e.value.status == 403
    # A token herald cannot verify is a 401: a listener reports it as
    # AuthError (the credential was rejected), notify as HttpError 401.
    forged = hs256_token({"username": "eve", "realm": "ecmwf", "roles": ["reader"], "exp": int(time.time()) + 60}, "wrong")
    with pytest.raises(pyaviso.AuthError):
        await read_to_end(client(h.url, auth=pyaviso.Bearer(forged)).listen("secure", start_from=0, mode="replay_only"))
    expired = user_token("eve", ["reader"], ttl=-60)
    with pytest.raises(pyaviso.AuthError):
        await read_to_end(client(h.url, auth=pyaviso.Bearer(expired)).listen("feed", start_from=0, mode="replay_only"))
    with pytest.raises(pyaviso.HttpError) as e:
        await client(h.url, auth=pyaviso.Bearer(expired)).notify(event_type="feed", identifier={"source": "x", "item": 1})
    assert e.value.status == 401

    # The bearer is a reader of every stream without auth, and of the
    # secured one it has both writes in order.
    await anonymous.notify(event_type="feed", identifier={"source": "public", "item": 1}, payload="open")
    got = await read_to_end(writer_reader.listen("feed", start_from=0, mode="replay_only"))
    assert [n.payload for n in got] == ["open"]
    got = await read_to_end(writer_reader.listen("secure", filter={"desk": "ops"}, start_from=0, mode="replay_only"))
    assert [n.payload for n in got] == [{"secret": 1}, {"secret": 2}]

    # Admin endpoints through the client: an admin token may delete, a
    # reader/writer may not, and without a credential it is a 401.
    with pytest.raises(pyaviso.HttpError) as e:
        await writer_reader.delete_notification("secure@1")
    assert e.value.status == 403
    with pytest.raises(pyaviso.HttpError) as e:
        await anonymous.wipe_stream("SECURE")
    assert e.value.status == 401
    admin = client(h.url, auth=pyaviso.Bearer(user_token("root", ["admin"])))
    await admin.delete_notification("secure@1")
    got = await read_to_end(admin.listen("secure", filter={"desk": "ops"}, start_from=0, mode="replay_only"))
    assert [n.sequence for n in got] == [2]
