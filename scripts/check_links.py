#!/usr/bin/env python3
"""Check the relative links of the README, the guides and the other Markdown files.

Every `[text](target)` and `![alt](target)` whose target is not a URL must name a file or
folder that exists, and its `#anchor`, if any, must be a heading of the Markdown file it names
(GitHub's anchors: lowercase, punctuation dropped, spaces as hyphens). Code blocks and inline
code are skipped. Exits 1 and lists every broken link.

    python3 scripts/check_links.py            # README.md, docs/, and every crate's README
    python3 scripts/check_links.py FILE...    # the files given
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def prose(text):
    """The text outside fenced code blocks and inline code."""
    out, fence = [], None
    for line in text.splitlines():
        stripped = line.lstrip()
        if fence:
            if stripped.startswith(fence):
                fence = None
            out.append("")
            continue
        match = re.match(r"(`{3,}|~{3,})", stripped)
        if match:
            fence = match.group(1)
            out.append("")
            continue
        out.append(re.sub(r"(`+).*?\1", "", line))
    return out


def anchors(path):
    """The anchors of a Markdown file's headings, read from the raw text (inline code included)."""
    found, counts, fence = set(), {}, None
    for line in path.read_text(encoding="utf-8").splitlines():
        stripped = line.lstrip()
        match = re.match(r"(`{3,}|~{3,})", stripped)
        if fence:
            if stripped.startswith(fence):
                fence = None
            continue
        if match:
            fence = match.group(1)
            continue
        match = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(1).lower()).replace(" ", "-")
        n = counts.get(slug, 0)
        counts[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def check(path):
    problems = []
    for number, line in enumerate(prose(path.read_text(encoding="utf-8")), 1):
        for target in LINK.findall(line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("//"):
                continue  # a URL (https:, mailto:, ...)
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(ROOT)}:{number}: {target}"
            if not dest.exists():
                problems.append(f"{where}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                problems.append(f"{where}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    return problems


def main(args):
    if args:
        files = [pathlib.Path(a).resolve() for a in args]
    else:
        files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted(ROOT.glob("*/README.md"))]
    problems = [p for f in files for p in check(f)]
    for problem in problems:
        print(problem)
    print(f"{len(files)} files, {len(problems)} broken links")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
