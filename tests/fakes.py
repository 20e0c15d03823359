"""Test doubles beyond ``tanglerag.testing``: a fake OpenAI-compatible server."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def fake_openai_server(reply: Callable[[dict], str], fail_first: int = 0, status: int = 503,
                       payload: Callable[[dict], dict | None] | None = None,
                       fail_body: bytes = b"busy") -> Iterator[dict]:
    """Serve /v1/chat/completions on localhost; the first ``fail_first`` requests get ``status``.

    ``payload`` may return a whole JSON reply for a request (a malformed one, say); None means the usual one.
    """
    state = {"requests": 0, "bodies": []}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state["requests"] += 1
            state["bodies"].append(body)
            state["auth"] = self.headers.get("Authorization")
            if state["requests"] <= fail_first:
                self.send_response(status)
                self.end_headers()
                self.wfile.write(fail_body)
                return
            raw = payload(body) if payload else None
            if raw is None:
                text = reply(body)
                raw = {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": 11, "completion_tokens": len(text.split())}}
            data = json.dumps(raw).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state["base_url"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
