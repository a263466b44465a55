#!/usr/bin/env python3
"""Trains the zstd dictionary the session store compresses small texts and event chunks with
(`src/store/dict/promptwire-v1.zdict`, see `src/store/codec.rs`).

Samples are the project's own captures only (`tests/data/`: real Codex CLI 0.169/0.171 request
bodies and rollouts, stand-in SSE answers), cut the way the store cuts them: every top-level
value and object member of a body, every input item, every header line `["name","value"]`, every
SSE event's data, and each whole answer. Needs the `zstd` command line tool.

A stored blob names its dictionary; a retrained dictionary must get a new codec tag (and file),
never replace this one, or older databases could not be read. The test
`store::codec::tests::the_v1_dictionary_never_changes` guards that.

    python3 tools/train_store_dict.py OUT.zdict
"""

import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DATA = os.path.join(ROOT, "tests", "data")


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def body_samples(body):
    for key, value in body.items():
        if key == "input" and isinstance(value, list):
            for item in value:
                yield compact(item)
        elif isinstance(value, dict):
            for member in value.values():
                yield compact(member)
        else:
            yield compact(value)


def samples():
    for path in sorted(glob.glob(os.path.join(DATA, "**", "*.json"), recursive=True)):
        try:
            value = json.load(open(path, encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        if path.endswith(".headers.json") and isinstance(value.get("headers"), dict):
            for name, text in value["headers"].items():
                yield compact([name, text])
        elif isinstance(value, dict):
            yield from body_samples(value)
    for path in sorted(glob.glob(os.path.join(DATA, "**", "*.jsonl"), recursive=True)):
        for line in open(path, encoding="utf-8"):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            payload = record.get("payload") if isinstance(record, dict) else None
            if isinstance(payload, dict):
                yield compact(payload)
    for path in sorted(glob.glob(os.path.join(DATA, "**", "*.sse"), recursive=True)):
        text = open(path, encoding="utf-8", errors="replace").read()
        yield text
        for block in text.replace("\r\n", "\n").split("\n\n"):
            data = [line[5:].lstrip() for line in block.split("\n") if line.startswith("data:")]
            if data:
                yield "\n".join(data)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with tempfile.TemporaryDirectory() as folder:
        count = 0
        for n, sample in enumerate(s for s in samples() if len(s) >= 8):
            with open(os.path.join(folder, f"{n:06}"), "w", encoding="utf-8") as out:
                out.write(sample)
            count += 1
        files = sorted(glob.glob(os.path.join(folder, "*")))
        subprocess.run(
            ["zstd", "--train", "-q", "--maxdict=32768", "-o", sys.argv[1], *files],
            check=True,
        )
        print(f"{count} samples -> {sys.argv[1]} ({os.path.getsize(sys.argv[1])} bytes)")


if __name__ == "__main__":
    main()
