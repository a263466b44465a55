#!/usr/bin/env python3
"""A stand-in for the OpenAI Responses API on 127.0.0.1, for capturing what a real client sends.

It serves scripted Responses SSE streams (reasoning, function calls with argument deltas,
assistant messages, usage with a `cached_tokens` figure computed from the prefix the request
shares with the previous one) and records every request: body bytes exactly as received, the
path and headers (secrets redacted), and the stream it answered with.

Python 3 standard library only. It never listens on anything but 127.0.0.1.

Usage:

    python3 tools/standin_upstream.py --record DIR [--port PORT] [--script SCRIPT.json]
                                      [--calls N] [--answer TEXT]
    python3 tools/standin_upstream.py PORT DIR [--calls N] [--answer TEXT]
    python3 tools/standin_upstream.py vendor SRC_DIR DEST_DIR --repo PATH --home PATH [--only req_00,...]

    --port 0 (the default) picks a free port; the port is printed on stdout as `PORT=<n>`.
    --calls N: when the script has no step for a request, answer the first N such requests with
    an `exec_command` call (`{"cmd": "ls"}`); after that (or with no --calls), with the assistant
    message --answer (default "Done.").
    `vendor` copies a recording into tests/data/, elided like the shared fixtures (see vendor()).
    Point a client at it, e.g. a Codex CLI with a temporary CODEX_HOME whose config.toml has:

        model_provider = "standin"
        [model_providers.standin]
        name = "standin"
        base_url = "http://127.0.0.1:PORT/v1"
        wire_api = "responses"
        env_key = "STANDIN_API_KEY"

Recorded, in the order requests arrive (NN counts from 00):

    DIR/req_NN.json          the request body, byte for byte
    DIR/req_NN.headers.json  {"method", "path", "headers": {...}} (authorization becomes
                             "Bearer <redacted>"; api-key, cookie and the like "<redacted>")
    DIR/resp_NN.sse          the SSE stream sent back (resp_NN.json for a request without
                             `stream: true`, which gets one JSON response object, and for
                             unary endpoints)
    DIR/usage.jsonl          one line per answered request: {"request": NN, "response_id", "usage"}

The script (JSON) says what to answer. A request whose last input item is a user message starts
a turn: the first turn whose "match" text occurs in that message is chosen (or the next unused
turn in order), and its first step answers. A request whose last input item is a tool output
answers with the next step of the current turn. When a turn has no steps left, the answer is the
--calls fallback or the --answer message. Compaction requests (client_metadata `request_kind: "compaction"`, or a
trailing context-checkpoint message) are answered with a summary message and use no step; a
trailing `compaction_trigger` item is answered with a `compaction` item.

    {"turns": [
      {"match": "list the files",
       "steps": [
         {"call": "exec_command", "arguments": {"cmd": "ls"}},
         {"message": "Done."}
       ]}
    ]}

Stop it with SIGINT or SIGTERM.
"""

import argparse
import hashlib
import json
import os
import shutil
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY_BYTES = 64 * 1024 * 1024
SECRET_HEADERS = {"authorization", "api-key", "cookie", "set-cookie", "x-api-key", "openai-api-key"}
CHECKPOINT = "CONTEXT CHECKPOINT COMPACTION"


class State:
    """Recording folder, script and counters, shared by the handler threads."""

    def __init__(self, record_dir, script, calls=0, answer="Done."):
        self.record_dir = record_dir
        self.calls_left = calls
        self.answer = answer
        self.turns = script.get("turns", [])
        self.used = set()
        self.current = None
        self.step = 0
        self.count = 0
        self.previous_body = b""
        self.lock = threading.Lock()


def last_item(body):
    items = body.get("input")
    if isinstance(items, list) and items:
        return items[-1]
    return {}


def item_text(item):
    texts = []
    for part in item.get("content") or []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(texts)


