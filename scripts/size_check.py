#!/usr/bin/env python3
"""size_check.py - STYLE.md's size limits over src/: files over 700 lines and functions over
100 lines (test code left out: `#[cfg(test)]` to the end of a file, and files named tests.rs).

A function runs from its `fn` line to the first later line that closes it at the same
indentation (rustfmt's layout), signature and body included.

Usage:
  python3 scripts/size_check.py          # list what is over
  python3 scripts/size_check.py --check  # exit 1 when anything is over
"""
import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
FILE_MAX, FN_MAX = 700, 100
FN = re.compile(r"^(\s*)(?:pub(?:\([a-z]+\))? )?(?:const )?(?:async )?(?:unsafe )?fn ([a-z_0-9]+)")


def over():
    found = []
    for p in sorted(SRC.rglob("*.rs")):
        if p.name == "tests.rs":
            continue
        lines = p.read_text().split("\n")
        cut = next((i for i, l in enumerate(lines) if l.startswith("#[cfg(test)]")), len(lines))
        code = lines[:cut]
        rel = p.relative_to(SRC.parent)
        if len(lines) > FILE_MAX:
            found.append(f"{rel}: {len(lines)} lines (file; limit {FILE_MAX})")
        for i, l in enumerate(code):
            m = FN.match(l)
            if not m or l.rstrip().endswith(";"):
                continue
            close = m.group(1) + "}"
            end = next((j for j in range(i + 1, len(code)) if code[j].rstrip() == close), i)
            n = end - i + 1
            if n > FN_MAX:
                found.append(f"{rel}:{i + 1}: fn {m.group(2)} is {n} lines (limit {FN_MAX})")
    return found


def main():
    found = over()
    for f in found:
        print(f)
    if not found:
        print(f"no file over {FILE_MAX} lines, no function over {FN_MAX} lines in src/")
    if "--check" in sys.argv and found:
        sys.exit(1)


if __name__ == "__main__":
    main()
