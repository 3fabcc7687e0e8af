"""An alert channel's URL cannot be turned inward (docs/domain.md §19.4): a loopback listener
stands in for every refused target and must receive nothing, neither from the request that
adds the channel nor from the delivery (webhook, Slack, Teams alike); redirects are not
followed; the host is resolved once; one deadline bounds a delivery against a receiver that
trickles its answer."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from django.test import override_settings

from campaigns.models import Team
from campaigns.tests.factories import as_user as client_for
from campaigns.tests.factories import celery_eager, committed_campaign, make_user
from ledger import transports
from ledger.models import Alert, AlertChannel, AlertDelivery
from ledger.selectors.alert_deliveries import notice_for
from ledger.tasks import deliver_alerts
from ledger.transports import webhook


class Trap:
    """A dual-stack listener on every loopback address (IPv4 and IPv6) of one port: it records
    every connection it is offered. Any refused URL points at it."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("::", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections: list[Any] = []
        self.running = True
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while self.running:
            try:
                conn, peer = self.sock.accept()
            except OSError:
                continue
            self.connections.append(peer)
            conn.close()

    def close(self) -> None:
        self.running = False
        self.thread.join(2)
        self.sock.close()


@pytest.fixture
def trap() -> Iterator[Trap]:
    listener = Trap()
    try:
        yield listener
    finally:
        listener.close()


def refused_urls(port: int) -> list[str]:
    """Every spelling of "this machine" and of the internal networks the finding listed."""
    return [
        f"http://127.0.0.1:{port}/",
        f"http://localhost:{port}/",
        f"http://[::1]:{port}/",
        f"http://0.0.0.0:{port}/",
        f"http://[::ffff:127.0.0.1]:{port}/",
        f"http://[::ffff:7f00:1]:{port}/",
        f"http://2130706433:{port}/",  # 127.0.0.1 as one number
        f"http://0x7f.1:{port}/",
        f"http://127.1:{port}/",
        f"http://[::]:{port}/",
        f"https://127.0.0.1:{port}/",
        f"ftp://127.0.0.1:{port}/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:169.254.169.254]/",
        "http://10.0.0.1/",
        "http://192.168.0.1/",
        "http://metadata.google.internal/computeMetadata/v1/",
    ]


class Receiver(BaseHTTPRequestHandler):
    """An allowed receiver on 127.0.0.2 (WEBHOOK_ALLOWED_NETWORKS in these tests)."""

    received: list[dict[str, str]] = []
    answer: tuple[int, dict[str, str]] = (204, {})
    trickle: float = 0.0
    fail_first = 0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        type(self).received.append(dict(self.headers))
        if type(self).fail_first > 0:
            type(self).fail_first -= 1
            self.send_response(503)
            self.end_headers()
            return
        if type(self).trickle:
            for byte in b"HTTP/1.1 204 No Content\r\n\r\n":
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(type(self).trickle)
            return
        status, headers = type(self).answer
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[str]:
    Receiver.received, Receiver.answer, Receiver.trickle = [], (204, {}), 0.0
    Receiver.fail_first = 0
    server = HTTPServer(("127.0.0.2", 0), Receiver)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.2:{server.server_address[1]}/hooks/desk"
    finally:
        server.shutdown()
        server.server_close()


LOOPBACK_RECEIVER = override_settings(
    WEBHOOK_ALLOW_HTTP=True, WEBHOOK_ALLOWED_NETWORKS=["127.0.0.2/32"]
)


SECRET = "whsec_" + "c2VjcmV0LWZvci10aGUtdGVzdHM="


def _delivery(
    team: Team, url: str, *, kind: str = "webhook", secret: str = SECRET
) -> AlertDelivery:
    """A channel stored as it is (no check: as before the check existed) and one alert's row."""
    channel = AlertChannel.objects.create(team=team, kind=kind, target=url, secret=secret)
    alert = Alert.objects.create(
        campaign=committed_campaign(team), kind="budget", key="budget:80", message="m"
    )
    return AlertDelivery.objects.create(alert=alert, channel=channel, team=team, kind=kind)


@pytest.mark.django_db
@LOOPBACK_RECEIVER
def test_adding_a_channel_refuses_every_inward_url_and_nothing_is_contacted(trap: Trap) -> None:
    team = Team.objects.create(name="nlp")
    api = client_for(make_user("olga", team=team, role="owner"))
    for kind in ("webhook", "slack", "teams"):
        for url in refused_urls(trap.port):
            answer = api.post(
                f"/api/v1/teams/{team.pk}/alert-channels/",
                {"kind": kind, "target": url},
                format="json",
            )
            assert answer.status_code == 400, (kind, url, answer.json())
            assert "target" in answer.json(), url
    assert trap.connections == []
    assert not AlertChannel.objects.filter(team=team).exists()


