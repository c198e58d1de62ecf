"""A scripted OpenAI chat-completions server over real HTTP, for tests.

It listens on 127.0.0.1 (a free port) in a background thread and answers each
``POST /v1/chat/completions`` with the next entry of its script, so a test can
make an endpoint misbehave exactly as it wants: malformed JSON, a stall past
the client's timeout, HTTP 5xx, tool calls, function names that do not exist.

A script entry is a dict (or a callable ``f(request_body) -> dict``):

* ``{"content": "text"}``: a normal reply with that message content;
* ``{"json": value}``: content ``json.dumps(value)``;
* ``{"tool_calls": [{"name": "f", "arguments": {...} | "raw"}], "content": None}``;
* ``{"status": 503, "body": {...} | "text"}``: an HTTP error (default body: an OpenAI error object);
* ``{"raw": "bytes that are not JSON"}``: a 200 response with a broken body;
* any entry may add ``"sleep": seconds`` (stall first), ``"usage": {...}``,
  ``"finish_reason": "..."``;
* :func:`answer_in_groups_of` (n) holds each request until n are in flight, to
  check concurrency by behaviour rather than by timing.

When the script runs out the server answers with ``default`` (set by
:meth:`ScriptedOpenAIServer.script`), or HTTP 500 "script exhausted".

:meth:`ScriptedOpenAIServer.on` answers any other POST path (vLLM's
``/v1/completions``, ``/v1/load_lora_adapter``, ...) with its own entry, every
time: ``{"status": ..., "body": ...}``, ``{"body": ...}`` (HTTP 200), or
``{"completion": {"token_ids": [...], "logprobs": [...]}, "model": name}`` (a
vLLM text completion with ``return_token_ids``); bodies land in ``posts``.
Paths without an entry answer HTTP 404, as a server without that route does.

:meth:`ScriptedOpenAIServer.route` scripts answers per ``purpose`` instead:
rods' openai backend sends each call's purpose in the ``X-Rods-Purpose``
header (recorded in ``purposes``), so a test can answer each synthesis stage
in its own way.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Entry = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


class ScriptedOpenAIServer:
    """The server; use as a context manager or call :meth:`start` / :meth:`stop`.

    Attributes:
        base_url: ``http://127.0.0.1:PORT/v1``, ready for ``openai.OpenAI(base_url=...)``.
        requests: the JSON bodies received, in arrival order.
        max_in_flight: the most chat requests the server was handling at once.
    """

    def __init__(self, model: str = "scripted-model"):
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.purposes: list[str] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._queue: deque[Entry] = deque()
        self._default: Entry | None = None
        self._routes: dict[str, deque[Entry] | Entry] = {}
        self._paths: dict[str, Entry] = {}
        #: (path, body) of every POST answered by an `on` entry, in arrival order.
        self.posts: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------- control

    def script(self, responses: list[Entry], default: Entry | None = None) -> ScriptedOpenAIServer:
        """Replace the script: answer the next requests with ``responses`` in order."""
        with self._lock:
            self._queue = deque(responses)
            self._default = default
        return self

    def route(self, routes: dict[str, Entry | list[Entry]]) -> ScriptedOpenAIServer:
        """Answer requests whose purpose is a key with that entry (every time) or
        with that list's entries in order (then fall through to the script)."""
        with self._lock:
            self._routes = {k: deque(v) if isinstance(v, list) else v for k, v in routes.items()}
        return self

    def on(self, path: str, entry: Entry) -> ScriptedOpenAIServer:
        """Answer every POST to `path` (e.g. ``/v1/completions``) with `entry` (a dict or ``f(body) -> dict``)."""
        with self._lock:
            self._paths[path] = entry
        return self

    @property
    def remaining(self) -> int:
        """Script entries not yet served."""
        with self._lock:
            return len(self._queue)

    def start(self) -> ScriptedOpenAIServer:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="scripted-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # ------------------------------------------------------------ internals

    def _next(self, body: dict[str, Any], purpose: str) -> dict[str, Any]:
        with self._lock:
            self.requests.append(body)
            self.purposes.append(purpose)
            route = self._routes.get(purpose)
            if isinstance(route, deque) and route:
                entry: Entry | None = route.popleft()
            elif route is not None and not isinstance(route, deque):
                entry = route
            else:
                entry = self._queue.popleft() if self._queue else self._default
        if entry is None:
            return {"status": 500, "body": _error("scripted server: script exhausted")}
        return entry(body) if callable(entry) else entry

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1


