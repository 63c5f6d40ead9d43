#!/usr/bin/env python3
"""The shared library's ABI, read from its dynamic symbol table (readelf):
its SONAME is libdoca-core.so.0; every defined dynamic symbol starts with
doca_ and is versioned DOCA_CORE_0 (the version node's own entry aside);
the exported functions are exactly the functions declared in include/, and
the version script lists exactly those, and so does the Debian symbols
file (dpkg-gensymbols only warns about a symbol missing from it). Prints
each difference and exits 1.

usage: check_exports.py LIBRARY INCLUDE_DIR VERSION_SCRIPT SYMBOLS_FILE"""
import pathlib
import re
import subprocess
import sys

SONAME = "libdoca-core.so.0"
NODE = "DOCA_CORE_0"

lib, include_dir, version_script, symbols_file = sys.argv[1:5]
problems = []


def readelf(*args):
    return subprocess.run(["readelf", "-W", *args, lib], check=True,
                          capture_output=True, text=True).stdout


def strip_comments(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


sonames = re.findall(r"\(SONAME\)\s+Library soname: \[(.*)\]", readelf("-d"))
if sonames != [SONAME]:
    problems.append(f"SONAME is {sonames or 'missing'}, expected {SONAME}")

# .dynsym rows: Num: Value Size Type Bind Vis Ndx Name[@[@]VERSION]
exported = set()
for row in readelf("--dyn-syms").splitlines():
    cols = row.split()
    if len(cols) < 8 or not cols[0].rstrip(":").isdigit() or cols[6] == "UND":
        continue
    name, _, version = cols[7].partition("@")
    version = version.lstrip("@")
    if cols[6] == "ABS" and name == NODE and cols[3] == "OBJECT":
        continue  # the version node's own entry
    if not name.startswith("doca_"):
        problems.append(f"exported symbol outside the API namespace: {cols[7]}")
    elif version != NODE:
        problems.append(f"exported symbol not in version node {NODE}: {cols[7]}")
    exported.add(name)

# Function declarations of the public headers: a doca_ name followed by "(".
# (A function-pointer typedef's name is followed by ")", so it is not one.)
declared = set()
for header in sorted(pathlib.Path(include_dir).glob("doca_*.h")):
    declared |= set(re.findall(r"\b(doca_\w+)\s*\(", strip_comments(header.read_text())))
if not declared:
    problems.append(f"no function declarations found in {include_dir}")

script = strip_comments(pathlib.Path(version_script).read_text())
listed = set(re.findall(r"^\s*(doca_\w+)\s*;", script, flags=re.M))

for name in sorted(declared - exported):
    problems.append(f"declared in {include_dir} but not exported: {name}")
for name in sorted(exported - declared):
    problems.append(f"exported but not declared in {include_dir}: {name}")
for name in sorted(declared ^ listed):
    where = "version script only" if name in listed else "headers only, not in the version script"
    problems.append(f"{name}: {where}")

# Symbols file rows: " name@VERSION minimal-version".
packaged = set(re.findall(r"^ (doca_\w+)@" + NODE + r" ", pathlib.Path(symbols_file).read_text(), flags=re.M))
for name in sorted(exported ^ packaged):
    where = "in the Debian symbols file only" if name in packaged else "exported, missing from the Debian symbols file"
    problems.append(f"{name}: {where}")

for p in problems:
    print(p)
print(f"{lib}: SONAME {sonames}, {len(exported)} exported, {len(declared)} declared, "
      f"{len(listed)} in the version script, {len(packaged)} in the symbols file, {len(problems)} problems")
sys.exit(1 if problems else 0)
