#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Doxygen input filter for include/cattn.h and include/cattn.hpp (docs/Doxyfile's
FILTER_PATTERNS; scripts/docs.sh runs Doxygen with it): turns each docs page a doc comment names
by its path, "docs/api/step_inputs.md" or "docs/design.md", into a link to that page of the HTML
reference, so that every "Details: docs/api/<name>.md" line of the header is one click from its
contract.

Why a filter rather than an @ref in the header: the header stays as people read it (a path, not
"@ref md_docs_api_step_inputs"), and so do the Rust docs that bindgen copies from its comments.
Doxygen names a Markdown page "md_" + its path without ".md", every character other than a
letter, digit or "_" written "_" (docs/performance-history.md is md_docs_performance_history); a
path that names no page becomes a reference Doxygen cannot resolve, a warning, and so a failed
scripts/docs.sh.

Only doc comments (/** ... */, /*! ... */, /// and //!) change, and in them nothing inside
`code spans`; lines are neither added nor removed, so Doxygen's line numbers stay the file's.
Usage: docs_filter.py FILE (writes the filtered text to stdout).
"""
import re
import sys

PATH = re.compile(r"(?<![\w/.-])docs/([A-Za-z0-9_/-]+)\.md\b")


def link(match):
    page = "md_docs_" + re.sub(r"[^A-Za-z0-9_]", "_", match.group(1))
    return '@ref %s "%s"' % (page, match.group(0))


def filter_doc_text(text):
    # Backtick code spans stay as written: Doxygen prints their content literally.
    parts = text.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = PATH.sub(link, parts[i])
    return "`".join(parts)


def filter_source(src):
    out, pos = [], 0
    # A doc comment: /** or /*! up to */, or /// or //! to the end of its line. String and
    # character literals are skipped so that a "/**" inside one is not taken for a comment.
    token = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.S)
    for m in token.finditer(src):
        out.append(src[pos:m.start()])
        piece = m.group(0)
        if piece.startswith(("/**", "/*!", "///", "//!")):
            piece = filter_doc_text(piece)
        out.append(piece)
        pos = m.end()
    out.append(src[pos:])
    return "".join(out)


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        sys.stdout.write(filter_source(f.read()))
