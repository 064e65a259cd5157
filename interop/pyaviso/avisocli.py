"""Runs the `aviso` command-line program that the pinned pyaviso wheel
installs (aviso-cli, the same Rust client), as users run it.

The suite's other tests use pyaviso's Python API; these helpers start the
real `aviso` executable from the suite's virtual environment, read what it
prints on stdout (one JSON notification per line when piped) and stderr
(its log, JSON lines with -v), and wait on conditions with deadlines.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

# The executable beside the interpreter of the virtual environment.
AVISO = Path(sys.executable).parent / "aviso"

# How long a command may run, and how long a condition may take.
COMMAND_TIMEOUT = 60.0
WAIT_TIMEOUT = 30.0


def run(*args: str, timeout: float = COMMAND_TIMEOUT) -> subprocess.CompletedProcess:
    """Runs `aviso args...` to its end and returns the finished process
    (stdout, stderr and returncode)."""
    return subprocess.run([str(AVISO), *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


class Listener:
    """A running `aviso -v listen` of one event type and identifier
    filter, with its output collected line by line."""

    def __init__(self, base_url: str, event_type: str, identifiers: dict):
        self.proc = subprocess.Popen(
            [str(AVISO), "-v", "listen", "--base-url", base_url, "--event", event_type,
             "--identifiers", json.dumps(identifiers), "--no-state-store"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._lock = threading.Lock()
        self._out: list[str] = []
        self._err: list[str] = []
        self._threads = [
            threading.Thread(target=self._read, args=(self.proc.stdout, self._out), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stderr, self._err), daemon=True),
        ]
        for t in self._threads:
            t.start()

    def _read(self, stream, into: list[str]) -> None:
        for line in stream:
            with self._lock:
                into.append(line.rstrip("\n"))

    def notifications(self) -> list[dict]:
        """The notifications printed so far (stdout's JSON lines)."""
        with self._lock:
            lines = list(self._out)
        return [json.loads(line) for line in lines if line.startswith("{")]

    def log_events(self) -> list[str]:
        """The event.name of each JSON log line on stderr so far."""
        with self._lock:
            lines = list(self._err)
        names = []
        for line in lines:
            if line.startswith("{"):
                try:
                    names.append(json.loads(line).get("attributes", {}).get("event.name", ""))
                except json.JSONDecodeError:
                    pass
        return names

    def wait_for(self, what: str, cond: Callable[[], bool], timeout: float = WAIT_TIMEOUT) -> None:
        """Waits until cond() holds; fails with what it waited for, the
        listener's output and its exit status if it ended meanwhile."""
        deadline = time.monotonic() + timeout
        while not cond():
            if self.proc.poll() is not None and not cond():
                raise AssertionError(f"aviso listen exited with {self.proc.returncode} while waiting for {what}:\n{self.output()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout}s waiting for {what}:\n{self.output()}")
            time.sleep(0.05)

    def output(self) -> str:
        with self._lock:
            return "stdout:\n" + "\n".join(self._out) + "\nstderr:\n" + "\n".join(self._err[-30:])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        for t in self._threads:
            t.join(5)
