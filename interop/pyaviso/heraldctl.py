"""Build, configure, start and stop herald for the interop suite.

Nothing here talks the Aviso protocol: the tests drive herald only through
the pyaviso client. This module only runs the server: `go build` of the
repository, a config file of the test's own on a free loopback port, a
wait for /health, and SIGTERM (graceful drain) to stop it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# The environment as the suite found it. conftest points HOME elsewhere for
# the client; go build (module and build caches) and herald get this one.
ORIG_ENV = dict(os.environ)

# How long herald may take to answer /health after it was started, and to
# exit after SIGTERM.
START_TIMEOUT = 20.0
STOP_TIMEOUT = 15.0
# How long a SIGHUP reload may take to be logged.
RELOAD_TIMEOUT = 20.0


def build_herald(out_dir: Path) -> Path:
    """Builds herald from the repository with `go build` into out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    binary = out_dir / "herald"
    proc = subprocess.run(
        ["go", "build", "-o", str(binary), "."],
        cwd=REPO,
        env=ORIG_ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"go build failed (exit {proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return binary


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- configuration --------------------------------------------------------

# The event types of the suite. Each test server gets the ones it needs.

MARS = {
    "payload": {"required": False},
    "topic": {"base": "mars", "key_order": ["class", "expver", "domain", "date", "time", "stream", "step"]},
    "identifier": {
        "class": {"type": "EnumHandler", "values": ["od", "rd", "ea"], "required": True},
        "expver": {"type": "ExpverHandler", "default": "0001", "required": False},
        "domain": {"type": "EnumHandler", "values": ["g", "m"], "required": False},
        "date": {"type": "DateHandler", "canonical_format": "%Y%m%d", "required": False},
        "time": {"type": "TimeHandler", "required": False},
        "stream": {"type": "StringHandler", "max_length": 8, "required": False},
        "step": {"type": "IntHandler", "range": [0, 360], "required": False},
    },
}

# No required field: a watcher may leave the filter empty (an unfiltered
# watcher, whose sequence gaps the client treats as lost history).
FEED = {
    "payload": {"required": False},
    "topic": {"base": "feed", "key_order": ["source", "item"]},
    "identifier": {
        "source": {"type": "StringHandler", "required": False},
        "item": {"type": "IntHandler", "required": False},
    },
}

# A schema-level historical cap of 5 notifications per request.
CAPPED = {
    "payload": {"required": False},
    "topic": {"base": "capped", "key_order": ["kind", "n"]},
    "identifier": {
        "kind": {"type": "EnumHandler", "values": ["a", "b"], "required": False},
        "n": {"type": "IntHandler", "required": False},
    },
    "max_historical_notifications": 5,
}
CAPPED_MAX = 5

# Notifications carry an area; watchers filter by a point or a polygon.
ALERT = {
    "payload": {"required": True},
    "topic": {"base": "alert", "key_order": ["region", "severity", "anomaly"]},
    "identifier": {
        "region": {"type": "EnumHandler", "values": ["europe", "africa"], "required": True},
        "severity": {"type": "IntHandler", "range": [1, 5], "required": False},
        "anomaly": {"type": "FloatHandler", "required": False},
        "polygon": {"type": "PolygonHandler", "required": False},
    },
}

# Read and write restricted to roles of realm "ecmwf".
SECURE = {
    "payload": {"required": False},
    "topic": {"base": "secure", "key_order": ["desk"]},
    "identifier": {"desk": {"type": "StringHandler", "required": False}},
    "auth": {
        "required": True,
        "read_roles": {"ecmwf": ["reader"]},
        "write_roles": {"ecmwf": ["writer"]},
    },
}

JWT_SECRET = "interop-test-secret-not-for-production"


def config(
    port: int,
    schemas: dict,
    *,
    backend: dict | None = None,
    watch: dict | None = None,
    auth: dict | None = None,
    strict: bool | None = None,
) -> dict:
    """An Aviso config for one test server on 127.0.0.1:port. strict sets
    notification_schema_strict (unset: strict iff a schema is configured)."""
    cfg = {
        "application": {
            "host": "127.0.0.1",
            "port": port,
            "base_url": f"http://127.0.0.1:{port}",
            # Open streams get server_shutdown at once; this bounds the drain.
            "shutdown_grace_sec": 2,
        },
        "logging": {"level": "info"},
        "notification_backend": backend
        or {"kind": "in_memory", "in_memory": {"max_history_per_topic": 100000, "max_topics": 100000}},
        "watch_endpoint": {
            "sse_heartbeat_interval_sec": 5,
            "connection_max_duration_sec": 3600,
            "replay_batch_size": 100,
            # Aviso's default pause between history batches is 100 ms; the
            # suite replays thousands of notifications, so it uses 0.
            "replay_batch_delay_ms": 0,
            "max_historical_notifications": 10000,
        },
        "notification_schema": schemas,
    }
    if watch:
        cfg["watch_endpoint"].update(watch)
    if auth:
        cfg["auth"] = auth
    if strict is not None:
        cfg["notification_schema_strict"] = strict
    return cfg


def jetstream_backend(data_dir: Path) -> dict:
    """The JetStream backend with an embedded server storing in data_dir."""
    return {"kind": "jetstream", "jetstream": {"data_dir": str(data_dir)}}


def keep_all_history(schemas: dict) -> dict:
    """The schemas with storage_policy allow_duplicates: true. On JetStream,
    Aviso's default keeps only the newest notification per exact subject;
    the tests expect every notification in history, as in_memory with a
    large max_history_per_topic gives them."""
    return {name: {**s, "storage_policy": {**s.get("storage_policy", {}), "allow_duplicates": True}} for name, s in schemas.items()}


# --- the process ----------------------------------------------------------


class Herald:
    """One herald process: config file, log file, start, stop, restart.

    The config is written as JSON, which is YAML too. The port stays the
    same across restarts, so a client keeps its base URL.
    """

    def __init__(self, binary: Path, workdir: Path, cfg: dict):
        self.binary = binary
        self.workdir = workdir
        self.cfg = cfg
        self.port = cfg["application"]["port"]
        self.url = f"http://127.0.0.1:{self.port}"
        self.config_path = workdir / "config.yaml"
        self.log_path = workdir / "herald.log"
        self.proc: subprocess.Popen | None = None
        workdir.mkdir(parents=True, exist_ok=True)

    def start(self) -> None:
        """Starts herald and returns once /health answers 200."""
        assert self.proc is None, "herald is already running"
        self.config_path.write_text(json.dumps(self.cfg, indent=2) + "\n")
        env = {k: v for k, v in ORIG_ENV.items() if not k.startswith(("HERALD_", "AVISOSERVER_"))}
        log = open(self.log_path, "ab")
        log.write(f"--- starting herald on port {self.port}\n".encode())
        log.flush()
        self.proc = subprocess.Popen(
            [str(self.binary), "serve", "--config", str(self.config_path)],
            cwd=self.workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            code = self.proc.poll()
            if code is not None:
                self.proc = None
                raise RuntimeError(f"herald exited with code {code} during startup:\n{self.log_tail()}")
            if self._healthy():
                return
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"herald did not answer /health within {START_TIMEOUT}s:\n{self.log_tail()}")
            time.sleep(0.05)

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.url + "/health", timeout=1) as r:
                return r.status == 200
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            return False

    def stop(self) -> int | None:
        """Stops herald with SIGTERM (graceful drain) and returns its exit
        code; it is killed if it has not exited within STOP_TIMEOUT."""
        if self.proc is None:
            return None
        proc, self.proc = self.proc, None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                return proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(STOP_TIMEOUT)
                raise RuntimeError(f"herald did not stop within {STOP_TIMEOUT}s of SIGTERM:\n{self.log_tail()}")
        return proc.returncode

    def reload(self, cfg: dict) -> None:
        """Writes cfg as the config file, sends SIGHUP and returns once
        herald logged that the configuration was reloaded."""
        assert self.proc is not None, "herald is not running"
        marker = '"msg":"configuration reloaded"'
        before = self._log_text().count(marker)
        self.cfg = cfg
        self.config_path.write_text(json.dumps(cfg, indent=2) + "\n")
        self.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + RELOAD_TIMEOUT
        while self._log_text().count(marker) <= before:
            if time.monotonic() > deadline:
                raise RuntimeError(f"herald did not log a reload within {RELOAD_TIMEOUT}s of SIGHUP:\n{self.log_tail()}")
            time.sleep(0.05)

    def _log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


# --- tokens ---------------------------------------------------------------


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hs256_token(claims: dict, secret: str = JWT_SECRET) -> str:
    """A JWT signed with HMAC-SHA256, as an authenticating proxy issues it."""
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    body = _b64url(json.dumps(claims, separators=(",", ":")).encode())
    signing_input = f"{header}.{body}".encode()
    sig = hmac.new(secret.encode(), signing_input, hashlib.sha256).digest()
    return f"{header}.{body}.{_b64url(sig)}"


def user_token(username: str, roles: list[str], realm: str = "ecmwf", ttl: int = 3600) -> str:
    return hs256_token({"username": username, "realm": realm, "roles": roles, "exp": int(time.time()) + ttl})
