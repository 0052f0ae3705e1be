"""The server under every loopback fake of an API: a threaded `http.server` on 127.0.0.1 (port
0: the OS picks a free one) serving from a thread of the test process, until stopped.

A fake subclasses `LoopbackServer` and answers each request in `respond(method, path, headers,
body)` with a status, headers and payload (content-length is added); what it records goes in
`requests` (`record` takes the lock). `with fake:` starts it and stops it. A client that hangs up
before its answer (its timeout) is nobody's error, and the server logs nothing.
"""

from __future__ import annotations

import threading
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

Answer = tuple[int, dict[str, str], bytes]
"""Status, headers, payload."""
Fake = TypeVar("Fake", bound="LoopbackServer")


class LoopbackServer:
    protocol_version = "HTTP/1.1"
    methods: tuple[str, ...] = ("POST",)
    """The request methods the fake answers; any other gets http.server's 501."""

    def __init__(self) -> None:
        self.requests: list[Any] = []
        self._lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", 0), _handler_class(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )

    @property
    def address(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def respond(self, method: str, path: str, headers: Message, body: bytes) -> Answer:
        raise NotImplementedError

    def record(self, request: Any) -> None:
        with self._lock:
            self.requests.append(request)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def __enter__(self: Fake) -> Fake:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up mid-request (the CLI killed at its timeout): nothing to do


def _handler_class(fake: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = fake.protocol_version

        def exchange(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            status, headers, payload = fake.respond(self.command, self.path, self.headers, body)
            try:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (its timeout): nothing left to answer

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output quiet

    for method in fake.methods:
        setattr(Handler, f"do_{method}", Handler.exchange)
    return Handler
