#!/usr/bin/env python3
"""Count test cases in a meson testlog.json: Criterion binaries by their own
"Synthesis" lines plus their "[SKIP]" lines (run with --verbose), a leak
report or teardown crash after the verdicts as one failure, every other
test program as one case (skipped when it printed a line starting "SKIP:",
e.g. no RDMA device here). A Criterion binary that ran no test and skipped
none counts as failed: an empty suite proves nothing. Prints one line per
failed or skipped program, then '<suite>: N passed, N failed, N skipped'."""
import json
import re
import sys

SYNTH = re.compile(r"Synthesis: Tested: (\d+) \| Passing: (\d+) \| Failing: (\d+) \| Crashing: (\d+)")
# What Criterion does not see: its worker reports a test's verdict before it
# exits, so a leak LeakSanitizer reports at the worker's exit, or a crash in
# a test's teardown or at exit, leaves the test "passing".
AFTER_VERDICT = re.compile(r"ERROR: LeakSanitizer: detected memory leaks|"
                           r"crashed during its setup or teardown")
REPORT_LINES = 30  # of the first such report, shown under its FAILED line
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
        # every run of the binary (conformance --all-verbs runs one per device)
        synths = [tuple(int(g) for g in x) for x in SYNTH.findall(out)]
        tested, p, f = (sum(x[i] for x in synths) for i in range(3))  # Failing counts the crashes
        cr_skips = CR_SKIP.findall(out)
        skipped += tested - p - f + len(cr_skips)
        after = AFTER_VERDICT.findall(out)
        if after:
            # which test it was is not said: one failure, taken from the passed
            print(f"  FAILED: {t['name']}: {len(after)} x '{after[0]}' after the verdicts")
            # the report itself: meson prints no log of a program that exited 0
            start = out.rfind("\n", 0, AFTER_VERDICT.search(out).start()) + 1
            for line in out[start:].splitlines()[:REPORT_LINES]:
                print(f"    | {line}")
            p, f = max(p - 1, 0), f + 1
        for reason in cr_skips:
            print(f"  SKIPPED: {t['name']}: {reason.strip()}")
        if tested == 0 and not cr_skips:
            print(f"  FAILED: {t['name']} (ran no test)")
            f = 1
        elif not ok and f == 0:
            f = 1
        passed, failed = passed + p, failed + f
    elif t["result"] == "SKIP":
        skipped += 1
        reasons = SKIPS_LINE.findall(out)
        print(f"  SKIPPED: {t['name']}: {reasons[0].strip() if reasons else 'exit status 77, no reason printed'}")
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
