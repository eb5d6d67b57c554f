#!/usr/bin/env python3
"""Instructions and allocations per turn: the scenarios of `hooks-runtime/tests/turn_allocations.rs`
(a text turn and a turn with one tool call on the in-memory store, with no hooks and with 4
in-place hooks, the text turn through the inbox, and the same turns written by hand around the
same model, the floor) run under callgrind, counting only inside the counted turns' future
(`--toggle-collect` on its `poll`), built with optimizations.

Prints, per scenario, the instructions of one turn (the total over the counted turns, divided by
their number) and the test's own allocation count for the same turns; then each runtime turn
against its hand-written floor. With `--inclusive N`, also the N functions with the most
instructions inside the counted turns, inclusive of what they call, per scenario (per turn).

Usage: python3 scripts/turn_instructions.py [--scenario NAME ...] [--inclusive N]
Build first: cargo test --release -p hooks-runtime --test turn_allocations --no-run
"""

import argparse
import re
import tempfile
from pathlib import Path

import callgrind

SCENARIOS = [
    "text turn",
    "text turn, 4 in-place hooks",
    "text turn through the inbox",
    "tool turn",
    "tool turn, 4 in-place hooks",
    "hand-written text turn",
    "hand-written text turn, 4 hooks",
    "hand-written tool turn",
]
# Each runtime turn and the hand-written turn it is compared with.
FLOORS = [
    ("text turn", "hand-written text turn"),
    ("text turn, 4 in-place hooks", "hand-written text turn, 4 hooks"),
    ("tool turn", "hand-written tool turn"),
]
# Only inside the counted turns: the future they are polled through (`Counted`).
COLLECT = "--toggle-collect=*Counted*as core::future::future::Future>::poll"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", action="append")
    parser.add_argument("--inclusive", type=int, default=0, metavar="N")
    args = parser.parse_args()
    exe = callgrind.binary("release", "turn_allocations",
                           "cargo test --release -p hooks-runtime --test turn_allocations --no-run")
    print(f"instructions per turn (callgrind, optimized build), {exe}")
    print("| turn | instructions | allocations | bytes |")
    print("|---|---:|---:|---:|")
    measured = {}
    profiles = []
    with tempfile.TemporaryDirectory() as tmp:
        for number, scenario in enumerate(args.scenario or SCENARIOS):
            keep = Path(tmp) / f"callgrind.{number}.out" if args.inclusive else None
            # A count over its budget fails the test, which is `cargo test`'s to report: the
            # counts are printed all the same.
            collected, output = callgrind.run(exe, {"TURN_SCENARIO": scenario}, ["--nocapture"], [COLLECT], keep, check=False)
            line = re.search(rf"^{re.escape(scenario)}: (\d+) allocations, (\d+) bytes, each of (\d+) counted turns$", output, re.M)
            if line is None:
                raise SystemExit(f"the test printed no counts for `{scenario}`:\n{output}")
            allocations, size, turns = (int(group) for group in line.groups())
            measured[scenario] = (collected / turns, allocations)
            if keep:
                profiles.append((scenario, turns, callgrind.inclusive(keep, args.inclusive)))
            print(f"| {scenario} | {collected / turns:,.0f} | {allocations} | {size:,} |", flush=True)
        pairs = [(turn, floor) for turn, floor in FLOORS if turn in measured and floor in measured]
        if pairs:
            print("\n| turn | x hand-written, instructions | allocations, runtime / hand-written |")
            print("|---|---:|---:|")
            for turn, floor in pairs:
                (ir, allocations), (floor_ir, floor_allocations) = measured[turn], measured[floor]
                print(f"| {turn} | {ir / floor_ir:.2f}x | {allocations} / {floor_allocations} |")
        for scenario, turns, rows in profiles:
            print(f"\n{scenario}: instructions per turn, inclusive, the {args.inclusive} largest functions")
            for instructions, function in rows:
                print(f"{instructions / turns:>10,.0f}  {function}")


if __name__ == "__main__":
    main()
