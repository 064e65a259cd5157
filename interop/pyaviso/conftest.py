"""Fixtures of the pyaviso interop suite: herald built once per session,
and test servers started from a config of each test's own."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import heraldctl

# The client reads its address, credentials and settings from AVISO_*
# variables and from ~/.config/aviso; the tests pass everything in code,
# so nothing of the developer's own setup may leak in.
for _k in [k for k in os.environ if k.startswith("AVISO_")]:
    del os.environ[_k]
_home = tempfile.mkdtemp(prefix="herald-interop-home-")
atexit.register(shutil.rmtree, _home, ignore_errors=True)
os.environ["HOME"] = _home
os.environ["XDG_CONFIG_HOME"] = os.path.join(_home, ".config")


@pytest.fixture(scope="session")
def herald_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """herald built from this repository with `go build`, once per session,
    into $HERALD_INTEROP_BUILD_DIR (default build/interop)."""
    out = Path(os.environ.get("HERALD_INTEROP_BUILD_DIR") or heraldctl.REPO / "build" / "interop")
    return heraldctl.build_herald(out)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


@pytest.fixture(params=["in_memory", "jetstream"])
def backend(request: pytest.FixtureRequest) -> str:
    """The notification backend kind; a test that takes this fixture runs
    once per engine, and start_herald uses it."""
    return request.param


@pytest.fixture
def start_herald(herald_binary: Path, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Callable[..., heraldctl.Herald]]:
    """start_herald(schemas, **config_options) starts a herald on a free
    loopback port with a config of the test's own and returns it (url,
    stop(), start() again on the same port). Its backend is in_memory, or
    the `backend` fixture's when the test takes it. Every server is stopped
    after the test; when the test failed, the end of each server's log is
    shown."""
    servers: list[heraldctl.Herald] = []

    kind = request.getfixturevalue("backend") if "backend" in request.fixturenames else "in_memory"

    def start(schemas: dict, *, port: int | None = None, **options) -> heraldctl.Herald:
        workdir = tmp_path / f"herald{len(servers)}"
        if kind == "jetstream" and "backend" not in options:
            options["backend"] = heraldctl.jetstream_backend(workdir / "jetstream")
            schemas = heraldctl.keep_all_history(schemas)
        cfg = heraldctl.config(port or heraldctl.free_port(), schemas, **options)
        h = heraldctl.Herald(herald_binary, workdir, cfg)
        servers.append(h)
        h.start()
        return h

    yield start
    failed = getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed
    for h in servers:
        h.stop()
        if failed:
            print(f"--- herald log ({h.log_path}), last lines:\n{h.log_tail()}")
