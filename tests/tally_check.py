#!/usr/bin/env python3
"""tally.py counts what Criterion cannot see. Feeds it meson log lines of
made-up Criterion runs and checks the exact totals: a clean run; one whose
worker LeakSanitizer reported at exit (Criterion said passing); one with a
teardown crash; two runs of one binary; a crash under should-pass. And that
a leak report's own lines are shown under its FAILED line (meson keeps no
log of a program that exited 0, so CI would have only the summary).

usage: tally_check.py TALLY_PY"""
import json
import subprocess
import sys
import tempfile

SYN = "[====] Synthesis: Tested: {t} | Passing: {p} | Failing: {f} | Crashing: {c} \n"
CASES = [
    # (result, output, expected "passed, failed, skipped")
    ("OK", SYN.format(t=3, p=3, f=0, c=0), (3, 0, 0)),
    ("OK", SYN.format(t=3, p=3, f=0, c=0) + "==7==ERROR: LeakSanitizer: detected memory leaks\n", (2, 1, 0)),
    ("OK", "Warning! The test `a::b` crashed during its setup or teardown.\n" + SYN.format(t=2, p=2, f=0, c=0),
     (1, 1, 0)),
    ("OK", SYN.format(t=2, p=2, f=0, c=0) + SYN.format(t=4, p=3, f=0, c=0), (5, 0, 1)),
    ("FAIL", SYN.format(t=2, p=2, f=0, c=0), (2, 1, 0)),
]
failed = 0
for result, out, want in CASES:
    with tempfile.NamedTemporaryFile("w", suffix=".json") as log:
        log.write(json.dumps({"name": "x", "result": result, "stdout": out, "stderr": ""}) + "\n")
        log.flush()
        last = subprocess.run([sys.executable, sys.argv[1], log.name, "s"], capture_output=True,
                              text=True, check=True).stdout.splitlines()[-1]
    expect = f"s: {want[0]} passed, {want[1]} failed, {want[2]} skipped"
    if last != expect:
        print(f"tally of {out!r} ({result}): {last!r}, expected {expect!r}")
        failed += 1

LEAK = ("==7==ERROR: LeakSanitizer: detected memory leaks\n\n"
        "Direct leak of 32 byte(s) in 1 object(s) allocated from:\n    #0 0x1 in malloc\n")
with tempfile.NamedTemporaryFile("w", suffix=".json") as log:
    log.write(json.dumps({"name": "x", "result": "OK", "stdout": SYN.format(t=1, p=1, f=0, c=0) + LEAK,
                          "stderr": ""}) + "\n")
    log.flush()
    shown = subprocess.run([sys.executable, sys.argv[1], log.name, "s"], capture_output=True,
                           text=True, check=True).stdout.splitlines()
want_shown = ["    | ==7==ERROR: LeakSanitizer: detected memory leaks", "    | ",
              "    | Direct leak of 32 byte(s) in 1 object(s) allocated from:", "    |     #0 0x1 in malloc"]
if shown[1:5] != want_shown:
    print(f"leak report shown as {shown!r}, expected its lines {want_shown!r}")
    failed += 1
print(f"{len(CASES) + 1 - failed} of {len(CASES) + 1} checks exact (the tallies and the report shown)")
sys.exit(1 if failed else 0)
