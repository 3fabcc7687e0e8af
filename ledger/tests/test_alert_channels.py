"""Alerts to Slack and Teams webhooks (docs/domain.md §19.4): the documented payloads, posted by
a worker once the alert is stored, to a real HTTP server on the loopback."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from django.test import TestCase, override_settings
from django.urls import reverse

from campaigns import outbound
from campaigns.models import Team
from campaigns.tests.factories import celery_eager, committed_campaign, make_user
from ledger import alert_channels
from ledger.models import Alert, AlertChannel


class Receiver(BaseHTTPRequestHandler):
    got: list[tuple[str, dict[str, Any]]] = []
    status = 200

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Receiver.got.append((self.path, json.loads(body)))
        self.send_response(Receiver.status)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args: Any) -> None:
        pass


# Chat channels go through the one outbound sender: a loopback receiver must be allowed.
@override_settings(WEBHOOK_ALLOW_HTTP=True, WEBHOOK_ALLOWED_NETWORKS=["127.0.0.1/32"])
class AlertChannelTests(TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        cls.server = HTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.base = f"http://127.0.0.1:{cls.server.server_port}"

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.shutdown()
        cls.server.server_close()
        super().tearDownClass()

    @classmethod
    def setUpTestData(cls) -> None:
        cls.team = Team.objects.create(name="chat")
        cls.owner = make_user("olga", team=cls.team, role="owner")
        cls.campaign = committed_campaign(cls.team, title="LoRA vs full")

    def setUp(self) -> None:
        Receiver.got = []
        Receiver.status = 200

    def test_a_new_alert_goes_to_slack_and_teams_in_their_payloads(self) -> None:
        # Created directly: the service accepts https only, the test server is plain http.
        AlertChannel.objects.create(team=self.team, kind="slack", url=f"{self.base}/slack")
        AlertChannel.objects.create(team=self.team, kind="teams", url=f"{self.base}/teams")
        with celery_eager(), self.captureOnCommitCallbacks(execute=True):
            Alert.objects.create(
                campaign=self.campaign, kind="budget", key="80", message="80% of the budget"
            )
        got = dict(Receiver.got)
        self.assertEqual(set(got), {"/slack", "/teams"})
        slack = got["/slack"]
        self.assertEqual(slack["text"], "Budget: LoRA vs full: 80% of the budget")
        self.assertEqual([b["type"] for b in slack["blocks"]], ["header", "section", "context"])
        self.assertEqual(
            slack["blocks"][1]["text"], {"type": "mrkdwn", "text": "80% of the budget"}
        )
        teams = got["/teams"]
        self.assertEqual(teams["type"], "message")
        [attachment] = teams["attachments"]
        self.assertEqual(attachment["contentType"], "application/vnd.microsoft.card.adaptive")
        card = attachment["content"]
        self.assertEqual((card["type"], card["version"]), ("AdaptiveCard", "1.4"))
        self.assertEqual(card["body"][1]["text"], "80% of the budget")

    def test_a_refusing_channel_raises_and_redirects_are_not_followed(self) -> None:
        Receiver.status = 500
        with self.assertRaises(outbound.DeliveryFailed):
            alert_channels.post_json(f"{self.base}/x", {"text": "t"})
        Receiver.status = 302
        with self.assertRaises(outbound.DeliveryFailed):
            alert_channels.post_json(f"{self.base}/x", {"text": "t"})

    def test_owners_add_a_channel_in_the_admin_and_its_url_is_not_shown_back(self) -> None:
        self.client.force_login(self.owner)
        url = reverse("admin:campaigns_team_change", args=[self.team.pk])
        page = self.client.get(url)
        self.assertContains(page, "alert_channels-TOTAL_FORMS")
        form = page.context["adminform"].form
        data = {k: v for k, v in form.initial.items() if v is not None and k != "webhook_secret"}
        for formset in page.context["inline_admin_formsets"]:
            fs = formset.formset
            data.update({f"{fs.prefix}-{k}": v for k, v in fs.management_form.initial.items()})
            for i, each in enumerate(fs.forms):
                for name, field in each.fields.items():
                    value = each.initial.get(name, field.initial)
                    if value is not None:
                        data[f"{fs.prefix}-{i}-{name}"] = value
        prefix = "alert_channels"
        data[f"{prefix}-TOTAL_FORMS"] = "1"
        data.update({f"{prefix}-0-kind": "slack", f"{prefix}-0-name": "#desk"})
        data[f"{prefix}-0-url"] = "http://hooks.example.org/plain"
        self.assertContains(self.client.post(url, data), "starts with https://")
        data[f"{prefix}-0-url"] = "https://hooks.slack.com/services/T/B/secret-part"
        answer = self.client.post(url, data)
        self.assertEqual(answer.status_code, 302, getattr(answer, "context", None) and
                         answer.context["errors"])  # fmt: skip
        [channel] = AlertChannel.objects.filter(team=self.team)
        self.assertEqual(channel.url, "https://hooks.slack.com/services/T/B/secret-part")
        self.assertNotContains(self.client.get(url), "secret-part")
