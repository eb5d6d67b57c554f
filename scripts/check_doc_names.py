#!/usr/bin/env python3
"""Check that the Rust names the docs mention in backticks still exist in the workspace's source.

Every inline code span of the README, the guides (docs/*.md) and the crates' READMEs that looks
like a Rust path or item is checked against the source of the workspace's crates (`*/src/**/*.rs`):

- `hooks_runtime::store::SqliteStore`, `store::SqliteStore`: a path into one of the workspace's
  crates or modules. Each module segment is a `mod` of the workspace (or a crate), the last
  segment an item (`fn`, `struct`, `enum`, `trait`, `type`, `const`, `static`, `mod`,
  `macro_rules!`, a proc macro), or a member of the type before it (below).
- `Runtime::create_thread`, `RecoveryPolicy::Resume`, `ServerConfig::thread_idle_eviction`: a
  type of the workspace and a member of it: a `fn`, `const` or `type` of an `impl` of that type
  (inherent or of a trait), a method a trait it implements declares, an enum variant or a
  struct field. Only the leading path of a span counts (`Runtime::builder().build()` checks
  `Runtime::builder`).
- `ThreadOptions`, `Vec<HookMessage>`: every UpperCamelCase name of a span that is a type
  expression (a name, `&`, `<...>`, `::`, commas): a type, trait or other item of the workspace.

A name that is not the workspace's must be listed in `EXTERNAL` (std, tokio, serde, the Claude
Code settings vocabulary, ...), so a renamed type of ours is not taken for a foreign one.

What it cannot catch (read the source when one of these matters):
- Visibility and re-exports: any item of that name anywhere in the workspace counts, `pub` or
  not, so a path that no longer resolves (an item moved out of a module, a re-export dropped) or
  an item made private passes as long as the name exists somewhere.
- Which impl: a method is looked up in every `impl` block whose self type has that last name, so
  two types of the same name in different modules share their methods; methods reached through
  `Deref`, a blanket impl (`impl<T: Trait> Other for T`) or a macro-generated impl are not seen
  (such a name needs an entry in `MEMBERS_ELSEWHERE`).
- Method chains and calls: `Runtime::builder().guard(...)` checks `Runtime::builder` only, since
  the type a call returns is not known; snake_case names alone (`create_thread`) are not checked,
  and signatures, argument counts and features are not checked at all.
- Names in fenced code blocks: those compile as doctests (tests/src/lib.rs) where they matter.

    python3 scripts/check_doc_names.py            # README.md, docs/*.md, every crate's README
    python3 scripts/check_doc_names.py FILE...    # the files given
"""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from module_graph import strip  # noqa: E402  (Rust source without comments and literals)

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = ["hooks-core/src", "hooks-macros/src", "hooks-runtime/src", "hooks-server/src", "examples/src"]
# The library names of the workspace's crates (the package names differ: Cargo.toml).
CRATES = {"hooks_core", "hooks_macros", "hooks_runtime", "hooks_server", "examples"}

# Names that are not the workspace's: a doc may mention them without a definition here.
EXTERNAL = {
    # std
    "Arc", "Box", "Cow", "Duration", "Err", "Error", "File", "Fn", "FnMut", "FnOnce", "Future",
    "HashMap", "HashSet", "BTreeMap", "Instant", "Mutex", "None", "Ok", "Option", "Pin", "Rc",
    "RefCell", "Result", "RwLock", "Send", "Some", "String", "Sync", "SystemTime", "Vec",
    "Default", "Clone", "Debug", "Display", "Drop", "PartialEq", "Eq", "Hash", "Iterator",
    "IntoIterator", "From", "Into", "TryFrom", "AsRef", "Deref", "Path", "PathBuf", "Command",
    "Child", "Stdio", "Weak", "OnceLock", "LazyLock", "Cell", "Any", "TypeId", "Ordering",
    "AtomicBool", "AtomicU64", "AtomicUsize", "Infallible", "Self", "Sized", "Unpin", "Copy",
    "ExitStatus", "ErrorKind", "Write", "Read", "BufRead", "Termination", "ExitCode",
    "UnwindSafe", "RefUnwindSafe", "PhantomData", "Ref", "ManuallyDrop", "NonNull", "Poll",
    "Context", "Waker", "JoinHandle",
    # tokio, futures, tracing, serde, axum, tower, hyper, reqwest, rusqlite, rmcp, otel
    "JoinSet", "Notify", "Semaphore", "Barrier", "Sleep", "Interval", "Receiver", "Sender",
    "Stream", "StreamExt", "Sink", "Subscriber", "Layer", "Span", "Level", "EnvFilter",
    "Serialize", "Deserialize", "Value", "Map", "Router", "Json", "Request",
    "Response", "Body", "StatusCode", "Service", "Extension", "State", "Connection",
    "Transaction", "Client", "TcpListener", "TcpStream", "CancellationToken", "Bytes",
    "SdkTracerProvider", "TracerProvider", "Tracer", "ServerHandler", "RoleServer",
    "RoleClient", "Peer",
    # The Claude Code settings vocabulary (docs/settings-hooks.md): events, tools, fields.
    "PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop",
    "SubagentStop", "SessionStart", "SessionEnd", "Notification", "PreCompact",
    "PermissionRequest", "Bash", "Read", "Edit", "MultiEdit", "Glob", "Grep", "WebFetch",
    "WebSearch", "Task", "NotebookEdit", "TodoWrite", "LS", "ExitPlanMode", "SubagentStart",
    "Makefile",
    # rig, which docs/performance.md measures against; tracing's future wrapper; OTLP's message.
    "CompletionModel", "MockScript", "MockRuntime", "PromptResponse", "AgentHook",
    "RequestPatch", "Transport", "Instrumented", "ExportTraceServiceRequest",
    # A design the docs weigh and did not take (docs/performance.md: `ThreadHook` impls).
    "ThreadHook",
}

