#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Keeps docs/jit-wrapper.md from rotting; run by `meson test` (docs-check).

1. Every code block preceded by `<!-- quote: FILE#NAME -->` must equal the
   region of FILE between the lines `/* snippet: NAME */` and
   `/* end snippet */` (dedented). `--update` rewrites the blocks instead.
2. Every MOROK_* environment variable read anywhere in the project (C:
   g_getenv, getenv, prepare-config.c's env (); Python: os.environ; shell:
   $MOROK_*) must have a row in the guide's environment table.

usage: check-docs.py SOURCE_ROOT [--update]
"""
import pathlib
import re
import sys
import textwrap

QUOTE = re.compile(r"<!-- quote: (?P<file>[^#]+)#(?P<name>[\w-]+) -->\n```c\n(?P<body>.*?)```",
                   re.S)
ENV_READ = re.compile(r'\b(?:g_getenv|getenv|env) \("(MOROK_[A-Z0-9_]+)"\)'  # C
                      r'|environ(?:\.get)?[\[(]\s*"(MOROK_[A-Z0-9_]+)"'     # Python
                      r'|\$\{?(MOROK_[A-Z0-9_]+)')                           # shell
ENV_ROW = re.compile(r"^\| `(MOROK_[A-Z0-9_]+)", re.M)


def region(root, file, name):
    lines = (root / file).read_text().splitlines()
    try:
        start = lines.index(next(l for l in lines if l.strip() == f"/* snippet: {name} */"))
    except StopIteration:
        sys.exit(f"{file}: no snippet '{name}'")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].strip() == "/* end snippet */")
    return textwrap.dedent("\n".join(lines[start + 1:end])) + "\n"


def main():
    root = pathlib.Path(sys.argv[1])
    update = "--update" in sys.argv
    guide = root / "docs" / "jit-wrapper.md"
    text = guide.read_text()
    errors = []

    def check(m):
        want = region(root, m["file"], m["name"])
        if m["body"] != want:
            errors.append(f"{guide.name}: quote of {m['file']}#{m['name']} differs from the source")
        if not update:
            return m.group(0)
        return f"<!-- quote: {m['file']}#{m['name']} -->\n```c\n{want}```"

    new_text = QUOTE.sub(check, text)
    if not QUOTE.search(text):
        errors.append(f"{guide.name}: no quotes found")
    if update:
        guide.write_text(new_text)
        return 0

    read = {}
    for sub in ("core", "kernels", "plugin", "examples", "bench", "docs", "tests", "scripts"):
        for src in sorted((root / sub).rglob("*")) if (root / sub).is_dir() else []:
            if src.suffix not in (".c", ".h", ".py", ".sh"):
                continue
            for groups in ENV_READ.findall(src.read_text()):
                var = next(g for g in groups if g)
                read.setdefault(var, src.relative_to(root))
    documented = set(ENV_ROW.findall(text))
    for var, src in sorted(read.items()):
        if var not in documented:
            errors.append(f"{guide.name}: {var} (read in {src}) is not in the environment table")

    for e in errors:
        print(e)
    print(f"{len(QUOTE.findall(text))} quotes, {len(read)} environment variables checked")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
