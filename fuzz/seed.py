#!/usr/bin/env python3
"""Builds fuzz/corpus/<target>/ from the project's own test data (tests/data, assets/prompts,
sessions/samples) and, when present, the Codex CLI captures in ../shared/fixtures.

Deterministic: each seed is named after its source, so running it again changes nothing.
Input formats are those of src/fuzzing (a NUL byte separates the parts of two-part inputs;
sse_stream inputs start with one control byte). Usage: fuzz/seed.sh [TARGET...]
"""
import json
import os
import pathlib
import sys

FUZZ = pathlib.Path(__file__).resolve().parent
REPO = FUZZ.parent
SHARED = REPO.parent / "shared" / "fixtures"
if os.environ.get("PROMPTWIRE_SHARED_DIR"):
    SHARED = pathlib.Path(os.environ["PROMPTWIRE_SHARED_DIR"]) / "fixtures"
elif not SHARED.is_dir():
    # A worktree sits beside the main checkout: /work/wt/NAME -> /work/shared.
    SHARED = REPO.parent.parent / "shared" / "fixtures"
SEP = b"\x00"


def files(root, pattern):
    return sorted(p for p in root.rglob(pattern) if p.is_file()) if root.is_dir() else []


def data_roots():
    return [REPO / "tests" / "data", SHARED]


def label(path):
    for root in (REPO, SHARED.parent):
        try:
            return str(path.relative_to(root)).replace("/", "_")
        except ValueError:
            pass
    return path.name


def bodies():
    """Request bodies: (path, bytes)."""
    out = []
    for root in data_roots():
        for p in files(root, "*.json"):
            name = p.name
            if name.startswith("req_") and not name.endswith("headers.json") or p.parent.name == "bodies":
                out.append(p)
    return out


def headers_for(body):
    stem = body.name[: -len(".json")]
    for cand in (body.with_name(stem + ".headers.json"), body.with_name(stem + ".headers")):
        if cand.is_file():
            return cand
    return None


def sse_files():
    return [p for root in data_roots() for p in files(root, "*.sse")]


def seeds_sse_stream():
    for p in sse_files():
        data = p.read_bytes()
        yield label(p) + ".whole", b"\x00" + data
        yield label(p) + ".chunked", b"\x2a" + data
        yield label(p) + ".limits", b"\xa7" + data


def seeds_import_body():
    for p in bodies():
        yield label(p), p.read_bytes()
        h = headers_for(p)
        if h is not None:
            yield label(p) + ".with-headers", p.read_bytes() + SEP + h.read_bytes()


def seeds_compile_prompt():
    for p in files(REPO / "assets" / "prompts", "*.json") + [REPO / "tests/data/sse/prompt-hello.json"]:
        yield label(p), p.read_bytes()
    # Prompts imported from the bodies, when `fuzz/seed.sh` was given a promptwire binary.
    for p in files(FUZZ / "imported-prompts", "*.json"):
        yield "imported_" + p.name, p.read_bytes()


def seeds_har_import():
    for p in files(REPO / "sessions" / "samples", "*.har"):
        yield label(p), p.read_bytes()
    # One HAR per captured session folder: each request with its headers and its stream.
    for root in data_roots():
        for folder in sorted({p.parent for p in files(root, "req_*.json")}):
            entries = []
            for body in sorted(folder.glob("req_*.json")):
                if body.name.endswith("headers.json"):
                    continue
                h = headers_for(body)
                headers = []
                if h is not None and h.suffix == ".json":
                    try:
                        headers = [{"name": k, "value": v} for k, v in json.loads(h.read_text())["headers"].items()]
                    except (ValueError, KeyError, AttributeError):
                        headers = []
                resp = body.with_name(body.name.replace("req_", "resp_").replace(".json", ".sse"))
                entry = {
                    "startedDateTime": "2026-11-30T12:00:00.000Z",
                    "time": 100.0,
                    "request": {"method": "POST", "url": "http://127.0.0.1:1/v1/responses",
                                "headers": headers, "postData": {"mimeType": "application/json",
                                                                 "text": body.read_text()}},
                    "timings": {"send": 0, "wait": 50.0, "receive": 50.0},
                }
                if resp.is_file():
                    entry["response"] = {"status": 200, "headers": [{"name": "content-type", "value": "text/event-stream"}],
                                         "content": {"mimeType": "text/event-stream", "text": resp.read_text()}}
                entries.append(entry)
            if entries:
                har = {"log": {"version": "1.2", "creator": {"name": "seed", "version": "0"}, "entries": entries}}
                yield label(folder) + ".har", json.dumps(har).encode()


def seeds_rollout_import():
    for p in files(REPO / "tests" / "data" / "rollouts", "rollout-*.jsonl"):
        data = p.read_bytes()
        yield label(p), data
        # The first lines only: a small seed mutates faster.
        yield label(p) + ".head", b"\n".join(data.split(b"\n")[:12]) + b"\n"


def seeds_prefix_pair():
    for root in data_roots():
        for folder in sorted({p.parent for p in files(root, "req_*.json")}):
            reqs = [p for p in sorted(folder.glob("req_*.json")) if not p.name.endswith("headers.json")]
            for a, b in zip(reqs, reqs[1:]):
                yield label(a) + "+" + b.name, a.read_bytes() + SEP + b.read_bytes()
            if len(reqs) == 1:
                yield label(reqs[0]), reqs[0].read_bytes()


TARGETS = {name[len("seeds_"):]: fn for name, fn in globals().items() if name.startswith("seeds_")}


def main(argv):
    names = argv or sorted(TARGETS)
    for name in names:
        if name not in TARGETS:
            sys.exit(f"seed.sh: unknown target `{name}` (known: {', '.join(sorted(TARGETS))})")
        out = FUZZ / "corpus" / name
        out.mkdir(parents=True, exist_ok=True)
        count = size = 0
        for seed_name, data in TARGETS[name]():
            (out / ("seed_" + seed_name)).write_bytes(data)
            count += 1
            size += len(data)
        print(f"{name}: {count} seeds, {size} bytes -> {out.relative_to(REPO)}")
    if not SHARED.is_dir():
        print(f"note: {SHARED} is missing; seeds come from the repository only", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
