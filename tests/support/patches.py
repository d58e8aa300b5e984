"""Patch builders for the tests: the git diffs a clone would make to create or modify one file."""

from __future__ import annotations

import difflib

from verifier.patch.apply import split_lines


def new_file(path: str, text: str) -> bytes:
    """A git diff creating `path` with `text` (a last line without a newline marked, as git does)."""
    lines = text.splitlines(keepends=True)
    body = "".join("+" + line for line in lines)
    if body and not body.endswith("\n"):
        body += "\n\\ No newline at end of file\n"
    return (f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
            f"@@ -0,0 +1,{len(lines)} @@\n{body}").encode()


def modify(path: str, old: str, new: str) -> bytes:
    """A git diff turning `old` into `new` at `path`, marking a last line without a newline."""
    diff = difflib.unified_diff(split_lines(old), split_lines(new),
                                f"a/{path}", f"b/{path}", n=3)
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff)
    return f"diff --git a/{path} b/{path}\n{text}".encode()
