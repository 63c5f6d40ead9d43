#!/usr/bin/env python3
"""Check that the public API is completely documented, and build its HTML.

Usage: check_docs.py DOXYFILE HEADER_DIR [OUTPUT_DIR]

Runs doxygen with DOXYFILE on the doca_*.h headers of HEADER_DIR, writing
HTML (and the XML this check reads) into OUTPUT_DIR, or into a temporary
directory removed afterwards. Fails when doxygen prints any warning (an
undocumented function, parameter, return value, macro, typedef, struct or
member: see the Doxyfile) or fails, and for what doxygen does not warn about:
- a header without a @file comment (doxygen then skips all its symbols);
- an enumerator without a comment;
- a function, or a callback (function-pointer) typedef, whose comment has
  no "Thread safety:" line.
Each problem is printed with the symbol it concerns. Exit 0 when complete,
1 when not, 77 (meson's SKIP) when doxygen is not installed.
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def text(node):
    return "".join(node.itertext()).strip() if node is not None else ""


def documented(node):
    return bool(text(node.find("briefdescription")) or text(node.find("detaileddescription")))


def run_doxygen(doxygen, doxyfile, header_dir, out_dir):
    """Doxygen output (warnings) and exit status; later settings win."""
    with open(doxyfile, encoding="utf-8") as f:
        config = f.read()
    config += (f'\nINPUT = "{header_dir}"\nSTRIP_FROM_PATH = "{header_dir}"\n'
               f'OUTPUT_DIRECTORY = "{out_dir}"\nGENERATE_XML = YES\nXML_OUTPUT = xml\n')
    p = subprocess.run([doxygen, "-"], input=config, capture_output=True, text=True)
    return (p.stdout + p.stderr).strip(), p.returncode


def xml_problems(header_dir, xml_dir):
    """What doxygen's warnings miss, read from its XML output."""
    problems = []
    index = ET.parse(os.path.join(xml_dir, "index.xml")).getroot()
    files = {c.findtext("name"): c.get("refid") for c in index.iter("compound") if c.get("kind") == "file"}
    for header in sorted(glob.glob(os.path.join(header_dir, "doca_*.h"))):
        name = os.path.basename(header)
        if name not in files:
            problems.append(f"{name}: not read by doxygen")
    for name, refid in sorted(files.items()):
        root = ET.parse(os.path.join(xml_dir, refid + ".xml")).getroot()
        compound = root.find("compounddef")
        if not documented(compound):
            problems.append(f"{name}: no @file comment (doxygen then checks none of its symbols)")
        for m in root.iter("memberdef"):
            sym = m.findtext("name")
            if not documented(m):
                problems.append(f"{name}: {m.get('kind')} {sym} is not documented")
            if m.get("kind") == "enum":
                for v in m.iter("enumvalue"):
                    if not documented(v):
                        problems.append(f"{name}: enumerator {v.findtext('name')} of enum {sym} is not documented")
            elif m.get("kind") == "function" or (m.get("kind") == "typedef" and "(*" in text(m.find("type"))):
                # a callback type says on which thread the library calls it
                doc = text(m.find("briefdescription")) + text(m.find("detaileddescription"))
                if "Thread safety:" not in doc:
                    problems.append(f"{name}: {m.get('kind')} {sym} has no 'Thread safety:' line")
    return problems


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    doxyfile, header_dir = (os.path.abspath(a) for a in sys.argv[1:3])
    doxygen = shutil.which("doxygen")
    if doxygen is None:
        print("SKIP: doxygen is not installed (./run test and ./run docs install it)")
        return 77
    out_dir = os.path.abspath(sys.argv[3]) if len(sys.argv) == 4 else tempfile.mkdtemp(prefix="doca-docs-")
    try:
        os.makedirs(out_dir, exist_ok=True)
        output, rc = run_doxygen(doxygen, doxyfile, header_dir, out_dir)
        problems = [line for line in output.splitlines() if line.strip()]
        if rc != 0 and not problems:
            problems.append(f"doxygen exited with status {rc}")
        if os.path.exists(os.path.join(out_dir, "xml", "index.xml")):
            problems += xml_problems(header_dir, os.path.join(out_dir, "xml"))
        for p in problems:
            print(p)
        headers = len(glob.glob(os.path.join(header_dir, "doca_*.h")))
        if problems:
            print(f"API documentation incomplete: {len(problems)} problem(s) in {header_dir}")
            return 1
        print(f"API documentation complete: {headers} headers in {header_dir}")
        if len(sys.argv) == 4:
            print(f"HTML: {os.path.join(out_dir, 'html', 'index.html')}")
        return 0
    finally:
        if len(sys.argv) == 3:
            shutil.rmtree(out_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
