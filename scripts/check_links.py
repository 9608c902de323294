#!/usr/bin/env python3
"""check_links.py - every relative link in the repository's Markdown, and every
`docs/<page>.md#<anchor>` citation in its code comments, must name an existing file and, when it
has one, an existing heading anchor (GitHub's rule: the heading's text, lower-cased, with
punctuation other than `-` and `_` dropped and spaces turned into `-`; repeats get `-1`, `-2`).

Usage: python3 scripts/check_links.py      (exit 1 and one line per broken link, else 0)
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Markdown files whose links are checked (external links are not fetched).
MARKDOWN = ["README.md", "RELIABILITY.md", "docs/*.md"]
# Where code cites the docs.
CODE_DIRS = ["src", "tests", "python", "scripts", "benches", ".ci"]
CODE_SUFFIXES = {".rs", ".py", ".sh", ".toml", ""}

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CITATION = re.compile(r"\bdocs/[A-Za-z0-9_./-]+\.md(?:#[A-Za-z0-9_-]+)?")


def slug(text: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link counts by its text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def prose_lines(path: Path):
    """(line number, text) of the lines outside fenced code blocks, inline code removed."""
    fenced = False
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield n, line


_anchors: dict = {}


def anchors(path: Path) -> set:
    if path not in _anchors:
        seen: dict = {}
        out = set()
        for _, line in prose_lines(path):
            m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            s = slug(m.group(1))
            k = seen.get(s, 0)
            seen[s] = k + 1
            out.add(s if k == 0 else f"{s}-{k}")
        _anchors[path] = out
    return _anchors[path]


def check(target: str, base: Path, src: Path, where: str, problems: list) -> None:
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:, …
        return
    file_part, _, anchor = target.partition("#")
    # `#anchor` alone points into the file it is written in.
    dest = (base / file_part).resolve() if file_part else src
    if not dest.exists():
        problems.append(f"{where}: {target}: no such file")
        return
    if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
        problems.append(f"{where}: {target}: no heading #{anchor} in {dest.relative_to(ROOT)}")


def tracked(patterns):
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "--", *patterns],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()
    return [ROOT / p for p in out]


def main() -> int:
    problems: list = []
    pages = tracked(MARKDOWN)
    for page in pages:
        for n, line in prose_lines(page):
            line = re.sub(r"`[^`]*`", "", line)
            for m in LINK.finditer(line):
                check(m.group(1), page.parent, page, f"{page.relative_to(ROOT)}:{n}", problems)
    cited = 0
    for f in tracked(CODE_DIRS):
        if f.suffix not in CODE_SUFFIXES or not f.is_file():
            continue
        try:
            text = f.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            for m in CITATION.finditer(line):
                cited += 1
                check(m.group(0), ROOT, f, f"{f.relative_to(ROOT)}:{n}", problems)
    for p in problems:
        print(p)
    print(
        f"check_links: {len(pages)} Markdown files, {cited} code citations, "
        f"{len(problems)} broken",
        file=sys.stderr,
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
