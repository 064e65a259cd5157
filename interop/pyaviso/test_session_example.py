"""The README's WebSocket walk-through: examples/session.py (a client on
the `websockets` library) against herald, on both backends. Its output is
checked line by line, so the walk-through cannot silently rot."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from heraldctl import MARS

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "session.py"


def test_session_walkthrough(start_herald, backend):
    h = start_herald({"mars": MARS})
    url = h.url.replace("http://", "ws://") + "/api/v1/session"
    run = subprocess.run([sys.executable, str(EXAMPLE), url], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("welcome: session ") and "'session_queue_frames': 1024" in lines[0]
    assert lines[1:7] == [
        "subscribed: mars.od.*.*.*.*.*.* boundary mars@0",
        "notified: mars@1",
        "notified: mars@2",
        # step 3 fails the WHERE: only step 12 arrives.
        "  late-steps: live mars@2 step=12",
        "producer: credit 16 max_batch 1000",
        "batch: completed ['mars@3', 'mars@4', 'mars@5']",
    ]
    # Every one of the 20,001 notifications is either delivered or counted.
    m = re.fullmatch(r"slow reader: (\d+) delivered \+ (\d+) dropped = 20001 of 20001", lines[7])
    assert m and int(m[1]) + int(m[2]) == 20001 and int(m[2]) > 0, lines[7]
    assert len(lines) == 8, lines
