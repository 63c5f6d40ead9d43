#!/usr/bin/env python3
"""Prove check_docs.py can fail: run it on copies of the public headers, each
with one piece of documentation removed (or one undocumented symbol added),
and require that it fails (exit 1) and names the symbol. The unchanged copy
must pass, so each failure is the mutation's doing. A mutation whose anchor
is no longer in the headers fails this test instead of passing vacuously.

Usage: check_docs_catches.py CHECK_DOCS_PY DOXYFILE HEADER_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

# What the previous comment block is: "/**", then no "*/", then "*/\n".
BLOCK = r"/\*\*(?:(?!\*/).)*\*/\n"

# (what is removed or added, header, regex, replacement, words the output must name)
MUTATIONS = [
    ("a function's whole comment", "doca_buf.h",
     BLOCK + r"(doca_error_t doca_buf_destroy\()", r"\1", ["doca_buf_destroy"]),
    ("one @param", "doca_buf.h",
     r" \* @param offset [^\n]*\n", "", ["doca_buf_create", "offset"]),
    ("one @return", "doca_event.h",
     r" \* @return The byte count; 0 for NULL\.\n", "", ["doca_event_get_bytes", "return"]),
    ("an enumerator's comment", "doca_types.h",
     r"(DOCA_ACCESS_FLAG_WRITE = 1u << 1,) */\*\*<[^\n]*\*/", r"\1", ["DOCA_ACCESS_FLAG_WRITE"]),
    ("a macro's comment", "doca_ctx.h",
     BLOCK + r"(#define DOCA_CTX_DEFAULT_MAX_TASKS )", r"\1", ["DOCA_CTX_DEFAULT_MAX_TASKS"]),
    ("a struct member's comment", "doca_task.h",
     r"(uint32_t flags;) */\*\*<[^\n]*\*/", r"\1", ["flags", "doca_task_desc"]),
    ("a typedef's comment", "doca_ctx.h",
     BLOCK + r"(typedef void \(\*doca_ctx_state_cb_t\))", r"\1", ["doca_ctx_state_cb_t"]),
    ("a 'Thread safety:' line", "doca_pe.h",
     r" \*\n \* Thread safety:[^\n]*\n(?: \* {2,}[^ \n][^\n]*\n)*( \*/\ndoca_error_t doca_pe_destroy\()", r"\1",
     ["doca_pe_destroy", "Thread safety"]),
    ("a callback typedef's 'Thread safety:' line", "doca_log.h",
     r" \*\n \* Thread safety:[^\n]*\n(?: \* {2,}[^ \n][^\n]*\n)*( \*/\ntypedef void \(\*doca_log_handler_t\))", r"\1",
     ["doca_log_handler_t", "Thread safety"]),
    ("an undocumented function added", "doca_buf.h",
     r"(#ifdef __cplusplus\n}\n#endif)", r"doca_error_t doca_buf_undocumented(struct doca_buf *buf);\n\n\1",
     ["doca_buf_undocumented"]),
    ("a @file comment (a new header without one)", "doca_extra.h",
     r"\A", "#ifndef DOCA_EXTRA_H\n#define DOCA_EXTRA_H\n/** @brief A number. */\n"
     "#define DOCA_EXTRA_NUMBER 1\n#endif\n", ["doca_extra.h", "no @file comment"]),
]


def check(check_py, doxyfile, headers):
    p = subprocess.run([sys.executable, check_py, doxyfile, headers], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    check_py, doxyfile, header_dir = (os.path.abspath(a) for a in sys.argv[1:])
    if shutil.which("doxygen") is None:
        print("SKIP: doxygen is not installed (./run test installs it)")
        return 77
    failures = 0
    with tempfile.TemporaryDirectory(prefix="doca-docs-mut-") as tmp:
        copy = os.path.join(tmp, "include")
        shutil.copytree(header_dir, copy)
        rc, out = check(check_py, doxyfile, copy)
        if rc != 0:
            print(f"FAIL: the unchanged headers do not pass (exit {rc}):\n{out}")
            return 1
        for what, header, pattern, repl, names in MUTATIONS:
            shutil.rmtree(copy)
            shutil.copytree(header_dir, copy)
            path = os.path.join(copy, header)
            old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
            new, n = re.subn(pattern, repl, old, count=1, flags=re.S)
            if n != 1 or new == old:
                print(f"FAIL: removing {what}: pattern not found in {header}")
                failures += 1
                continue
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
            rc, out = check(check_py, doxyfile, copy)
            missing = [w for w in names if w not in out]
            if rc != 1 or missing:
                print(f"FAIL: removing {what} in {header}: exit {rc}, output lacks {missing}:\n{out}")
                failures += 1
            else:
                print(f"caught: {what} in {header} (output names {', '.join(names)})")
    print(f"{len(MUTATIONS) - failures} of {len(MUTATIONS)} omissions caught")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
