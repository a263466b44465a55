#!/usr/bin/env python3
"""A stand-in for the OpenAI Responses API on 127.0.0.1, for capturing what a real client sends.

It serves scripted Responses SSE streams (reasoning, function calls with argument deltas,
assistant messages, usage with a `cached_tokens` figure computed from the prefix the request
shares with the previous one) and records every request: body bytes exactly as received, the
path and headers (secrets redacted), and the stream it answered with.

Python 3 standard library only. It never listens on anything but 127.0.0.1.

Usage:

    python3 tools/standin_upstream.py --record DIR [--port PORT] [--script SCRIPT.json]
                                      [--calls N] [--answer TEXT] [--cache breakpoints|prefix]
    python3 tools/standin_upstream.py PORT DIR [--calls N] [--answer TEXT]
    python3 tools/standin_upstream.py vendor SRC_DIR DEST_DIR --repo PATH --home PATH [--only req_00,...]

    --port 0 (the default) picks a free port; the port is printed on stdout as `PORT=<n>`.
    --calls N: when the script has no step for a request, answer the first N such requests with
    an `exec_command` call (`{"cmd": "ls"}`); after that (or with no --calls), with the assistant
    message --answer (default "Done.").
    --cache: keep a prompt cache by one of the two models of WIRE_SPEC §19.1 and report
    `usage.input_tokens_details.cached_tokens` (and, for `breakpoints`, `cache_write_tokens`)
    from it instead of the default byte-prefix estimate; see "The cache" below.
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
         {"call": "spawn_agent", "namespace": "collaboration",
          "arguments": {"task_name": "check", "message": "Check it."}},
         {"message": "Done."}
       ]}
    ]}

The cache (--cache). With PROMPTWIRE_RENDER naming a promptwire binary, a request's elements
are the segments of its prompt as the server renders it (`promptwire render --json`: content
hashes, tokens, where user messages and tool outputs end), and the rules below run on them.
Otherwise a request is read in the prompt order of promptwire's former prefix analysis
(src/core/prefix/shape.rs): `model`, `reasoning`, `text`, the other rendered top-level fields
(sorted by name), `tools` (Lite: the `additional_tools` item), `parallel_tool_calls`,
`tool_choice`, `instructions` (or the developer message that carries them), then each input
item. Each element's tokens are counted on its compact JSON, as promptwire counts them: with
tiktoken's o200k_base when the `tiktoken` module is installed, else approximated as
ceil(bytes / 4) per element. The counter used is printed on stdout at start
(`TOKENS=o200k_base` or `TOKENS=bytes/4`, the line after `PORT=`) and recorded in usage.jsonl. The cache is kept per
(model, prompt_cache_key) in memory; reused tokens are the sum of the tokens of the matching
leading elements.

- `prefix` (models before GPT-5.6): a request reads the longest run of leading elements it
  shares with any earlier request of its route, counted from 1,024 tokens on in 128-token steps;
  writes are free (no `cache_write_tokens`). Entries live 10 minutes (`prompt_cache_retention:
  "24h"`: 24 hours) from their last use.
- `breakpoints` (GPT-5.6 and later): the cache is written and read at breakpoints only — the
  implicit one at the end of the latest user message or tool output item (none when
  `prompt_cache_options.mode` is `"explicit"`), and one at the end of every input item that has
  a content block with `prompt_cache_breakpoint: {"mode": "explicit"}` (the end of its item,
  not of the block: tokens are counted per element). A request reads the longest of the latest
  80 cached breakpoints whose prefix it matches exactly (no shorter unmarked prefix); at most 4
  of its own breakpoints (the latest) are written, those of 1,024 tokens or more that were not
  cached; `cache_write_tokens` is the tokens from the end of what was read to its furthest
  written breakpoint. A read refreshes the breakpoint. A request without any breakpoint of its
  own (explicit mode, none marked) reads and writes nothing. Entries live `prompt_cache_options.ttl`
  (`30m`, `12h`, `90s`; default 30 minutes).

With `prompt_cache_options.comparison_response_id` the response carries
`prompt_cache_diagnostics`: `cache_hit` when the request starts with the whole compared
request, else `cache_miss` with a reason (`model_changed`, `prompt_cache_key_changed`,
`tools_changed`, `input_changed`) at the first differing element, `cache_missed_tokens` (this
request's tokens from there on) and `comparison_reusable_tokens` (the tokens before it);
`comparison_response_not_found` for an id it did not answer.

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
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY_BYTES = 64 * 1024 * 1024
SECRET_HEADERS = {"authorization", "api-key", "cookie", "set-cookie", "x-api-key", "openai-api-key"}
CHECKPOINT = "CONTEXT CHECKPOINT COMPACTION"


class State:
    """Recording folder, script and counters, shared by the handler threads."""

    def __init__(self, record_dir, script, calls=0, answer="Done.", cache=None):
        self.record_dir = record_dir
        self.cache = PromptCache(cache) if cache else None
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


# The prompt cache of --cache (see the module docs).

try:
    import tiktoken

    _ENCODING = tiktoken.get_encoding("o200k_base")
    TOKENS = "o200k_base"

    def count_tokens(text):
        return len(_ENCODING.encode(text, disallowed_special=()))
except Exception:  # noqa: BLE001 - any failure to load the encoding falls back to the estimate
    TOKENS = "bytes/4"

    def count_tokens(text):
        return (len(text.encode("utf-8")) + 3) // 4

OUTSIDE_RENDERING = {
    "client_metadata", "stream", "store", "include", "prompt_cache_key", "prompt_cache_retention",
    "prompt_cache_options", "service_tier", "metadata", "user", "safety_identifier",
    "stream_options", "background", "max_output_tokens", "temperature", "top_p", "top_logprobs",
}
KNOWN = {"model", "reasoning", "text", "tools", "parallel_tool_calls", "tool_choice",
         "instructions", "input"}
FLOOR = 1024
STEP = 128
MAX_WRITES = 4
CONSIDERED = 80
PREFIX_RETENTION = 10 * 60
DEFAULT_TTL = 30 * 60


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def is_kind(item, kind, role=None):
    return isinstance(item, dict) and item.get("type") == kind and (
        role is None or item.get("role") == role)


def elements(body):
    """[(kind, compact JSON, input index or None)] in the prefix analysis's prompt order."""
    items = body.get("input") if isinstance(body.get("input"), list) else []
    lite = bool(items) and is_kind(items[0], "additional_tools")
    lite_instructions = lite and len(items) > 1 and is_kind(items[1], "message", "developer")
    first_instructions = (not lite and "instructions" not in body and bool(items)
                          and is_kind(items[0], "message", "developer"))
    out = []

    def field(key, kind):
        if key in body:
            out.append((kind, compact(body[key]), None))

    field("model", "model")
    field("reasoning", "reasoning")
    field("text", "text")
    for key in sorted(k for k in body if k not in KNOWN and k not in OUTSIDE_RENDERING):
        field(key, "text")
    field("tools", "tools")
    if lite:
        out.append(("tools", compact(items[0]), 0))
    field("parallel_tool_calls", "tools")
    field("tool_choice", "tools")
    field("instructions", "instructions")
    offset = 0
    if lite:
        offset = 2 if lite_instructions else 1
        if lite_instructions:
            out.append(("instructions", compact(items[1]), 1))
    elif first_instructions:
        offset = 1
        out.append(("instructions", compact(items[0]), 0))
    for i in range(offset, len(items)):
        out.append(("input", compact(items[i]), i))
    return out