def answer_in_groups_of(size: int, content: str = "ok") -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A script entry that answers only once `size` requests are at the server together.

    It proves a client reached that concurrency whatever the machine's speed (a
    client that sent fewer at once breaks the barrier and gets HTTP 400); the
    timeout only turns a hang into a failure. Requests must come in multiples of `size`.
    """
    barrier = threading.Barrier(size)

    def entry(body: dict[str, Any]) -> dict[str, Any]:
        try:
            barrier.wait(timeout=60)
        except threading.BrokenBarrierError:
            return {"status": 400, "body": _error(f"fewer than {size} requests at once", "invalid_request_error")}
        return {"content": content}

    return entry


def completion_body(entry: dict[str, Any], model: str) -> dict[str, Any]:
    """The chat.completion JSON for a success entry."""
    message: dict[str, Any] = {"role": "assistant", "content": entry.get("content")}
    if "json" in entry:
        message["content"] = json.dumps(entry["json"])
    finish = entry.get("finish_reason", "stop")
    if entry.get("tool_calls"):
        message["tool_calls"] = [
            {
                "id": call.get("id", f"call_{i}"),
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": call["arguments"] if isinstance(call.get("arguments"), str)
                    else json.dumps(call.get("arguments", {})),
                },
            }
            for i, call in enumerate(entry["tool_calls"])
        ]
        finish = entry.get("finish_reason", "tool_calls")
    content = message["content"] or ""
    usage = entry.get("usage") or {"prompt_tokens": 10, "completion_tokens": max(1, len(content) // 4)}
    usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": usage,
    }


def text_completion_body(entry: dict[str, Any], model: str) -> dict[str, Any]:
    """vLLM's text-completion JSON (token ids and log-probabilities of one choice) for a `completion` entry."""
    done = entry["completion"]
    return {
        "id": "cmpl-scripted", "object": "text_completion", "created": int(time.time()),
        "model": entry.get("model", model),
        "choices": [{"index": 0, "text": "", "token_ids": list(done["token_ids"]), "finish_reason": "stop",
                     "logprobs": {"token_logprobs": list(done["logprobs"]), "tokens": [], "top_logprobs": [],
                                  "text_offset": []}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": len(done["token_ids"]), "total_tokens": 1},
    }


def _error(message: str, kind: str = "server_error") -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _make_handler(server: ScriptedOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep test output quiet
            pass

        def _send(self, status: int, payload: bytes, content_type: str = "application/json") -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout): nothing to answer

        def do_GET(self) -> None:  # noqa: N802
            if self.path.rstrip("/").endswith("/models"):
                body = {"object": "list", "data": [{"id": server.model, "object": "model", "owned_by": "rods"}]}
                self._send(200, json.dumps(body).encode())
            else:
                self._send(404, json.dumps(_error(f"no route {self.path}", "not_found")).encode())

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            path = self.path.split("?")[0].rstrip("/")
            if path in server._paths:
                self._answer_path(path, raw)
                return
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, json.dumps(_error(f"no route {self.path}", "not_found")).encode())
                return
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(400, json.dumps(_error("request body is not JSON", "invalid_request_error")).encode())
                return
            # A request counts as in flight until its answer is ready, not until it is
            # sent: the client may start its next request the moment it reads this one.
            server._enter()
            try:
                entry = server._next(body, self.headers.get("X-Rods-Purpose", ""))
                if entry.get("sleep"):
                    time.sleep(float(entry["sleep"]))
                if "status" in entry:
                    payload = entry.get("body", _error(f"scripted HTTP {entry['status']}"))
                    status = int(entry["status"])
                    data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                elif "raw" in entry:
                    status, data = 200, str(entry["raw"]).encode()
                else:
                    status, data = 200, json.dumps(completion_body(entry, body.get("model", server.model))).encode()
            finally:
                server._leave()
            self._send(status, data)

        def _answer_path(self, path: str, raw: bytes) -> None:
            body = json.loads(raw or b"{}")
            with server._lock:
                server.posts.append((path, body))
                entry = server._paths[path]
            entry = entry(body) if callable(entry) else entry
            if "completion" in entry:
                payload: Any = text_completion_body(entry, body.get("model", server.model))
            else:
                payload = entry.get("body", {})
            data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
            self._send(int(entry.get("status", 200)), data)

    return Handler
