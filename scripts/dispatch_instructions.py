#!/usr/bin/env python3
"""Instructions per dispatch, counted by callgrind: repeatable where time on a shared machine is not.

Runs the `dispatch` bench binary under `valgrind --tool=callgrind` twice per variant, with
`BENCH_FIXED_ITERS` at two counts, and prints (Ir(high) - Ir(low)) / (high - low): the
instructions one iteration executes, setup excluded. Instruction counts ignore cache misses and
stalls, so they complement the timed ratios of `cargo bench --bench dispatch`, they do not
replace them.

Usage: python3 scripts/dispatch_instructions.py [--hooks 1,4,16] [--variant NAME ...]
Build first: cargo bench -p hooks-runtime --bench dispatch --no-run
"""

import argparse

import callgrind

SYNC_VARIANTS = [
    "floor: fn pointers + catch_unwind, plain",
    "floor: fn pointers + catch_unwind, Result",
    "runtime, in place, sync plain",
    "runtime, in place, sync Result",
    "runtime, by value, sync plain",
    "runtime, by value, sync Result",
]
ASYNC_VARIANTS = [
    "boxed futures + catch_unwind + lazy timeout",
    "runtime, in place, async",
]


def instructions(exe, title, variant, iterations):
    env = {"BENCH_FILTER": title, "BENCH_VARIANT": variant, "BENCH_FIXED_ITERS": str(iterations)}
    return callgrind.run(exe, env)[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hooks", default="1,4,16")
    parser.add_argument("--variant", action="append")
    parser.add_argument("--low", type=int, default=200)
    parser.add_argument("--high", type=int, default=1200)
    args = parser.parse_args()
    exe = callgrind.binary("release", "dispatch", "cargo bench -p hooks-runtime --bench dispatch --no-run")
    print(f"instructions per dispatch (callgrind, {args.high} - {args.low} iterations), {exe}")
    print("| hooks | variant | instructions |")
    print("|---:|---|---:|")
    for n in [int(h) for h in args.hooks.split(",")]:
        for kind, variants in (("sync", SYNC_VARIANTS), ("async", ASYNC_VARIANTS)):
            title = f"{kind} filter_messages, {n} hooks,"
            for variant in args.variant or variants:
                if variant not in variants:
                    continue
                low = instructions(exe, title, variant, args.low)
                high = instructions(exe, title, variant, args.high)
                print(f"| {n} | {variant} | {(high - low) / (args.high - args.low):.0f} |", flush=True)


if __name__ == "__main__":
    main()
