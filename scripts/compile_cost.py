#!/usr/bin/env python3
"""Compile cost of the macros: a generated crate with 200 `#[hook]` hooks and 50 `define_prompt!`
prompts, against the same 200 plain functions and 50 plain const structs.

Both crates depend on hooks-runtime by path and share one target directory, so dependencies are
built once (a warm-up `cargo build`); then each crate's own compile is timed: `touch src/lib.rs`
and `cargo build`, several times, interleaved, median. Prints the ratio and the cost per hook
(targets: at most 3x, and at most 2 ms per hook).

Usage: python3 scripts/compile_cost.py [--runs N] [--release] [--hooks N] [--prompts N] [--target-dir DIR]

`--prompts 0` measures the hooks alone, to tell their share from the prompts'.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HOOKS = 200
PROMPTS = 50
# The crate with the macros compiles in at most three times the plain crate's time, and each hook
# adds at most 2 ms (the prompts' cost counted in).
TARGET = 3.0
TARGET_MS_PER_HOOK = 2.0
KINDS = [
    ("filter_messages", "(_state: &ThreadState, messages: Vec<HookMessage>) -> Vec<HookMessage>", "messages"),
    ("before_create_message", "(_state: &ThreadState, record: MessageRecord) -> MessageRecord", "record"),
    ("after_create_message", "(_state: &ThreadState, _record: &MessageRecord)", ""),
    ("after_system_message", "(_state: &ThreadState, _system: &str) -> Option<String>", "None"),
]


def hook_fn(i, with_macro):
    kind, signature, body = KINDS[i % len(KINDS)]
    asyncness = "async " if i % 2 else ""
    attr = f'#[hook({kind}, id = "hook_{i}")]\n' if with_macro else ""
    return f"{attr}pub {asyncness}fn hook_{i}{signature} {{\n    {body}\n}}\n"


def prompt(i, with_macro, hook_count):
    hooks = [f"hook_{(i * 4 + k) % hook_count}" for k in range(4)]
    if with_macro:
        return (
            f"define_prompt! {{\n    name: prompt_{i},\n    model: \"m\",\n    prompt: \"Prompt {i}.\",\n"
            f"    tools: [\"tool_a\"],\n    hooks: [{', '.join(hooks)}],\n}}\n"
        )
    return (
        f"#[allow(non_upper_case_globals)]\npub const prompt_{i}: PlainPrompt = PlainPrompt {{ name: \"prompt_{i}\", "
        f"model: \"m\", prompt: \"Prompt {i}.\", tools: &[\"tool_a\"], hook_names: &[{', '.join(repr(h).replace(chr(39), chr(34)) for h in hooks)}] }};\n"
    )


def generate(root, name, with_macro, hooks, prompts):
    crate = root / name
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text(
        f'[package]\nname = "{name}"\nversion = "0.0.0"\nedition = "2024"\npublish = false\n\n'
        f'[dependencies]\nhooks-runtime = {{ path = "{REPO / "hooks-runtime"}" }}\n\n[workspace]\n'
    )
    parts = ["#![allow(unused, clippy::all)]\nuse hooks_runtime::prelude::*;\n"]
    if not with_macro:
        parts.append(
            "pub struct PlainPrompt { pub name: &'static str, pub model: &'static str, pub prompt: &'static str, "
            "pub tools: &'static [&'static str], pub hook_names: &'static [&'static str] }\n"
        )
    parts += [hook_fn(i, with_macro) for i in range(hooks)]
    parts += [prompt(i, with_macro, hooks) for i in range(prompts)]
    (crate / "src" / "lib.rs").write_text("\n".join(parts))
    return crate


def build(crate, target_dir, release):
    env = dict(os.environ, CARGO_TARGET_DIR=str(target_dir))
    cmd = ["cargo", "build", "--quiet", "--offline"] + (["--release"] if release else [])
    started = time.perf_counter()
    subprocess.run(cmd, cwd=crate, env=env, check=True)
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--release", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the generated crates")
    parser.add_argument("--hooks", type=int, default=HOOKS, help=f"hooks to generate (default {HOOKS})")
    parser.add_argument("--prompts", type=int, default=PROMPTS, help=f"prompts to generate (default {PROMPTS})")
    parser.add_argument(
        "--target-dir",
        type=Path,
        help="a target directory kept between runs, so repeated measurements skip building the dependencies",
    )
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hooks-compile-cost-"))
    target_dir = args.target_dir.resolve() if args.target_dir else root / "target"
    crates = {
        "macros": generate(root, "gen_macros", True, args.hooks, args.prompts),
        "plain": generate(root, "gen_plain", False, args.hooks, args.prompts),
    }
    # The two crates need one lock file's worth of dependencies: copy the workspace's, so both
    # resolve the same versions offline.
    for crate in crates.values():
        (crate / "Cargo.lock").write_bytes((REPO / "Cargo.lock").read_bytes())
    print(f"generated {args.hooks} hooks and {args.prompts} prompts in {root}", flush=True)
    for name, crate in crates.items():
        took = build(crate, target_dir, args.release)
        print(f"warm-up build of {name} (dependencies included): {took:.1f} s", flush=True)
    times = {name: [] for name in crates}
    for run in range(args.runs):
        order = list(crates.items()) if run % 2 == 0 else list(reversed(crates.items()))
        for name, crate in order:
            (crate / "src" / "lib.rs").touch()
            times[name].append(build(crate, target_dir, args.release))
    for name, values in times.items():
        print(f"{name:>6}: median {statistics.median(values):.2f} s over {len(values)} builds ({', '.join(f'{v:.2f}' for v in values)})")
    ratios = [m / p for m, p in zip(times["macros"], times["plain"])]
    ratio = statistics.median(ratios)
    profile = "release" if args.release else "dev"
    print(
        f"compile-time ratio, macros / plain ({profile}, crate's own compile only): {ratio:.2f}x "
        f"(target {TARGET}x: {'ok' if ratio <= TARGET else 'MISS'})"
    )
    if args.hooks:
        per_hook = (statistics.median(times["macros"]) - statistics.median(times["plain"])) / args.hooks * 1000
        print(
            f"cost per hook, (macros - plain) / {args.hooks} hooks: {per_hook:.2f} ms "
            f"(target {TARGET_MS_PER_HOOK} ms: {'ok' if per_hook <= TARGET_MS_PER_HOOK else 'MISS'})"
        )
    if not args.keep:
        subprocess.run(["rm", "-rf", str(root)], check=False)


if __name__ == "__main__":
    sys.exit(main())
