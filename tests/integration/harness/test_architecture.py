"""ARCHITECTURE.md's source-file table and its list of long files against the tree.

The table is how a newcomer finds a file; after the move to subsystem folders
(issue 28) a stale path or a file missing from it would send them astray, and line
counts written in prose went stale before. So: every source file under module/ is
named in the table, every path the table names exists, and the files over 750
lines are exactly those its "Files over 750 lines" section lists.

Its "Layers" table lists the floors of module/ from the ground up, each folder with
the folders below it that it may use: a row names only folders of rows above it, and
the file table's folders come in the same order from the top down. Every include of a
module header names its folder and crosses only to a folder its row allows; every call
between folders, read at link level from the built objects (nm: each folder's
undefined symbols resolved against the other folders' definitions), goes only to a
folder its row allows, so no lower floor calls a higher one (no back-arrow, listed or
not); and a row names no folder that its folder neither includes nor calls. No two
files of a folder call each other, but for the pairs listed there.
"""

import functools
import glob
import os
import re
import subprocess

import knotd
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



INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
TOP = "(top)"


def layers(text):
    """The Layers table: folder -> the folders it may include; "every folder" is None."""
    allowed = {}
    for line in text.split("\n"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not line.startswith("| ") or cells[0] in ("folder", "---"):
            continue
        folder, deps = cells
        if deps == "every folder":
            allowed[folder] = None
        elif deps == "nothing":
            allowed[folder] = set()
        else:
            allowed[folder] = {d.strip() for d in deps.split(",")}
    return allowed


def misplaced_rows(allowed):
    """Rows that name a folder not on a row above them: 'row: folder' (the table lists
    the floors from the ground up, so this also finds a cycle)."""
    wrong, above = [], set()
    for folder, deps in allowed.items():
        if deps is not None:
            wrong += [f"{folder}: {dep}" for dep in sorted(deps - above)]
        above.add(folder)
    return wrong


def includes(path):
    """The quoted includes of a file."""
    return INCLUDE.findall(_read(path))


def folder_of(path):
    """module/resolver/forward.c -> resolver; module/k8s.c -> (top)."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 else TOP


def included_folders(sources):
    """(file, header, folder of the file, folder of the header) of each include that
    crosses folders of module/."""
    found = []
    for path in sorted(sources):
        folder = folder_of(path)
        for inc in includes(path):
            dep = inc.split("/")[0] if "/" in inc else None
            if dep is not None and dep != folder and \
                    os.path.isdir(os.path.join(SRCDIR, "module", dep)):
                found.append((path, inc, folder, dep))
    return found


def crossings(sources, allowed):
    """Includes of a module header the table does not allow: 'file includes header'."""
    wrong = []
    for path, inc, folder, dep in included_folders(sources):
        may = allowed.get(folder, set())
        if may is not None and dep not in may:
            wrong.append(f"{path} includes {inc} ({folder} may use "
                         f"{', '.join(sorted(may)) or 'nothing'})")
    return wrong


def bare_includes(paths, headers):
    """Includes of a module header by its bare name: 'file includes name'."""
    bare = []
    for path in sorted(paths):
        here = os.path.dirname(path)
        for inc in includes(path):
            if "/" in inc or inc not in headers:
                continue
            if os.path.exists(os.path.join(SRCDIR, here, inc)) and here != "module" \
                    and not here.startswith("module/"):
                continue  # A test's own header beside it (tests/fuzz/check.h).
            if here == "module" and os.path.exists(os.path.join(SRCDIR, "module", inc)):
                continue  # The glue's own k8s_glue.h.
            bare.append(f"{path} includes \"{inc}\"")
    return bare


def c_files(top):
    found = set()
    for root, _dirs, files in os.walk(os.path.join(SRCDIR, top)):
        for name in files:
            if name.endswith((".c", ".h")):
                found.add(os.path.relpath(os.path.join(root, name), SRCDIR))
    return found


def file_table_folders(text):
    """The module/ folders of the file table's section rows, in their order."""
    return re.findall(r"^\| \*\*`module/([^`/]+)/`\*\*", text, re.M)


@tests.case
def the_layer_checks_see_a_back_arrow():
    allowed = layers("| folder | may use |\n|---|---|\n| lib | nothing |\n"
                     "| kinds | lib |\n| (top) | every folder |\n")
    testing.expect_equal(allowed, {"lib": set(), "kinds": {"lib"}, TOP: None}, "table read")
    testing.expect_equal(list(allowed), ["lib", "kinds", TOP], "rows in their order")
    testing.expect_equal(misplaced_rows(allowed), [], "the ground first")
    testing.expect_equal(misplaced_rows({"kinds": {"lib"}, "lib": set()}), ["kinds: lib"],
                         "a row naming a folder below it in the table")
    testing.expect_equal(misplaced_rows({"lib": {"kinds"}, "kinds": {"lib"}}), ["lib: kinds"],
                         "a two-folder cycle")
    testing.expect_equal(folder_of("module/lib/log.c"), "lib", "folder")
    testing.expect_equal(folder_of("module/k8s.c"), TOP, "top level")
    testing.expect_equal(file_table_folders("| **`module/`**: glue | |\n| `module/k8s.c` | x |\n"
                                            "| **`module/answer/`**: a | |\n"
                                            "| **`module/lib/`**: b | |\n"), ["answer", "lib"],
                         "the file table's folders")


@tests.case
def the_layers_table_lists_the_floors_from_the_ground_up():
    allowed = layers(section(_read("ARCHITECTURE.md"), "## Layers"))
    folders = {d for d in os.listdir(os.path.join(SRCDIR, "module"))
               if os.path.isdir(os.path.join(SRCDIR, "module", d))}
    testing.expect_equal(set(allowed) - {TOP}, folders, "a row for every folder of module/")
    wrong = misplaced_rows(allowed)
    testing.expect(not wrong, "rows of ARCHITECTURE.md's Layers table that name a folder "
                   "not above them (a floor above, or a cycle): " + ", ".join(wrong))
    testing.expect_equal(list(allowed)[-1], TOP, "the glue on top")


@tests.case
def the_file_table_lists_the_floors_from_the_top_down():
    allowed = layers(section(_read("ARCHITECTURE.md"), "## Layers"))
    floors = [f for f in allowed if f != TOP]
    listed = file_table_folders(section(_read("ARCHITECTURE.md"), "## Source files"))
    testing.expect_equal(listed, floors[::-1], "the file table's folders against the Layers "
                         "table's rows, reversed")


@tests.case
def every_folder_includes_only_the_folders_below_it():
    allowed = layers(section(_read("ARCHITECTURE.md"), "## Layers"))
    wrong = crossings(module_sources(), allowed)
    testing.expect(not wrong, "includes against ARCHITECTURE.md's Layers table:\n  "
                   + "\n  ".join(wrong))


@tests.case
def module_headers_are_included_by_their_folder():
    headers = {os.path.basename(p) for p in module_sources() if p.endswith(".h")}
    paths = module_sources() | c_files("tests") | c_files("bench")
    bare = bare_includes(paths, headers)
    testing.expect(not bare, "module headers included by bare name (name the folder: "
                   "\"lib/log.h\"):\n  " + "\n  ".join(bare))



@functools.lru_cache(maxsize=None)
def object_symbols(builddir):
    """Each built object of module/ ('folder/file', '' for the top) -> (defined, used)."""
    found = {}
    for obj in glob.glob(os.path.join(builddir, "module", "**", ".libs", "*.o"), recursive=True):
        folder = os.path.relpath(os.path.dirname(os.path.dirname(obj)), os.path.join(builddir, "module"))
        stem = os.path.basename(obj)[:-2]
        stem = stem.split("_la-", 1)[1] if "_la-" in stem else stem
        name = ("" if folder == "." else folder + "/") + stem
        if not os.path.exists(os.path.join(SRCDIR, "module", name + ".c")):
            continue  # A moved or removed file's object, left in an older build.
        out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
        defined, used = set(), set()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) >= 2:
                (used if parts[1] == "U" else defined if parts[1] in "TDBRVW" else set()).add(parts[0])
        found[name] = (defined, used)
    return found