# Paths that name another crate's item whose first name is also one of ours (rig's `Agent`,
# std's `File`).
EXTERNAL_PATHS = {"Agent::chat", "File::try_lock"}

# Members that the source defines in a way this script does not read (a blanket or generated
# impl), as `Type::member`.
MEMBERS_ELSEWHERE = set()

# Trait methods most types get from a derive or std (`#[derive(Default)]`, `impl From<..>`).
DERIVED = {"default", "clone", "fmt", "eq", "ne", "hash", "cmp", "partial_cmp", "from", "into",
           "try_from", "try_into", "to_string", "serialize", "deserialize", "as_ref", "deref",
           "drop", "from_str", "to_owned"}

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
CAMEL = re.compile(r"^[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$")  # UpperCamelCase, not SCREAMING


def block_end(code, open_at):
    """The index just past the brace that closes the one at `open_at`."""
    depth = 0
    for k in range(open_at, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1
            if depth == 0:
                return k + 1
    return len(code)


def top_level(body):
    """The text of a `{...}` block's own level: nested brackets' contents dropped."""
    out, depth = [], 0
    for c in body[1:-1]:
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out)


def header_until_brace(code, start):
    """The text from `start` to the first `{` or `;` outside `<...>` and `(...)`."""
    depth = 0
    for k in range(start, len(code)):
        c = code[k]
        if c in "<(":
            depth += 1
        elif c in ">)" and not (c == ">" and code[k - 1] == "-"):
            depth -= 1
        elif depth <= 0 and c in "{;":
            return code[start:k], k
    return code[start:], len(code)


def last_name(type_text):
    """`crate::a::Name<T>` -> `Name`; `&'a mut Name` -> `Name`."""
    type_text = re.sub(r"<.*", "", type_text.strip(), flags=re.S)
    names = re.findall(IDENT, type_text.replace("dyn ", "").replace("mut ", ""))
    return names[-1] if names else None


def strip_generics(text):
    """Drops a leading `<...>` (balanced)."""
    text = text.lstrip()
    if not text.startswith("<"):
        return text
    depth = 0
    for k, c in enumerate(text):
        if c == "<":
            depth += 1
        elif c == ">" and text[k - 1] != "-":
            depth -= 1
            if depth == 0:
                return text[k + 1:]
    return text


