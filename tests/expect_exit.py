#!/usr/bin/env python3
"""Run a command that must fail in one exact way: it passes only if the
command exits with CODE (a signal, such as a crash, never matches) and its
output (stdout and stderr) contains NEEDLE. Prints the command's output and
what did not match. A meson `should_fail` test passes on any failure,
crashes included; this is the exact form.

usage: expect_exit.py CODE NEEDLE -- COMMAND [ARG ...]"""
import subprocess
import sys

code, needle, sep, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
if sep != "--" or not cmd:
    sys.exit(__doc__)
run = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
out = run.stdout + run.stderr
sys.stdout.write(out)
wrong = []
if run.returncode != code:
    wrong.append(f"exit status {run.returncode} (negative: killed by that signal), expected {code}")
if needle not in out:
    wrong.append(f"no {needle!r} in its output")
for w in wrong:
    print(f"expect_exit: {w}")
sys.exit(1 if wrong else 0)
