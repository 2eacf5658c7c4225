"""ARCHITECTURE.md's source-file table and its list of long files against the tree.

The table is how a newcomer finds a file; after the move to subsystem folders
(issue 28) a stale path or a file missing from it would send them astray, and line
counts written in prose went stale before. So: every source file under module/ is
named in the table, every path the table names exists, and the files over 750
lines are exactly those its "Files over 750 lines" section lists.
"""

import os
import re

import testing

tests = testing.Tests()

SRCDIR = os.environ.get("MODK8S_SRCDIR") or os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
LONG = 750


def _read(path):
    with open(os.path.join(SRCDIR, path), encoding="utf-8") as f:
        return f.read()


def section(text, title):
    """The text of a section from its heading to the next heading of its level or above."""
    start = text.index(title + "\n")
    level = title.split(" ")[0]
    rest = text[start + len(title) + 1:]
    ends = [m.start() for m in re.finditer(r"^(#+) ", rest, re.M) if len(m.group(1)) <= len(level)]
    return rest[:ends[0]] if ends else rest


def table_paths(text):
    """Every backquoted path in the table's first column."""
    paths = set()
    for line in text.split("\n"):
        if not line.startswith("| `"):
            continue
        first = line.split(" | ")[0]
        paths.update(re.findall(r"`([^`*]+)`", first))
    return paths


def module_sources():
    found = set()
    for root, _dirs, files in os.walk(os.path.join(SRCDIR, "module")):
        for name in files:
            if name.endswith((".c", ".h")):
                found.add(os.path.relpath(os.path.join(root, name), SRCDIR))
    return found


def line_count(path):
    return _read(path).count("\n")


@tests.case
def section_reader_stops_at_the_next_heading():
    text = "## A\none\n### B\ntwo\n## C\nthree\n"
    testing.expect_equal(section(text, "## A"), "one\n### B\ntwo\n", "section A")
    testing.expect_equal(section(text, "### B"), "two\n", "section B")
    testing.expect_equal(table_paths("| `a.c`, `b.h` | holds `c.c` |\n| **`dir/`** | |\n"),
                         {"a.c", "b.h"}, "first column only, folder rows skipped")


@tests.case
def every_source_file_is_in_the_table():
    named = table_paths(section(_read("ARCHITECTURE.md"), "## Source files"))
    missing = sorted(module_sources() - named)
    testing.expect(not missing, f"not in ARCHITECTURE.md's file table: {', '.join(missing)}")


@tests.case
def every_path_in_the_table_exists():
    named = table_paths(section(_read("ARCHITECTURE.md"), "## Source files"))
    gone = sorted(p for p in named if "*" not in p
                  and not os.path.exists(os.path.join(SRCDIR, p.rstrip("/"))))
    testing.expect(not gone, f"ARCHITECTURE.md's file table names missing paths: {', '.join(gone)}")


@tests.case
def the_long_files_are_the_ones_listed():
    text = section(_read("ARCHITECTURE.md"), f"### Files over {LONG} lines")
    listed = set(re.findall(r"^- `([^`]+)`", text, re.M))
    long = {p for p in module_sources() if line_count(p) > LONG}
    testing.expect(not (long - listed),
                   f"over {LONG} lines, not listed: {', '.join(sorted(long - listed))}")
    testing.expect(not (listed - long),
                   f"listed, not over {LONG} lines: {', '.join(sorted(listed - long))}")


tests.main()
