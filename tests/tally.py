#!/usr/bin/env python3
"""Count test cases in a meson testlog.json: Criterion binaries by their own
"Synthesis" line plus their "[SKIP]" lines (run with --verbose), every other
test program as one case (skipped when it printed a line starting "SKIP:",
e.g. no RDMA device here). A Criterion binary that ran no test and skipped
none counts as failed: an empty suite proves nothing. Prints one line per
failed or skipped program, then '<suite>: N passed, N failed, N skipped'."""
import json
import re
import sys

SYNTH = re.compile(r"Synthesis: Tested: (\d+) \| Passing: (\d+) \| Failing: (\d+) \| Crashing: (\d+)")
SKIPS = re.compile(r"^SKIP(?:PED)?[: ]", re.M)
SKIPS_LINE = re.compile(r"^(SKIP(?:PED)?[: ].*)$", re.M)
CR_SKIP = re.compile(r"^\[SKIP\] (.*)$", re.M)

path, suite = sys.argv[1], sys.argv[2]
passed = failed = skipped = 0
try:
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
except FileNotFoundError:
    lines = []
    print(f"{suite}: no test log at {path}")
    failed += 1
for line in lines:
    if not line.strip():
        continue
    try:
        t = json.loads(line)
    except json.JSONDecodeError:
        print(f"  FAILED: {suite}: an unreadable line in {path} (two meson runs at once?)")
        failed += 1
        continue
    out = (t.get("stdout") or "") + (t.get("stderr") or "")
    m = SYNTH.search(out)
    ok = t["result"] in ("OK", "EXPECTEDFAIL")
    if m:
        p, f = int(m.group(2)), int(m.group(3))  # Failing already counts the crashes
        cr_skips = CR_SKIP.findall(out)
        skipped += int(m.group(1)) - p - f + len(cr_skips)
        for reason in cr_skips:
            print(f"  SKIPPED: {t['name']}: {reason.strip()}")
        if int(m.group(1)) == 0 and not cr_skips:
            print(f"  FAILED: {t['name']} (ran no test)")
            f = 1
        elif not ok and f == 0:
            f = 1
        passed, failed = passed + p, failed + f
    elif t["result"] == "SKIP":
        skipped += 1
    elif ok and SKIPS.search(out):
        # a program that ran but could not test (no hardware): say why
        skipped += 1
        for reason in SKIPS_LINE.findall(out):
            print(f"  SKIPPED: {t['name']}: {reason.strip()}")
    elif ok:
        passed += 1
    else:
        failed += 1
    if not ok:
        print(f"  FAILED: {t['name']} ({t['result']})")
print(f"{suite}: {passed} passed, {failed} failed, {skipped} skipped")