class Index:
    """The items, modules and members the workspace's source defines."""

    def __init__(self):
        self.items = set()      # every item name
        self.modules = set(CRATES)
        self.types = set()      # structs, enums, traits, type aliases, unions
        self.members = {}       # type name -> member names
        self.trait_methods = {}  # trait name -> method names
        self.implements = {}    # type name -> trait names
        self.variants = set()   # every enum variant, which a doc may name alone (`Deny`)
        for folder in SOURCES:
            for path in sorted((ROOT / folder).rglob("*.rs")):
                self.read(path)
        for type_name, traits in self.implements.items():
            for trait in traits:
                self.members.setdefault(type_name, set()).update(self.trait_methods.get(trait, ()))

    def read(self, path):
        if path.stem not in ("mod", "lib", "main"):
            self.modules.add(path.stem)
        if path.name == "mod.rs":
            self.modules.add(path.parent.name)
        code = strip(path.read_text(encoding="utf-8"))
        # A lookahead, so that `const fn name` yields `name` as well.
        item = re.compile(r"(?=\b(fn|struct|enum|trait|type|const|static|mod|union)\s+(" + IDENT + "))")
        for kind, name in item.findall(code):
            self.items.add(name)
            if kind == "mod":
                self.modules.add(name)
            if kind in ("struct", "enum", "trait", "type", "union"):
                self.types.add(name)
        self.items.update(re.findall(r"macro_rules!\s*(" + IDENT + ")", code))
        # Proc macros are the `pub fn`s under `#[proc_macro...]`; their names are items already.
        for m in re.finditer(r"\b(impl|enum|struct|trait)\b", code):
            if m.start() and re.match(r"\w", code[m.start() - 1]):
                continue
            head, brace = header_until_brace(code, m.end())
            if brace >= len(code) or code[brace] != "{":
                continue
            body = code[brace:block_end(code, brace)]
            level = top_level(body).replace("#", "")  # attributes' brackets are dropped already
            kind = m.group(1)
            if kind == "impl":
                head = strip_generics(head)
                head = re.split(r"\bwhere\b", head)[0]
                trait, _, self_type = head.rpartition(" for ")
                name = last_name(self_type)
                if not name:
                    continue
                found = set(re.findall(r"\b(?:fn|const|type)\s+(" + IDENT + ")", level))
                self.members.setdefault(name, set()).update(found)
                if trait.strip():
                    trait_name = last_name(trait.replace("!", ""))
                    if trait_name:
                        self.implements.setdefault(name, set()).add(trait_name)
            else:
                name_match = re.match(r"\s*(" + IDENT + ")", head)
                if not name_match:
                    continue
                name = name_match.group(1)
                if kind == "trait":
                    found = set(re.findall(r"\b(?:fn|const|type)\s+(" + IDENT + ")", level))
                    self.trait_methods.setdefault(name, set()).update(found)
                    self.members.setdefault(name, set()).update(found)
                elif kind == "enum":
                    found = set(re.findall(r"(?:^|,)\s*(" + IDENT + ")", level.strip()))
                    self.members.setdefault(name, set()).update(found)
                    self.variants.update(found)
                else:
                    found = set(re.findall(r"(?:^|,)\s*(?:pub\s*)?(" + IDENT + r")\s*:(?!:)", level.strip()))
                    self.members.setdefault(name, set()).update(found)

    def known_type(self, name):
        return name in self.types or name in self.items or name in self.variants

    def check_path(self, segments):
        """None if the path exists, else what is missing."""
        if "::".join(segments) in EXTERNAL_PATHS:
            return None
        first = segments[0]
        if (first in EXTERNAL and not self.known_type(first)) or first in ("std", "core", "alloc", "crate", "self", "super"):
            return None
        if first[0].islower() and first not in self.modules:
            return None  # another crate's path (`serde_json::Value`, `tokio::time::advance`)
        for k, segment in enumerate(segments):
            last = k == len(segments) - 1
            previous = segments[k - 1] if k else None
            if previous and CAMEL.match(previous):
                if previous in EXTERNAL and not self.known_type(previous):
                    return None
                if segment in DERIVED or f"{previous}::{segment}" in MEMBERS_ELSEWHERE:
                    continue
                if segment not in self.members.get(previous, ()):
                    return f"`{previous}` has no member `{segment}`"
                continue
            if CAMEL.match(segment):
                if segment not in EXTERNAL and not self.known_type(segment):
                    return f"no item `{segment}`"
            elif last:
                if segment not in self.items and segment not in self.modules:
                    return f"no item `{segment}`"
            elif segment not in self.modules:
                return f"no module `{segment}`"
        return None

    def check_span(self, span):
        """What is wrong with the names of one inline code span, as a list."""
        span = span.strip()
        if not span or span[0] in "#$-./\"'{[" or "=" in span.split("(")[0]:
            return []
        lead = re.match(r"&?(?:mut\s+)?(" + IDENT + r"(?:::" + IDENT + r")+)", span)
        if lead and (lead.end() == len(span) or span[lead.end()] in "(<!.:; ,{"):
            problem = self.check_path(lead.group(1).split("::"))
            return [problem] if problem else []
        if re.fullmatch(r"[&\w:<>, '\[\]()]+", span) and re.search(r"[A-Z]", span):
            if " " in span.replace(", ", ""):
                return []
            problems = []
            for name in re.findall(IDENT, span):
                if CAMEL.match(name) and name not in EXTERNAL and not self.known_type(name):
                    problems.append(f"no item `{name}`")
            return problems
        return []


def spans(text):
    """(line number, inline code) outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        if fence:
            if stripped.startswith(fence):
                fence = None
            continue
        match = re.match(r"(`{3,}|~{3,})", stripped)
        if match:
            fence = match.group(1)
            continue
        for m in re.finditer(r"(`+)(.+?)\1", line):
            yield number, m.group(2)


def main(args):
    if args:
        files = [pathlib.Path(a).resolve() for a in args]
    else:
        files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.glob("*/README.md"))]
    index = Index()
    problems = []
    checked = 0
    for path in files:
        for number, span in spans(path.read_text(encoding="utf-8")):
            checked += 1
            for problem in index.check_span(span):
                shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                problems.append(f"{shown}:{number}: `{span}`: {problem}")
    for problem in problems:
        print(problem)
    print(f"{len(files)} files, {checked} code spans, {len(problems)} stale names")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
