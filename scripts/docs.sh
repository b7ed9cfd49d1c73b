#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the HTML reference with Doxygen (docs/Doxyfile): include/cattn.h, README.md as the
# front page, and the Markdown pages under docs/ (docs/api/ included), into build-docs/html.
# The reference is by subject: each section of the header is a group (the Modules index), each
# call's entry links to its docs/api page and the page back to the entry.
# Prints the warnings, their count and the number of generated pages, and exits non-zero on any
# warning (an undocumented public name, a broken reference, a declaration outside the header's
# sections, a call without its docs page or a page without its calls' entries) or when no page
# was generated. scripts/test.sh runs it twice: as it is and with CATTN_DOCS_HPP=1.
#   CATTN_DOCS_HEADER=<path>  document this header instead of include/cattn.h (a draft, say)
#   CATTN_DOCS_HPP=1          also document include/cattn.hpp
# Needs Doxygen >= 1.9.0 (FAIL_ON_WARNINGS); Debian bookworm has 1.9.4, which
# scripts/install_deps.sh installs.
set -uo pipefail
cd "$(dirname "$0")/.."
out=build-docs
header=${CATTN_DOCS_HEADER:-include/cattn.h}

if ! command -v doxygen >/dev/null; then
  echo "docs: doxygen not found; scripts/install_deps.sh installs it" >&2
  exit 1
fi
version=$(doxygen --version | awk '{ print $1 }')
if ! printf '1.9.0\n%s\n' "$version" | sort -C -V; then
  echo "docs: Doxygen $version is older than 1.9.0, which FAIL_ON_WARNINGS needs" >&2
  exit 1
fi
if [ ! -f "$header" ]; then
  echo "docs: no header at $header" >&2
  exit 1
fi

inputs=("$header")
[ "${CATTN_DOCS_HPP:-0}" = 1 ] && inputs+=(include/cattn.hpp)
inputs+=(README.md CHANGELOG.md docs)
project_number=$(sed -nE 's/^#define CATTN_VERSION_STRING "([^"]*)".*/\1/p' "$header" | head -1)

rm -rf "$out/html" "$out/xml" "$out/warnings.log"
mkdir -p "$out"
echo "== docs: Doxygen $version, ${inputs[*]}"
# docs/Doxyfile as it is, then the settings this run decides (a later line wins).
{
  cat docs/Doxyfile
  echo "PROJECT_NUMBER = \"${project_number:-unknown}\""
  echo "INPUT = ${inputs[*]}"
} | doxygen -
rc=$?

# Doxygen 1.9.4 does not warn about undocumented enum values (1.9.6 does); find them in the XML
# and add them to the log in Doxygen's own format.
if [ -d "$out/xml" ]; then
  if python3 - "$out/xml" >>"$out/warnings.log" <<'EOF'
import glob, sys, xml.etree.ElementTree as ET
seen = set()
for path in sorted(glob.glob(sys.argv[1] + "/*.xml")):
    for enum in ET.parse(path).iter("memberdef"):
        loc = enum.find("location")
        if enum.get("kind") != "enum" or enum.get("id") in seen:
            continue
        seen.add(enum.get("id"))
        for value in enum.iter("enumvalue"):
            text = "".join("".join(value.find(t).itertext()) for t in
                           ("briefdescription", "detaileddescription") if value.find(t) is not None)
            if not text.strip():
                print("%s:%s: warning: Member %s (enum value) of enum %s is not documented." %
                      (loc.get("file"), loc.get("line"), value.findtext("name"), enum.findtext("name")))
EOF
  then :; else echo "docs: the enum-value check failed" >&2; rc=1; fi
  # The reference by subject, also as warnings: every declaration of the headers is in a group
  # (a section of the header, so that the Modules index reaches it), every C function's
  # comment links to a docs page ("Details: docs/api/<name>.md"), and that page links back to
  # the function's entry (its "Reference:" line).
  if python3 - "$out/xml" >>"$out/warnings.log" <<'EOF'
import glob, sys, xml.etree.ElementTree as ET
grouped, compounds, pages = set(), [], {}
for path in sorted(glob.glob(sys.argv[1] + "/*.xml")):
    for c in ET.parse(path).iter("compounddef"):
        compounds.append(c)
        if c.get("kind") == "group":
            grouped.update(m.get("id") for m in c.iter("memberdef"))
            grouped.update(i.get("refid") for i in c.iter("innerclass"))
        if c.get("kind") == "page":
            pages[c.get("id")] = {r.get("refid") for r in c.iter("ref")}, c
def where(e):
    loc = e.find("location")
    return "%s:%s" % (loc.get("file"), loc.get("line") or 1) if loc is not None else "?"
def refs(e):
    return [r.get("refid", "") for t in ("briefdescription", "detaileddescription")
            if e.find(t) is not None for r in e.find(t).iter("ref")]
for c in compounds:
    kind, name = c.get("kind"), c.findtext("compoundname")
    if not (kind == "file" and name.endswith((".h", ".hpp")) or kind == "namespace"):
        continue
    for m in c.iter("memberdef"):
        if m.get("id") not in grouped:
            print("%s: warning: %s is in no group: no section of the reference lists it." %
                  (where(m), m.findtext("name")))
        if kind != "file" or not name.endswith(".h") or m.get("kind") != "function":
            continue
        docs = [r for r in refs(m) if r.startswith("md_docs_api_")]
        if not docs:
            print("%s: warning: %s links to no docs page (Details: docs/api/<name>.md)." %
                  (where(m), m.findtext("name")))
        for page in docs:
            if page in pages and m.get("id") not in pages[page][0]:
                print("%s: warning: the page does not link back to %s, whose comment names it "
                      "(its \"Reference:\" line)." % (where(pages[page][1]), m.findtext("name")))
    for i in c.iter("innerclass"):
        if i.get("refid") not in grouped:
            print("%s: warning: %s is in no group: no section of the reference lists it." %
                  (where(c), i.text))
EOF
  then :; else echo "docs: the reference-by-subject check failed" >&2; rc=1; fi
fi
# One warning per "warning:" or "error:" line; continuation lines (a list of parameters) are
# part of the warning above them.
warnings=0
if [ -s "$out/warnings.log" ]; then
  # Doxygen 1.9.4 reports a Markdown page's warnings twice; keep each line once.
  awk '!seen[$0]++' "$out/warnings.log" >"$out/warnings.tmp" && mv "$out/warnings.tmp" "$out/warnings.log"
  cat "$out/warnings.log"
  warnings=$(grep -cE "(warning|error):" "$out/warnings.log")
fi
pages=0
[ -d "$out/html" ] && pages=$(find "$out/html" -name '*.html' | wc -l)
echo "== docs: $warnings warnings, $pages pages generated ($out/html/index.html)"
if [ "$rc" != 0 ] || [ "$warnings" != 0 ] || [ "$pages" = 0 ]; then
  echo "== docs: FAILED (doxygen exit status $rc)"
  exit 1
fi
echo "== docs: passed"
