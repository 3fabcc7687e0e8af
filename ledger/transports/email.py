"""E-mail (docs/domain.md §19.3): to the channel's address, or, when it has none, to every owner
of the team that has one (read at delivery, so a new owner is told). Django's e-mail framework:
the console by default, SMTP by configuration (EMAIL_TIMEOUT bounds each operation). The
delivery id is the Message-ID and X-Desk-Delivery: a repeat is recognisable. The subject is one
line: a campaign title cannot break the header or add one."""

from __future__ import annotations

import smtplib

from django.core.mail import EmailMessage

from ledger.domain.chat_text import one_line
from ledger.domain.notices import Notice
from ledger.models import AlertChannel
from ledger.selectors.alerts import owner_emails
from ledger.transports import Refused


def recipients(channel: AlertChannel) -> list[str]:
    return [channel.target] if channel.target else owner_emails(channel.team_id)


def send(channel: AlertChannel, notice: Notice) -> int | None:
    to = recipients(channel)
    if not to:
        raise Refused("no owner of the team has an e-mail address")
    message = EmailMessage(
        subject=one_line(f"[Campaign Desk] {notice.title}"),
        body=f"{notice.message}\n\nTeam {notice.team_name}, campaign #{notice.campaign_id}. "
        f"Raised {notice.raised}.",
        to=to,
        headers={
            "Message-ID": f"<{notice.delivery_id}@campaign-desk>",
            "X-Desk-Delivery": notice.delivery_id,
        },
    )
    try:
        message.send()
    except smtplib.SMTPRecipientsRefused as exc:
        raise Refused(f"every recipient was refused: {exc}") from exc
    return None
