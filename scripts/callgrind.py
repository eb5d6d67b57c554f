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


def run(exe, env, args=(), callgrind=(), keep=None, check=True):
    """Runs `exe` with `args` and the extra environment `env` under callgrind (with the options
    `callgrind`); returns the instructions it counted and the program's standard output. With
    `keep`, callgrind's output file is written there (for `inclusive`). With `check` false, a
    program that exits with an error is counted all the same."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(keep) if keep else Path(tmp) / "callgrind.out"
        result = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *callgrind, exe, *args],
            env=dict(os.environ, **env), capture_output=True, text=True, check=check,
        )
        match = re.search(r"Collected : (\d+)", result.stderr)
        return int(match.group(1)), result.stdout


def inclusive(out_file, limit):
    """The `limit` functions of callgrind's output file `out_file` with the most instructions,
    inclusive of what they call: (instructions, function name) pairs, most first."""
    result = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", f"--threshold=100", str(out_file)],
        capture_output=True, text=True, check=True,
    )
    rows = []
    for line in result.stdout.splitlines():
        # `Ir (share)  file:function [object]`; the file is `???` or a path with an extension.
        match = re.match(r"^\s*([\d,]+) \([^)]*\)\s+(?:\?\?\?|[^ :]+\.\w+):(.+?)(?: \[[^]]*\])?$", line)
        if match:
            rows.append((int(match.group(1).replace(",", "")), match.group(2)))
    return rows[:limit]