def calls_between_folders(symbols):
    """{(folder, folder it calls): ['file -> file: symbol', ...]} of the objects' symbols,
    each undefined symbol resolved against the other objects' definitions."""
    where = {}
    for obj, (defined, _used) in symbols.items():
        for sym in defined:
            where.setdefault(sym, obj)
    calls = {}
    for obj, (_defined, used) in sorted(symbols.items()):
        for sym in sorted(used):
            callee = where.get(sym)
            if callee is None:
                continue
            a, b = folder_of("module/" + obj + ".c"), folder_of("module/" + callee + ".c")
            if a != b:
                calls.setdefault((a, b), []).append(f"{obj}.c -> {callee}.c: {sym}")
    return calls


def wrong_calls(calls, allowed):
    """The calls the table does not allow, a line each: 'a -> b (back-arrow): file -> file: symbol'."""
    floor = {folder: i for i, folder in enumerate(allowed)}
    wrong = []
    for (a, b), seen in sorted(calls.items()):
        may = allowed.get(a, set())
        if may is None or b in may:
            continue
        up = floor.get(b, len(floor)) >= floor.get(a, len(floor))
        more = f" and {len(seen) - 3} more" if len(seen) > 3 else ""
        wrong.append(f"{a} -> {b}{' (back-arrow: a lower floor calls a higher one)' if up else ''}: "
                     + "; ".join(seen[:3]) + more)
    return wrong


