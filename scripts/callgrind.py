"""Instruction counts under valgrind's callgrind, shared by the scripts that print them.

Instruction counts do not depend on the machine's load, so they hold where timings on a shared
machine do not; they leave out cache misses and stalls.
"""

import glob
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def binary(profile, name, build):
    """The newest executable of target `name` built under `profile` (`release`, `debug`)."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    found = [p for p in glob.glob(str(target / profile / "deps" / f"{name}-*")) if os.access(p, os.X_OK) and "." not in Path(p).name]
    if not found:
        sys.exit(f"no {name} binary: run `{build}` first")
    return max(found, key=os.path.getmtime)


def run(exe, env, args=(), callgrind=()):
    """Runs `exe` with `args` and the extra environment `env` under callgrind (with the options
    `callgrind`); returns the instructions it counted and the program's standard output."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        result = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *callgrind, exe, *args],
            env=dict(os.environ, **env), capture_output=True, text=True, check=True,
        )
        match = re.search(r"Collected : (\d+)", result.stderr)
        return int(match.group(1)), result.stdout
