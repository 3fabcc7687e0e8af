"""A real HTTP receiver on the loopback for the alert transports' tests: records every request
(path, headers, body) and answers each path the statuses it is told to, in order (then 204)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from django.test import override_settings

# 127.0.0.2 and plain http are allowed for these tests only (WEBHOOK_ALLOWED_NETWORKS,
# WEBHOOK_ALLOW_HTTP): every loopback address is refused otherwise (test_webhook_delivery.py).
HOST = "127.0.0.2"
ALLOWING = {"WEBHOOK_ALLOW_HTTP": True, "WEBHOOK_ALLOWED_NETWORKS": [f"{HOST}/32"]}
WORKER_ENV = {"WEBHOOK_ALLOW_HTTP": "1", "WEBHOOK_ALLOWED_NETWORKS": f"{HOST}/32"}


class Receiver:
    def __init__(self) -> None:
        self.received: list[tuple[str, dict[str, str], bytes]] = []
        self.answers: dict[str, list[tuple[int, dict[str, str]]]] = {}
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.received.append((self.path, dict(self.headers), body))
                queued = receiver.answers.get(self.path) or [(204, {})]
                status, headers = queued.pop(0)
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer((HOST, 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str = "/hook") -> str:
        return f"http://{HOST}:{self.server.server_address[1]}{path}"

    def answer(self, path: str, *statuses: int, **headers: str) -> None:
        self.answers.setdefault(path, []).extend((s, dict(headers)) for s in statuses)

    def bodies(self, path: str | None = None) -> list[bytes]:
        return [b for p, _h, b in self.received if path is None or p == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def receiving() -> Iterator[Receiver]:
    receiver = Receiver()
    try:
        with override_settings(**ALLOWING):
            yield receiver
    finally:
        receiver.close()