def parse_ttl(text):
    """`30m` / `12h` / `90s` / `1d` in seconds; None when unreadable."""
    if not isinstance(text, str) or len(text) < 2 or not text[:-1].isdigit():
        return None
    unit = {"s": 1, "m": 60, "h": 3600, "d": 86400}.get(text[-1])
    return int(text[:-1]) * unit if unit else None


def has_explicit_breakpoint(item):
    parts = []
    if isinstance(item, dict):
        for key in ("content", "output"):
            if isinstance(item.get(key), list):
                parts.extend(item[key])
    return any(isinstance(p, dict) and p.get("prompt_cache_breakpoint") == {"mode": "explicit"}
               for p in parts)


def is_user_or_tool(item):
    return is_kind(item, "message", "user") or (isinstance(item, dict) and item.get("type") in (
        "function_call_output", "custom_tool_call_output", "tool_search_output", "mcp_tool_call_output"))


def rendered_segments(body):
    """The segments `promptwire render --json -` gives for `body` (PROMPTWIRE_RENDER names the
    binary), or None when it is not set or fails."""
    binary = os.environ.get("PROMPTWIRE_RENDER")
    if not binary:
        return None
    import subprocess
    try:
        done = subprocess.run([binary, "render", "--json", "-"], input=json.dumps(body).encode(),
                              capture_output=True, timeout=60, check=True)
        return json.loads(done.stdout.decode().splitlines()[0])["segments"]
    except Exception:  # noqa: BLE001 - fall back to the elements
        return None


