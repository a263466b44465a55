#!/usr/bin/env python3
"""A stand-in Responses API upstream on 127.0.0.1 for capturing what a real client sends.

Every POST is recorded as req_NN.json (the exact body bytes) and req_NN.headers.json
({"path", "headers"} in arrival order, Authorization redacted); it is answered with a valid
Responses SSE stream (resp_NN.sse): a reasoning item, then either one function call (while the
scripted calls last) or an assistant message, then response.completed. A request whose input ends
with a compaction trigger gets one `compaction` output item; `/responses/compact` gets
`{"output": [...]}` JSON.

Usage: standin_upstream.py PORT OUT_DIR [--calls N] [--answer TEXT]
Loopback only; stop it with SIGTERM.
"""

import argparse
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 64 * 1024 * 1024


def sse(events):
    out = []
    for seq, ev in enumerate(events):
        ev["sequence_number"] = seq
        out.append(f"event: {ev['type']}\ndata: {json.dumps(ev)}\n\n")
    return "".join(out).encode()


class Upstream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    counter = 0
    calls_left = 0
    answer = "Done."
    out_dir = "."

    def log_message(self, fmt, *args):
        sys.stderr.write("upstream: " + fmt % args + "\n")

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_BODY:
            self.send_error(413)
            return
        body = self.rfile.read(length)
        n = Upstream.counter
        Upstream.counter += 1
        headers = {}
        for name, value in self.headers.items():
            key = name.lower()
            if key == "authorization":
                value = "Bearer <redacted>"
            headers[key] = value
        base = os.path.join(Upstream.out_dir, f"req_{n:02d}")
        with open(base + ".json", "wb") as f:
            f.write(body)
        with open(base + ".headers.json", "w") as f:
            json.dump({"path": self.path, "headers": headers}, f, indent=1)
        try:
            req = json.loads(body or b"{}")
        except ValueError:
            req = {}
        if self.path.endswith("/responses/compact"):
            payload = json.dumps(
                {"output": [{"type": "compaction", "encrypted_content": "c0mp4ct"}]}
            ).encode()
            self.reply(payload, "application/json", n, ".json")
            return
        self.reply(self.stream(req, n), "text/event-stream", n, ".sse")

    def reply(self, payload, ctype, n, ext):
        with open(os.path.join(Upstream.out_dir, f"resp_{n:02d}{ext}"), "wb") as f:
            f.write(payload)
        self.send_response(200)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def stream(self, req, n):
        rid = f"resp_{n:04d}"
        items = req.get("input") if isinstance(req.get("input"), list) else []
        last = items[-1] if items else {}
        events = [
            {"type": "response.created", "response": {"id": rid, "status": "in_progress"}},
        ]
        outputs = [
            {
                "type": "reasoning",
                "id": f"rs_{n:04d}",
                "summary": [{"type": "summary_text", "text": "**Planning** next step"}],
                "encrypted_content": f"gAAAAA{n:04d}",
            }
        ]
        if isinstance(last, dict) and last.get("type") == "compaction_trigger":
            outputs = [{"type": "compaction", "id": f"cmp_{n:04d}", "encrypted_content": "c0mp4ct"}]
        elif Upstream.calls_left > 0:
            Upstream.calls_left -= 1
            outputs.append(
                {
                    "type": "function_call",
                    "id": f"fc_{n:04d}",
                    "status": "completed",
                    "name": "exec_command",
                    "arguments": json.dumps({"cmd": "ls"}),
                    "call_id": f"call_{n:04d}",
                }
            )
        else:
            outputs.append(
                {
                    "type": "message",
                    "id": f"msg_{n:04d}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": Upstream.answer, "annotations": []}],
                }
            )
        for i, item in enumerate(outputs):
            events.append({"type": "response.output_item.added", "output_index": i, "item": item})
            events.append({"type": "response.output_item.done", "output_index": i, "item": item})
        events.append(
            {
                "type": "response.completed",
                "response": {
                    "id": rid,
                    "status": "completed",
                    "output": outputs,
                    "usage": {
                        "input_tokens": 1000,
                        "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens": 20,
                        "output_tokens_details": {"reasoning_tokens": 10},
                        "total_tokens": 1020,
                    },
                },
            }
        )
        return sse(events)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("port", type=int)
    p.add_argument("out_dir")
    p.add_argument("--calls", type=int, default=0)
    p.add_argument("--answer", default="Done.")
    a = p.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    Upstream.out_dir = a.out_dir
    Upstream.calls_left = a.calls
    Upstream.answer = a.answer
    ThreadingHTTPServer(("127.0.0.1", a.port), Upstream).serve_forever()


if __name__ == "__main__":
    main()
