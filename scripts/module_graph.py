#!/usr/bin/env python3
"""The module import graph of a crate, read from its `use` lines and inline paths, with cycles.

Each file under `src/` is a module (`mod.rs` is its directory's module; `lib.rs` the root).
An edge A -> B is a `use` item or an inline path in A (`crate::..`, `super::..`, `self::..`,
or a child module's name) that resolves to module B, the deepest module its segments name.
Paths through a module's `pub use` re-exports (`crate::RuntimeError`, `super::ModelError`)
resolve to the module that defines the item, so importing a re-exported name is no edge to
the module that re-exports it.

An upward edge (a module using an item its ancestor defines) is listed, and counted for cycles
only with --count-upward: a parent that uses its children while they use items it defines is
a cycle then, and the cure is a parent that only declares and re-exports. Inline modules
(`mod tests { use super::*; }`) are read at their own path, so their `super` names the file's
module, and their edges count as the file's.

With --folders the graph is one of folders: each top-level module with its children (`thread.rs`
and `thread/`) is one node, and the crate's layers are printed bottom first when there is no
cycle. A crate whose folders form no cycle is one layer stack: each folder imports only folders
below it.

With --as-written (implies --folders) imports are read as written: a path is an edge to the
folder it names, whether or not that folder defines the item or only re-exports it, so an
import through a higher layer's re-export (`crate::thread::ThreadEvent` where `crate::events`
defines it) is the circle it makes. Each import that names an item through another folder's
re-export, or the crate root's, is listed too, with the module that defines the item: every
import names the folder that defines what it imports. The crate root's own `pub use` lines (the
public facade) are not imports.

Usage: python3 scripts/module_graph.py [--cycles-only] [--count-upward] [--folders] [--as-written]
[CRATE_DIR] (default: hooks-runtime)
Prints the graph (not with --cycles-only), then each cycle found (and with --as-written each
import through a re-export); exits 1 when there is one.
"""

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
RAW_STRING = re.compile(r'b?r(#*)"')
CHAR_LITERAL = re.compile(r"'(?:\\.[^']*|[^'\\])'")


def module_of(src: Path, file: Path) -> tuple:
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts.pop()
    if parts and parts[0] == "bin":
        return None
    return tuple(parts)


def strip(text: str) -> str:
    """Source without comments, string literals or char literals (paths in them are not uses).

    One pass, left to right, so a quote in a comment or `//` in a string is read as what it is.
    """
    out, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            out.append(" ")
        elif (raw := RAW_STRING.match(text, i)) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = '"' + raw.group(1)
            end = text.find(close, raw.end())
            i = n if end < 0 else end + len(close)
            out.append('""')
        elif ch == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
        elif ch == "'" and (char := CHAR_LITERAL.match(text, i)):
            # A char literal; a lifetime (`'a`) has no closing quote right after one char.
            i = char.end()
            out.append("' '")
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def use_paths(tree: str, prefix: list) -> list:
    """The leaf paths of a `use` tree such as `super::{a, b::{c, d}}`."""
    tree = tree.strip()
    depth, split = 0, None
    for i, ch in enumerate(tree):
        if ch == "{":
            if depth == 0:
                split = i
                break
            depth += 1
    if split is None:
        head = tree.split(" as ")[0].strip()
        return [prefix + [s for s in head.split("::") if s]] if head else []
    head = [s for s in tree[:split].split("::") if s]
    body = tree[split + 1 : tree.rindex("}")]
    items, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(body[start:i])
            start = i + 1
    items.append(body[start:])
    out = []
    for item in items:
        if item.strip():
            out.extend(use_paths(item, prefix + head))
    return out


def inline_modules(text: str, module: tuple) -> list:
    """The file's text outside inline modules, at `module`, then each inline module's body at
    its own path (nested ones split out the same way)."""
    out, rest, start = [], [], 0
    for match in re.finditer(rf"\bmod\s+({IDENT})\s*\{{", text):
        if match.start() < start:
            continue
        depth, i = 1, match.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        rest.append(text[start : match.start()])
        out.extend(inline_modules(text[match.end() : i - 1], module + (match.group(1),)))
        start = i
    rest.append(text[start:])
    return [(module, " ".join(rest))] + out


def resolve(path: list, here: tuple, modules: set, reexports: dict):
    """The module a path names, or None when it leaves the crate."""
    if not path:
        return None
    first, rest = path[0], path[1:]
    if first == "crate":
        at = ()
    elif first == "self":
        at = here
    elif first == "super":
        at = here[:-1]
        while rest and rest[0] == "super":
            at, rest = at[:-1], rest[1:]
    elif here + (first,) in modules:
        at, rest = here + (first,), rest
    else:
        return None
    for segment in rest:
        if at + (segment,) in modules:
            at = at + (segment,)
        elif at in reexports and segment in reexports[at]:
            return reexports[at][segment]
        else:
            break
    return at


