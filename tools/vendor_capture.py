#!/usr/bin/env python3
"""Vendors captures made with tools/standin_upstream.py into tests/data/, elided the way the
shared fixtures are (shared/fixtures/README.md):

- string fields `text`, `description` and `output` longer than 160 characters become
  `<N chars elided>` (structure, ids, key order and every other value untouched), except the
  compaction checkpoint message, which promptwire compiles itself;
- the capture's working directory and CODEX_HOME are replaced by /home/dev/demo-repo and
  /home/dev/.codex, /root/ by /home/dev/;
- the Authorization value is already redacted by the stand-in upstream (checked here).

Bodies are written compactly (the bytes serde_json would send for the same value).

Usage: vendor_capture.py SRC_DIR DEST_DIR --repo PATH --home PATH [--only req_00,req_01]
"""

import argparse
import json
import os
import shutil

LIMIT = 160
ELIDED_KEYS = ("text", "description", "output")
# Protocol text promptwire compiles itself (the in-band compaction request's checkpoint message)
# is kept verbatim: a test compares it byte for byte.
KEPT_PREFIXES = ("You are performing a CONTEXT CHECKPOINT COMPACTION.",)


def elide(value):
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if (
                k in ELIDED_KEYS
                and isinstance(v, str)
                and len(v) > LIMIT
                and not v.startswith(KEPT_PREFIXES)
            ):
                out[k] = f"<{len(v)} chars elided>"
            else:
                out[k] = elide(v)
        return out
    if isinstance(value, list):
        return [elide(v) for v in value]
    return value


def scrub(text, repo, home):
    return (
        text.replace(repo, "/home/dev/demo-repo")
        .replace(home, "/home/dev/.codex")
        .replace("/root/", "/home/dev/")
    )


def main():
    p = argparse.ArgumentParser()
    p.add_argument("src")
    p.add_argument("dest")
    p.add_argument("--repo", required=True)
    p.add_argument("--home", required=True)
    p.add_argument("--only", default="")
    a = p.parse_args()
    only = [s for s in a.only.split(",") if s]
    os.makedirs(a.dest, exist_ok=True)
    for name in sorted(os.listdir(a.src)):
        stem = name.split(".")[0]
        if only and stem.replace("resp_", "req_") not in only:
            continue
        src = os.path.join(a.src, name)
        dest = os.path.join(a.dest, name)
        raw = scrub(open(src, encoding="utf-8").read(), a.repo, a.home)
        if name.endswith(".headers.json"):
            captured = json.loads(raw)
            auth = captured["headers"].get("authorization")
            assert auth in (None, "Bearer <redacted>"), "authorization must be redacted"
            with open(dest, "w", encoding="utf-8") as f:
                json.dump(captured, f, indent=1, ensure_ascii=False)
                f.write("\n")
        elif name.startswith("req_") and name.endswith(".json"):
            body = elide(json.loads(raw))
            with open(dest, "w", encoding="utf-8") as f:
                f.write(json.dumps(body, separators=(",", ":"), ensure_ascii=False))
        elif name.startswith("resp_"):
            with open(dest, "w", encoding="utf-8") as f:
                f.write(raw)
        else:
            shutil.copy(src, dest)


if __name__ == "__main__":
    main()
