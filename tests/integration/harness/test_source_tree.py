"""The source tree as shipped: no merge-conflict markers left in any text file.

A conflict resolved by hand once left `<<<<<<< ours` blocks in doc/mod-k8s.rst, which
rendered as text and hid one side of the merge; nothing else would have noticed.
"""

import os
import re

import testing

tests = testing.Tests()

SRCDIR = os.environ.get("MODK8S_SRCDIR") or os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# What git writes around a conflict; `=======` alone is an rst table border, so it is
# a marker only between the other two.
OPENING = re.compile(r"^<{7}( |$)")
CLOSING = re.compile(r"^>{7}( |$)")
SUFFIXES = (".c", ".h", ".py", ".rst", ".md", ".am", ".ac", ".yaml", ".conf", ".sh",
            ".example", ".txt", ".lua")
SKIP_DIRS = {".git", "build", "build-asan", "build-fuzz", "out", "autom4te.cache",
             "node_modules", "__pycache__"}


def _text_files():
    for root, dirs, files in os.walk(SRCDIR):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for name in files:
            path = os.path.join(root, name)
            if name.endswith(SUFFIXES) or name in ("README", "Makefile.am", "run"):
                yield path


def markers(lines):
    """Line numbers (1-based) of conflict markers in lines."""
    found = []
    for number, line in enumerate(lines, 1):
        if OPENING.match(line) or CLOSING.match(line):
            found.append(number)
    return found


@tests.case
def marker_finder_finds_a_conflict():
    lines = ["a", "<<<<<<< ours", "b", "=======", "c", ">>>>>>> theirs", "===== ====="]
    testing.expect_equal(markers(lines), [2, 6], "marker lines")
    testing.expect_equal(markers(["========= ======", "=======", "text"]), [],
                         "rst borders alone")


@tests.case
def no_conflict_markers_in_the_tree():
    bad = []
    for path in _text_files():
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.read().split("\n")
        except OSError:
            continue
        for number in markers(lines):
            bad.append(f"{os.path.relpath(path, SRCDIR)}:{number}")
    testing.expect(not bad, f"conflict markers at {', '.join(bad)}")


INTEGRATION = os.path.join(SRCDIR, "tests", "integration")


def shipped_integration_dirs(makefile_text):
    """What tests/Makefile.inc's EXTRA_DIST names under tests/integration (its folders)."""
    lines = "\n".join(re.findall(r"^EXTRA_DIST \+=(?:.*\\\n)*.*", makefile_text, re.M))
    return set(re.findall(r"\btests/integration/([\w-]+)", lines))


@tests.case
def the_extra_dist_reader_finds_continued_lines():
    text = "X = tests/integration/no\nEXTRA_DIST += a \\\n\ttests/integration/x \\\n" \
           "\ttests/integration/y\nEXTRA_DIST += tests/integration/z tests/lib\n"
    testing.expect_equal(shipped_integration_dirs(text), {"x", "y", "z"}, "folders")


@tests.case
def every_integration_test_is_in_a_folder_that_ships():
    with open(os.path.join(SRCDIR, "tests", "Makefile.inc"), encoding="utf-8") as f:
        shipped = shipped_integration_dirs(f.read())
    top = sorted(n for n in os.listdir(INTEGRATION) if n.startswith("test_") and n.endswith(".py"))
    testing.expect(not top, "test files outside the folders of tests/integration "
                   f"(the runner's opening comment says which folder): {', '.join(top)}")
    folders = {os.path.relpath(root, INTEGRATION).split(os.sep)[0]
               for root, _dirs, files in os.walk(INTEGRATION)
               if root != INTEGRATION and any(n.startswith("test_") for n in files)}
    testing.expect(not (folders - shipped), "folders missing from EXTRA_DIST in tests/Makefile.inc: "
                   + ", ".join(sorted(folders - shipped)))


tests.main()