def is_compaction(body):
    metadata = body.get("client_metadata") or {}
    kinds = [metadata.get("request_kind")]
    turn_metadata = metadata.get("x-codex-turn-metadata")
    if isinstance(turn_metadata, str):
        try:
            kinds.append(json.loads(turn_metadata).get("request_kind"))
        except (ValueError, AttributeError):
            pass
    if "compaction" in kinds:
        return True
    last = last_item(body)
    return last.get("role") == "user" and CHECKPOINT in item_text(last)


def common_prefix(a, b):
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def usage_for(state, raw, output_tokens, reasoning_tokens):
    """Input tokens ~ bytes / 4; cached: the prefix shared with the previous body, in
    128-token steps from 1,024 tokens on, as the API counts it."""
    input_tokens = max(1, len(raw) // 4)
    shared = common_prefix(state.previous_body, raw) // 4
    cached = (shared // 128) * 128 if shared >= 1024 else 0
    cached = min(cached, input_tokens)
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
        "total_tokens": input_tokens + output_tokens,
    }


class Stream:
    """Builds an SSE stream with sequence numbers."""

    def __init__(self, n):
        self.n = n
        self.seq = 0
        self.chunks = []

    def event(self, kind, payload):
        payload = dict({"type": kind}, **payload)
        payload["sequence_number"] = self.seq
        self.seq += 1
        self.chunks.append("event: %s\ndata: %s\n\n" % (kind, json.dumps(payload)))

    def reasoning(self, index, summary):
        rid = "rs_%04d" % self.n
        self.event("response.output_item.added", {"output_index": index, "item": {
            "type": "reasoning", "id": rid, "summary": [], "encrypted_content": None}})
        self.event("response.reasoning_summary_part.added", {
            "item_id": rid, "output_index": index, "summary_index": 0,
            "part": {"type": "summary_text", "text": ""}})
        for word in summary.split(" "):
            self.event("response.reasoning_summary_text.delta", {
                "item_id": rid, "output_index": index, "summary_index": 0, "delta": word + " "})
        self.event("response.reasoning_summary_text.done", {
            "item_id": rid, "output_index": index, "summary_index": 0, "text": summary})
        opaque = hashlib.sha256(("reasoning %d" % self.n).encode()).hexdigest()
        self.event("response.output_item.done", {"output_index": index, "item": {
            "type": "reasoning", "id": rid,
            "summary": [{"type": "summary_text", "text": summary}],
            "encrypted_content": "gAAAA" + opaque}})

    def call(self, index, name, arguments):
        fid, cid = "fc_%04d" % self.n, "call_%04d" % self.n
        args = json.dumps(arguments)
        self.event("response.output_item.added", {"output_index": index, "item": {
            "type": "function_call", "id": fid, "call_id": cid, "name": name,
            "arguments": "", "status": "in_progress"}})
        half = len(args) // 2
        for delta in (args[:half], args[half:]):
            self.event("response.function_call_arguments.delta", {
                "item_id": fid, "output_index": index, "delta": delta})
        self.event("response.function_call_arguments.done", {
            "item_id": fid, "output_index": index, "arguments": args})
        self.event("response.output_item.done", {"output_index": index, "item": {
            "type": "function_call", "id": fid, "call_id": cid, "name": name,
            "arguments": args, "status": "completed"}})

    def message(self, index, text):
        mid = "msg_%04d" % self.n
        self.event("response.output_item.added", {"output_index": index, "item": {
            "type": "message", "id": mid, "role": "assistant", "status": "in_progress",
            "content": []}})
        self.event("response.content_part.added", {
            "item_id": mid, "output_index": index, "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []}})
        for word in text.split(" "):
            self.event("response.output_text.delta", {
                "item_id": mid, "output_index": index, "content_index": 0, "delta": word + " "})
        self.event("response.output_text.done", {
            "item_id": mid, "output_index": index, "content_index": 0, "text": text})
        self.event("response.output_item.done", {"output_index": index, "item": {
            "type": "message", "id": mid, "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}})

    def compaction(self, index):
        opaque = hashlib.sha256(("compaction %d" % self.n).encode()).hexdigest()
        item = {"type": "compaction", "id": "cmp_%04d" % self.n, "encrypted_content": "gAAAA" + opaque}
        self.event("response.output_item.added", {"output_index": index, "item": item})
        self.event("response.output_item.done", {"output_index": index, "item": item})

    def text(self):
        return "".join(self.chunks)


def choose_step(state, body):
    """The step answering this request (a dict), or None for the default message."""
    last = last_item(body)
    if last.get("role") == "user" or last.get("type") == "message":
        text = item_text(last)
        chosen = None
        for i, turn in enumerate(state.turns):
            if i not in state.used and turn.get("match") and turn["match"] in text:
                chosen = i
                break
        if chosen is None:
            chosen = next((i for i in range(len(state.turns)) if i not in state.used), None)
        state.current = chosen
        state.step = 0
        if chosen is not None:
            state.used.add(chosen)
    if state.current is None:
        return None
    steps = state.turns[state.current].get("steps", [])
    if state.step >= len(steps):
        return None
    step = steps[state.step]
    state.step += 1
    return step


def fallback_step(state):
    """The answer when the script has none: a scripted `ls` call while --calls last, else --answer."""
    if state.calls_left > 0:
        state.calls_left -= 1
        return {"call": "exec_command", "arguments": {"cmd": "ls"}}
    return {"message": state.answer}


def answer(state, n, body, raw):
    """The SSE text and usage for request n."""
    stream = Stream(n)
    rid = "resp_%04d" % n
    stream.event("response.created", {"response": {"id": rid, "status": "in_progress"}})
    stream.event("response.in_progress", {"response": {"id": rid, "status": "in_progress"}})
    last = last_item(body)
    if last.get("type") == "compaction_trigger":
        stream.compaction(0)
        usage = usage_for(state, raw, 64, 0)
    elif is_compaction(body):
        stream.message(0, "Handoff summary: the user asked for small repository chores; "
                          "the listed files were inspected and the work is done.")
        usage = usage_for(state, raw, 48, 0)
    else:
        step = choose_step(state, body) or fallback_step(state)
        stream.reasoning(0, step.get("reasoning", "Planning next step"))
        if "call" in step:
            stream.call(1, step["call"], step.get("arguments", {}))
        else:
            stream.message(1, step.get("message", "Done."))
        usage = usage_for(state, raw, step.get("output_tokens", 40), step.get("reasoning_tokens", 16))
    stream.event("response.completed", {"response": {"id": rid, "status": "completed", "usage": usage}})
    return stream.text(), rid, usage


def json_response(text, rid, usage):
    """The response object a non-streaming request gets: the stream's finished items."""
    output = []
    for chunk in text.split("\n\n"):
        for line in chunk.split("\n"):
            if line.startswith("data: "):
                event = json.loads(line[len("data: "):])
                if event.get("type") == "response.output_item.done":
                    output.append(event["item"])
    return {"id": rid, "object": "response", "status": "completed", "output": output,
            "usage": usage}


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None

    def log_message(self, fmt, *args):
        sys.stderr.write("standin: " + (fmt % args) + "\n")

    def headers_json(self):
        headers = {}
        for key, value in self.headers.items():
            key = key.lower()
            if key == "authorization":
                value = "Bearer <redacted>"
            elif key in SECRET_HEADERS:
                value = "<redacted>"
            headers[key] = value
        return {"method": self.command, "path": self.path, "headers": headers}

    def reply(self, status, content_type, data):
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply(404, "application/json", b'{"error":{"message":"not served by the stand-in"}}')

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_BODY_BYTES:
            self.reply(413, "application/json", b'{"error":{"message":"body too large"}}')
            return
        raw = self.rfile.read(length)
        state = self.state
        with state.lock:
            n = state.count
            state.count += 1
            base = os.path.join(state.record_dir, "req_%02d" % n)
            write(base + ".json", raw)
            write(base + ".headers.json", json.dumps(self.headers_json(), indent=1).encode())
            try:
                body = json.loads(raw)
            except ValueError:
                body = {}
            if self.path.rstrip("/").endswith("/responses/compact"):
                usage = usage_for(state, raw, 64, 0)
                opaque = hashlib.sha256(("compact %d" % n).encode()).hexdigest()
                data = json.dumps({"output": [{"type": "compaction", "encrypted_content": "gAAAA" + opaque}],
                                   "usage": usage}).encode()
                write(os.path.join(state.record_dir, "resp_%02d.json" % n), data)
                rid = None
                content_type = "application/json"
            elif self.path.rstrip("/").endswith("/responses"):
                text, rid, usage = answer(state, n, body, raw)
                if body.get("stream") is True:
                    data = text.encode()
                    write(os.path.join(state.record_dir, "resp_%02d.sse" % n), data)
                    content_type = "text/event-stream"
                else:
                    # Without `stream: true` the API answers one JSON response object.
                    data = json.dumps(json_response(text, rid, usage)).encode()
                    write(os.path.join(state.record_dir, "resp_%02d.json" % n), data)
                    content_type = "application/json"
            else:
                self.reply(404, "application/json", b'{"error":{"message":"not served by the stand-in"}}')
                return
            state.previous_body = raw
            with open(os.path.join(state.record_dir, "usage.jsonl"), "a") as f:
                f.write(json.dumps({"request": n, "response_id": rid, "usage": usage}) + "\n")
        self.reply(200, content_type, data)


# Vendoring (formerly tools/vendor_capture.py): captures made with this stand-in are copied into
# tests/data/, elided the way the shared fixtures are (shared/fixtures/README.md):
# - string fields `text`, `description` and `output` longer than 160 characters become
#   `<N chars elided>` (structure, ids, key order and every other value untouched), except the
#   compaction checkpoint message, which promptwire compiles itself;
# - the capture's working directory and CODEX_HOME are replaced by /home/dev/demo-repo and
#   /home/dev/.codex, /root/ by /home/dev/;
# - the Authorization value is already redacted by the stand-in (checked here).
# Bodies are written compactly (the bytes serde_json would send for the same value).

ELIDE_LIMIT = 160
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
                and len(v) > ELIDE_LIMIT
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


def vendor(argv):
    """`vendor SRC_DIR DEST_DIR --repo PATH --home PATH [--only req_00,req_01]`."""
    p = argparse.ArgumentParser(prog="standin_upstream.py vendor")
    p.add_argument("src")
    p.add_argument("dest")
    p.add_argument("--repo", required=True)
    p.add_argument("--home", required=True)
    p.add_argument("--only", default="")
    a = p.parse_args(argv)
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


def main():
    if sys.argv[1:2] == ["vendor"]:
        vendor(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pos_port", nargs="?", type=int, metavar="PORT",
                        help="the port (same as --port)")
    parser.add_argument("pos_record", nargs="?", metavar="DIR", help="same as --record")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--record", help="folder for the recorded requests")
    parser.add_argument("--script", help="JSON script of turns and steps")
    parser.add_argument("--calls", type=int, default=0,
                        help="answer the first N unscripted requests with an `ls` call")
    parser.add_argument("--answer", default="Done.", help="the unscripted assistant message")
    args = parser.parse_args()
    port = args.pos_port if args.pos_port is not None else args.port
    record = args.pos_record or args.record
    if not record:
        parser.error("a recording folder is required (--record DIR, or PORT DIR)")
    os.makedirs(record, exist_ok=True)
    script = {}
    if args.script:
        with open(args.script) as f:
            script = json.load(f)
    Handler.state = State(record, script, args.calls, args.answer)
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print("PORT=%d" % server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