@pytest.mark.django_db
def test_http_needs_the_setting_and_a_planner_cannot_add_a_channel(receiver: str) -> None:
    team = Team.objects.create(name="nlp")
    api = client_for(make_user("olga", team=team, role="owner"))
    planner = client_for(make_user("pia", team=team, role="planner"))
    url = f"/api/v1/teams/{team.pk}/alert-channels/"
    body = {"kind": "webhook", "target": receiver, "secret": SECRET}
    with override_settings(WEBHOOK_ALLOWED_NETWORKS=["127.0.0.2/32"]):
        plain = api.post(url, body, format="json")
    assert plain.status_code == 400 and "https" in str(plain.json()["target"])
    with LOOPBACK_RECEIVER:
        assert planner.post(url, body, format="json").status_code == 403
        short = api.post(url, {**body, "secret": "short"}, format="json")
        assert short.status_code == 400 and "secret" in short.json()
        ok = api.post(url, body, format="json")
    assert ok.status_code == 201, ok.json()
    assert ok.json()["secret"] is None  # given, so not shown back


@pytest.mark.django_db
@LOOPBACK_RECEIVER
def test_delivery_refuses_every_inward_url_stored_before_the_check(trap: Trap) -> None:
    """URLs stored before the check existed (or a name that resolves inward later) are refused
    again at delivery, recorded, and not retried."""
    delivery = _delivery(Team.objects.create(name="nlp"), "https://hooks.example.org/")
    for url in refused_urls(trap.port):
        AlertChannel.objects.filter(pk=delivery.channel_id).update(target=url)
        AlertDelivery.objects.filter(pk=delivery.pk).update(state="pending")
        with celery_eager():
            assert deliver_alerts.apply().get() == "refused:1", url
        assert AlertDelivery.objects.get(pk=delivery.pk).last_error.startswith("refused:"), url
    assert trap.connections == []


@pytest.mark.django_db
@LOOPBACK_RECEIVER
def test_a_webhook_without_a_secret_is_not_posted(receiver: str) -> None:
    _delivery(Team.objects.create(name="nlp"), receiver, secret="")
    with celery_eager():
        assert deliver_alerts.apply().get() == "refused:1"
    assert Receiver.received == []


@pytest.mark.django_db
@LOOPBACK_RECEIVER
def test_a_redirect_is_not_followed_nor_retried(receiver: str, trap: Trap) -> None:
    Receiver.answer = (302, {"Location": f"http://127.0.0.1:{trap.port}/inside"})
    delivery = _delivery(Team.objects.create(name="nlp"), receiver)
    with pytest.raises(transports.Refused, match="302"):
        webhook.send(delivery.channel, notice_for(delivery))  # type: ignore[arg-type]
    assert len(Receiver.received) == 1
    assert trap.connections == []


@pytest.mark.django_db
@LOOPBACK_RECEIVER
def test_the_checked_address_is_the_one_connected_to(
    receiver: str, trap: Trap, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebinding DNS answers an allowed address to the check and loopback afterwards: the
    worker resolves once and connects to what it checked, sending the name as Host."""
    port = int(receiver.rsplit(":", 1)[1].split("/")[0])
    answers = iter(["127.0.0.2", "127.0.0.1"])
    real = socket.getaddrinfo

    def rebinding(host: str, *args: Any, **kwargs: Any) -> Any:
        if host == "hooks.example.org":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    delivery = _delivery(Team.objects.create(name="nlp"), f"http://hooks.example.org:{port}/d")
    assert webhook.send(delivery.channel, notice_for(delivery)) == 204  # type: ignore[arg-type]
    assert Receiver.received[0]["Host"] == f"hooks.example.org:{port}"
    assert trap.connections == []


@pytest.mark.django_db
@LOOPBACK_RECEIVER
def test_one_deadline_bounds_a_trickling_receiver(receiver: str) -> None:
    """The finding: a byte every 5 s held a delivery 60 s with a 10 s per-read timeout. Here a
    byte every 0.5 s (27 bytes: 13.5 s in all) is cut at the 2 s deadline, and retried later."""
    Receiver.trickle = 0.5
    delivery = _delivery(Team.objects.create(name="nlp"), receiver)
    started = time.monotonic()
    with (
        override_settings(ALERT_WEBHOOK_TIMEOUT=2),
        pytest.raises(transports.Failed, match="deadline"),
    ):
        webhook.send(delivery.channel, notice_for(delivery))  # type: ignore[arg-type]
    assert time.monotonic() - started < 3.0
