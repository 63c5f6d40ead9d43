#!/usr/bin/env python3
"""What the shared library and its modules load (readelf -d, DT_NEEDED).
The library needs only libc, liburcu's libraries, ck and jemalloc (ck and
jemalloc optional), nothing of rdma-core (libibverbs, libnl, providers);
each module given needs its own backend library (MODULE=LIBRARY), so the
dependency moved and did not vanish. Prints each difference and exits 1.

usage: check_needed.py LIBRARY [MODULE=NEEDED_LIBRARY ...]"""
import re
import subprocess
import sys

ALLOWED = re.compile(r"^(libc\.so\.6|libdl\.so\.2|libpthread\.so\.0"
                     r"|liburcu(-common|-cds)?\.so\.\d+|libck\.so\.\d+|libjemalloc\.so\.\d+)$")
REQUIRED = {"libc.so.6", "liburcu.so.8"}


def needed(path):
    out = subprocess.run(["readelf", "-W", "-d", path], check=True,
                         capture_output=True, text=True).stdout
    return set(re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", out))


problems = []
lib = sys.argv[1]
got = needed(lib)
for name in sorted(got):
    if not ALLOWED.match(name):
        problems.append(f"{lib} needs {name}, outside libc, liburcu, ck and jemalloc")
for name in sorted(REQUIRED - got):
    problems.append(f"{lib} does not need {name}: the check reads nothing")
for arg in sys.argv[2:]:
    module, _, want = arg.partition("=")
    if want not in needed(module):
        problems.append(f"{module} does not need {want}")
for p in problems:
    print(p)
print(f"{lib}: needs {', '.join(sorted(got))}")
sys.exit(1 if problems else 0)