class Prompt:
    """A request as the cache sees it: element digests, cumulative tokens, breakpoints.

    With PROMPTWIRE_RENDER set, the elements are the segments of the prompt as the server
    renders it (`promptwire render --json`: each segment's content hash and tokens, and where
    user messages and tool outputs end); the cache rules below run on them unchanged."""

    def __init__(self, body):
        self.body = body
        self.segments = rendered_segments(body)
        if self.segments is not None:
            self.elements = [("tools" if seg["source"] == "tools" else "input", seg["key"],
                              seg["item"]) for seg in self.segments]
        else:
            self.elements = elements(body)
        self.digests = []
        self.ends = []  # tokens up to and including element k
        running = hashlib.sha256()
        total = 0
        for k, (_, text, _) in enumerate(self.elements):
            running.update(hashlib.sha256(text.encode("utf-8")).digest())
            self.digests.append(running.hexdigest())
            total += self.segments[k]["tokens"] if self.segments is not None else count_tokens(text)
            self.ends.append(total)
        self.tokens = total
        self.route = (body.get("model"), body.get("prompt_cache_key"))
        options = body.get("prompt_cache_options")
        self.options = options if isinstance(options, dict) else {}

    def breakpoints(self):
        """Element positions (0-based, inclusive) of this request's breakpoints, ascending."""
        if self.segments is not None:
            points = set()
            if self.options.get("mode") != "explicit":
                ends = [k for k, seg in enumerate(self.segments) if seg["ends"] in ("user", "tool")]
                if ends:
                    points.add(ends[-1])
            points.update(k for k, seg in enumerate(self.segments) if seg["explicit_breakpoint"])
            return sorted(points)
        items = self.body.get("input") if isinstance(self.body.get("input"), list) else []
        at_item = {index: k for k, (_, _, index) in enumerate(self.elements) if index is not None}
        points = set()
        if self.options.get("mode") != "explicit":
            latest = next((i for i in range(len(items) - 1, -1, -1) if is_user_or_tool(items[i])), None)
            if latest is not None and latest in at_item:
                points.add(at_item[latest])
        for i, item in enumerate(items):
            if has_explicit_breakpoint(item) and i in at_item:
                points.add(at_item[i])
        return sorted(points)

    def tokens_before(self, k):
        return self.ends[k - 1] if k > 0 else 0


