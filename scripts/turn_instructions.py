#!/usr/bin/env python3
"""Instructions and allocations per turn: the scenarios of `hooks-runtime/tests/turn_allocations.rs`
(a text turn and a turn with one tool call on the in-memory store, with no hooks and with 4
in-place hooks, and the text turn through the inbox) run under callgrind, counting only inside the
counted turns' future (`--toggle-collect` on its `poll`), built with optimizations.

Prints, per scenario, the instructions of one turn (the total over the counted turns, divided by
their number) and the test's own allocation count for the same turns.

Usage: python3 scripts/turn_instructions.py [--scenario NAME ...]
Build first: cargo test --release -p hooks-runtime --test turn_allocations --no-run
"""

import argparse
import re

import callgrind

SCENARIOS = [
    "text turn",
    "text turn, 4 in-place hooks",
    "text turn through the inbox",
    "tool turn",
    "tool turn, 4 in-place hooks",
]
# Only inside the counted turns: the future they are polled through (`Counted`).
COLLECT = "--toggle-collect=*Counted*as core::future::future::Future>::poll"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", action="append")
    args = parser.parse_args()
    exe = callgrind.binary("release", "turn_allocations",
                           "cargo test --release -p hooks-runtime --test turn_allocations --no-run")
    print(f"instructions per turn (callgrind, optimized build), {exe}")
    print("| turn | instructions | allocations | bytes |")
    print("|---|---:|---:|---:|")
    for scenario in args.scenario or SCENARIOS:
        collected, output = callgrind.run(exe, {"TURN_SCENARIO": scenario}, ["--nocapture"], [COLLECT])
        line = re.search(rf"^{re.escape(scenario)}: (\d+) allocations, (\d+) bytes, each of (\d+) counted turns$", output, re.M)
        if line is None:
            raise SystemExit(f"the test printed no counts for `{scenario}`:\n{output}")
        allocations, size, turns = (int(group) for group in line.groups())
        print(f"| {scenario} | {collected / turns:,.0f} | {allocations} | {size:,} |", flush=True)


if __name__ == "__main__":
    main()