def mutual_pairs(symbols):
    """Pairs of files of one folder that each call (or read) the other: 'a.c <-> b.c'."""
    pairs = []
    names = sorted(symbols)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if os.path.dirname(a) != os.path.dirname(b):
                continue
            if symbols[a][1] & symbols[b][0] and symbols[b][1] & symbols[a][0]:
                pairs.append(f"{a}.c <-> {os.path.basename(b)}.c")
    return pairs


def listed_pairs(text):
    """The pairs the Layers section lets call each other: 'folder/a.c <-> b.c'."""
    return set(re.findall(r"^- `module/([^`]+\.c)` and `([^`]+\.c)` call each other", text, re.M))


@tests.case
def the_pair_check_sees_two_files_calling_each_other():
    symbols = {"w/a": ({"fa"}, {"fb"}), "w/b": ({"fb"}, {"fa"}), "w/c": ({"fc"}, {"fa"}),
               "v/d": ({"fd"}, {"fc"})}
    testing.expect_equal(mutual_pairs(symbols), ["w/a.c <-> b.c"], "a cycle of two, not a one-way call")
    testing.expect_equal(listed_pairs("- `module/w/a.c` and `b.c` call each other (why)\n"),
                         {("w/a.c", "b.c")}, "a listed pair")


@tests.case
def no_two_files_of_a_folder_call_each_other():
    symbols = object_symbols(knotd.find_build().builddir)
    testing.expect(len(symbols) > 50, f"the module's objects found ({len(symbols)})")
    listed = {f"{a} <-> {b}" for a, b in listed_pairs(section(_read("ARCHITECTURE.md"), "## Layers"))}
    found = set(mutual_pairs(symbols))
    testing.expect(not (found - listed), "files of a folder that call each other (calls go one "
                   "way: move the shared part into the private header or the callee):\n  "
                   + "\n  ".join(sorted(found - listed)))
    testing.expect(not (listed - found), "listed pairs that call one way now (remove them): "
                   + ", ".join(sorted(listed - found)))



@tests.case
def the_call_check_sees_a_back_arrow():
    symbols = {"lib/log": ({"k8s_logf"}, {"k8s_table_ns"}), "table/table": ({"k8s_table_ns"}, {"k8s_logf"}),
               "k8s": ({"k8s_load"}, {"k8s_table_ns"})}
    calls = calls_between_folders(symbols)
    testing.expect_equal(sorted(calls), [(TOP, "table"), ("lib", "table"), ("table", "lib")],
                         "folders' calls")
    allowed = {"lib": set(), "table": {"lib"}, TOP: None}
    testing.expect_equal(wrong_calls(calls, allowed), [
        "lib -> table (back-arrow: a lower floor calls a higher one): "
        "lib/log.c -> table/table.c: k8s_table_ns"], "the back-arrow, named")


@tests.case
def every_folder_calls_only_the_folders_below_it():
    symbols = object_symbols(knotd.find_build().builddir)
    testing.expect(len(symbols) > 50, f"the module's objects found ({len(symbols)})")
    allowed = layers(section(_read("ARCHITECTURE.md"), "## Layers"))
    calls = calls_between_folders(symbols)
    testing.expect(len(calls) > 20, f"calls between folders found ({len(calls)})")
    wrong = wrong_calls(calls, allowed)
    testing.expect(not wrong, "calls between folders (at link level) against ARCHITECTURE.md's "
                   "Layers table:\n  " + "\n  ".join(wrong))


@tests.case
def the_layers_table_names_only_folders_used():
    allowed = layers(section(_read("ARCHITECTURE.md"), "## Layers"))
    used = {(folder, dep) for _p, _h, folder, dep in included_folders(module_sources())}
    used |= set(calls_between_folders(object_symbols(knotd.find_build().builddir)))
    unused = sorted(f"{folder}: {dep}" for folder, deps in allowed.items() if deps is not None
                    for dep in deps if (folder, dep) not in used)
    testing.expect(not unused, "folders a row of ARCHITECTURE.md's Layers table names but its "
                   "folder neither includes nor calls (take them out): " + ", ".join(unused))


@tests.case
def every_kind_file_is_in_the_one_list_of_kinds():
    files = {f[len("kind_"):-2] for f in os.listdir(os.path.join(SRCDIR, "module", "kinds"))
             if f.startswith("kind_") and f.endswith(".c")}
    listed = set(re.findall(r"^\s*X\(K8S_\w+,\s*(\w+)\)", _read("module/kinds/kind.h"), re.M))
    testing.expect_equal(listed, files, "K8S_KINDS in kinds/kind.h against the kind_*.c files")
    included = set(re.findall(r'#include "kinds/kind_(\w+)\.h"', _read("module/kinds/objects.h")))
    testing.expect_equal(included, files, "the kind headers objects.h includes")


tests.main()