class PromptCache:
    """What the server would hold, by one of the two models of WIRE_SPEC §19.1."""

    def __init__(self, model):
        self.model = model
        # route -> list of [digest, element count, tokens, expires_at], oldest first
        self.entries = {}
        self.answered = {}  # response id -> Prompt

    def use(self, body, response_id, now=None):
        """(cached_tokens, cache_write_tokens or None, diagnostics or None) for a request."""
        now = time.time() if now is None else now
        prompt = Prompt(body)
        entries = [e for e in self.entries.get(prompt.route, []) if e[3] > now]
        if self.model == "prefix":
            cached, written = self.prefix(prompt, entries, now)
        else:
            cached, written = self.breakpoints(prompt, entries, now)
        self.entries[prompt.route] = entries
        diagnostics = self.diagnose(prompt)
        if response_id:
            self.answered[response_id] = prompt
        return min(cached, prompt.tokens), written, diagnostics

    def prefix(self, prompt, entries, now):
        keep = PREFIX_RETENTION
        if prompt.body.get("prompt_cache_retention") == "24h":
            keep = 24 * 3600
        best = 0
        for entry in entries:
            digests, _, _, _ = entry
            shared = 0
            for a, b in zip(digests, prompt.digests):
                if a != b:
                    break
                shared += 1
            if shared:
                best = max(best, prompt.ends[shared - 1])
                entry[3] = now + keep
        cached = FLOOR + ((best - FLOOR) // STEP) * STEP if best >= FLOOR else 0
        entries.append([prompt.digests, len(prompt.digests), prompt.tokens, now + keep])
        return cached, None

    def breakpoints(self, prompt, entries, now):
        ttl = parse_ttl(prompt.options.get("ttl")) or DEFAULT_TTL
        own = prompt.breakpoints()
        if not own:
            # Explicit mode without an explicit breakpoint: nothing is read or written.
            return 0, 0
        considered = entries[-CONSIDERED:]
        read, hit = 0, None
        for entry in considered:
            digest, count, tokens, _ = entry
            if count <= len(prompt.digests) and prompt.digests[count - 1] == digest and tokens > read:
                read, hit = tokens, entry
        if hit is not None:
            hit[3] = now + ttl
        cached_keys = {(e[0], e[1]) for e in entries}
        written_to = 0
        for k in own[-MAX_WRITES:]:
            tokens = prompt.ends[k]
            key = (prompt.digests[k], k + 1)
            if tokens < FLOOR or key in cached_keys:
                continue
            entries.append([prompt.digests[k], k + 1, tokens, now + ttl])
            cached_keys.add(key)
            written_to = max(written_to, tokens)
        return read, max(0, written_to - read)

    def diagnose(self, prompt):
        compared = prompt.options.get("comparison_response_id")
        if not isinstance(compared, str):
            return None
        earlier = self.answered.get(compared)
        if earlier is None:
            return {"type": "comparison_response_not_found"}
        if earlier.route[0] != prompt.route[0]:
            return {"type": "cache_miss", "reason": "model_changed",
                    "cache_missed_tokens": prompt.tokens, "comparison_reusable_tokens": 0}
        if earlier.route[1] != prompt.route[1]:
            return {"type": "cache_miss", "reason": "prompt_cache_key_changed",
                    "cache_missed_tokens": prompt.tokens, "comparison_reusable_tokens": 0}
        shared = 0
        for a, b in zip(earlier.digests, prompt.digests):
            if a != b:
                break
            shared += 1
        if shared == len(earlier.digests):
            return {"type": "cache_hit"}
        kind = prompt.elements[shared][0] if shared < len(prompt.elements) else "input"
        reason = {"tools": "tools_changed", "model": "model_changed"}.get(kind, "input_changed")
        before = prompt.tokens_before(shared)
        return {"type": "cache_miss", "reason": reason,
                "cache_missed_tokens": prompt.tokens - before,
                "comparison_reusable_tokens": before}


def usage_for(state, raw, output_tokens, reasoning_tokens, body=None, rid=None):
    """Without --cache: input tokens ~ bytes / 4; cached: the prefix shared with the previous
    body, in 128-token steps from 1,024 tokens on. With --cache: the cache's figures (input
    tokens counted as the cache counts them). Returns (usage, prompt_cache_diagnostics or None)."""
    if state.cache is not None:
        cached, written, diagnostics = state.cache.use(body if isinstance(body, dict) else {}, rid)
        input_tokens = max(1, Prompt(body if isinstance(body, dict) else {}).tokens)
        details = {"cached_tokens": cached}
        if written is not None:
            details["cache_write_tokens"] = written
    else:
        diagnostics = None
        input_tokens = max(1, len(raw) // 4)
        shared = common_prefix(state.previous_body, raw) // 4
        cached = (shared // 128) * 128 if shared >= 1024 else 0
        details = {"cached_tokens": min(cached, input_tokens)}
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": details,
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
        "total_tokens": input_tokens + output_tokens,
    }, diagnostics


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

    def call(self, index, name, arguments, namespace=None):
        fid, cid = "fc_%04d" % self.n, "call_%04d" % self.n
        args = json.dumps(arguments)
        scope = {"namespace": namespace} if namespace else {}
        self.event("response.output_item.added", {"output_index": index, "item": {
            "type": "function_call", "id": fid, "call_id": cid, "name": name, **scope,
            "arguments": "", "status": "in_progress"}})
        half = len(args) // 2
        for delta in (args[:half], args[half:]):
            self.event("response.function_call_arguments.delta", {
                "item_id": fid, "output_index": index, "delta": delta})
        self.event("response.function_call_arguments.done", {
            "item_id": fid, "output_index": index, "arguments": args})
        self.event("response.output_item.done", {"output_index": index, "item": {
            "type": "function_call", "id": fid, "call_id": cid, "name": name, **scope,
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
        usage, diagnostics = usage_for(state, raw, 64, 0, body, rid)
    elif is_compaction(body):
        stream.message(0, "Handoff summary: the user asked for small repository chores; "
                          "the listed files were inspected and the work is done.")
        usage, diagnostics = usage_for(state, raw, 48, 0, body, rid)
    else:
        step = choose_step(state, body) or fallback_step(state)
        stream.reasoning(0, step.get("reasoning", "Planning next step"))
        if "call" in step:
            stream.call(1, step["call"], step.get("arguments", {}), step.get("namespace"))
        else:
            stream.message(1, step.get("message", "Done."))
        usage, diagnostics = usage_for(state, raw, step.get("output_tokens", 40),
                                       step.get("reasoning_tokens", 16), body, rid)
    response = {"id": rid, "status": "completed", "usage": usage}
    if diagnostics is not None:
        response["prompt_cache_diagnostics"] = diagnostics
    stream.event("response.completed", {"response": response})
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
                usage, _ = usage_for(state, raw, 64, 0, body)
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
                line = {"request": n, "response_id": rid, "usage": usage}
                if state.cache is not None:
                    line["tokens"] = TOKENS
                f.write(json.dumps(line) + "\n")
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
    parser.add_argument("--cache", choices=("breakpoints", "prefix"),
                        help="keep a prompt cache by this model (WIRE_SPEC 19.1) and report it")
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
    Handler.state = State(record, script, args.calls, args.answer, args.cache)
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print("PORT=%d" % server.server_address[1], flush=True)
    if args.cache:
        print("TOKENS=%s" % TOKENS, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