def module_edges(crate: Path, as_written: bool = False, indirect: list = None) -> dict:
    """Each module of the crate (a tuple of path segments) -> the modules it imports.

    `as_written`: a path names the module its segments name, re-exports not followed; each
    path whose folder so named is not the folder that defines its item is added to `indirect`
    as (module, path, folder named, module that defines it)."""
    src = crate / "src"
    files = {}
    for file in sorted(src.rglob("*.rs")):
        module = module_of(src, file)
        if module is not None:
            files[module] = strip(file.read_text())
    modules = set(files)

    # `pub use child::{A, B}` re-exports, so that `crate::A` names the child's module.
    reexports = {}
    for module, text in files.items():
        for match in re.finditer(r"pub(?:\([^)]*\))?\s+use\s+([^;]+);", text):
            for path in use_paths(match.group(1), []):
                target = resolve(path[:-1] or path, module, modules, {})
                if target is not None and target != module:
                    reexports.setdefault(module, {})[path[-1]] = target

    edges = {module: set() for module in modules}
    for module, text in files.items():
        # An inline module (`mod tests { use super::*; }`) is read as a child of the file's
        # module, so that its `super` names the file, and its edges count as the file's.
        for here, body in inline_modules(text, module):
            paths = []
            for match in re.finditer(r"\buse\s+([^;]+);", body):
                paths.extend(use_paths(match.group(1), []))
            without_uses = re.sub(r"\buse\s+[^;]+;", " ", body)
            for match in re.finditer(rf"(?<![A-Za-z0-9_:])((?:{IDENT}::)+{IDENT})", without_uses):
                paths.append(match.group(1).split("::"))
            for path in paths:
                target = resolve(path, here, modules, reexports)
                if as_written and target is not None:
                    written = resolve(path, here, modules, {})
                    if module and written[:1] != target[:1] and written[:1] != module[:1]:
                        indirect.append((module, path, written, target))
                    target = written
                if target is not None and target != module:
                    edges[module].add(target)
    return edges


def folder_edges(edges: dict) -> dict:
    """The graph of the crate's top-level modules: a folder (`thread/` with `thread.rs`) is one
    node, and an edge between two files in different folders is an edge between the folders.
    The crate root (`lib.rs`) only declares and re-exports, so its edges are left out."""
    folders = {m[:1] for m in edges if m}
    out = {f: set() for f in folders}
    for module, targets in edges.items():
        if not module:
            continue
        for target in targets:
            # An edge to the root names a root re-export: listed by --as-written, never a layer.
            if target and target[:1] != module[:1]:
                out[module[:1]].add(target[:1])
    return out


def components(counted: dict) -> list:
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(counted[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                sccs.append(sorted(component))

    sys.setrecursionlimit(10000)
    for module in sorted(counted):
        if module not in index:
            visit(module)
    return sccs


def layers(counted: dict) -> list:
    """The layers of an acyclic graph, bottom first: a node sits one above the highest node it
    imports."""
    level = {}

    def depth(v):
        if v not in level:
            level[v] = 0
            level[v] = 1 + max((depth(w) for w in counted[v]), default=-1)
        return level[v]

    for v in counted:
        depth(v)
    out = [[] for _ in range(max(level.values(), default=-1) + 1)]
    for v, n in level.items():
        out[n].append(v)
    return [sorted(layer) for layer in out]


def main() -> int:
    args = sys.argv[1:]
    flags = {"--cycles-only", "--count-upward", "--folders", "--as-written"}
    cycles_only = "--cycles-only" in args
    with_upward = "--count-upward" in args
    as_written = "--as-written" in args
    by_folder = "--folders" in args or as_written
    args = [arg for arg in args if arg not in flags]
    crate = REPO / (args[0] if args else "hooks-runtime")
    indirect = []
    edges = module_edges(crate, as_written, indirect)

    def name(module: tuple) -> str:
        return "::".join(("crate",) + module)

    def upward(a: tuple, b: tuple) -> bool:
        return a[: len(b)] == b

    if by_folder:
        counted = folder_edges(edges)
        sccs = components(counted)
        if not sccs and not cycles_only:
            print(f"{crate.name}: layers, bottom first (a folder imports only folders below it):")
            for n, layer in enumerate(layers(counted)):
                print(f"  {n}: {', '.join(name(m) for m in layer)}")
    else:
        if not cycles_only:
            print("module graph (`^` marks an upward edge to an ancestor, not counted for cycles):")
        for module in sorted(edges) if not cycles_only else []:
            targets = sorted(edges[module])
            shown = [("^" if upward(module, t) else "") + name(t) for t in targets]
            print(f"  {name(module)} -> {', '.join(shown) if shown else '(none)'}")
        counted = {m: {t for t in ts if with_upward or not upward(m, t)} for m, ts in edges.items()}
        sccs = components(counted)

    for module, path, written, defined in sorted(indirect):
        print(
            f"THROUGH A RE-EXPORT: {name(module)} imports `{'::'.join(path)}` through {name(written)}; "
            f"name {name(defined)}, which defines it"
        )
    if not sccs:
        print(f"{crate.name}: no import cycle" + (" between folders" if by_folder else "") + (" as written" if as_written else ""))
        return 1 if indirect else 0
    for component in sccs:
        members = set(component)
        pairs = sorted(
            f"{name(a)} -> {name(b)}" for a in component for b in sorted(counted[a]) if b in members
        )
        print(f"CYCLE among {', '.join(name(m) for m in component)}:")
        for pair in pairs:
            print(f"    {pair}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
