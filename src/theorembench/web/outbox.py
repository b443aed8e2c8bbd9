"""Every mail goes to the outbox table first; with an SMTP URL it is also sent (smtplib), its result recorded.

``smtp_url``: ``smtp://[USER[:PASSWORD]@]HOST[:PORT]`` (plain, port 25), ``smtp+starttls://…``
(STARTTLS, port 587) or ``smtps://…`` (TLS, port 465); ``?from=ADDRESS`` sets the sender.
"""

from __future__ import annotations

import smtplib
import ssl
import time
from email.message import EmailMessage
from urllib.parse import parse_qs, unquote, urlsplit

from theorembench.store.accounts import AccountRepo

DEFAULT_FROM = "improofbench@localhost"
_PORTS = {"smtp": 25, "smtp+starttls": 587, "smtps": 465}


def smtp_problem(smtp_url: str | None) -> str | None:
    """Why an SMTP URL cannot be used (one line), or None."""
    if not smtp_url:
        return None
    parts = urlsplit(smtp_url)
    if parts.scheme not in _PORTS:
        return f"the SMTP URL must start with {', '.join(s + '://' for s in _PORTS)}"
    if not parts.hostname:
        return "the SMTP URL names no host"
    return None


def _deliver(smtp_url: str, message: EmailMessage) -> None:
    parts = urlsplit(smtp_url)
    port = parts.port or _PORTS[parts.scheme]
    if parts.scheme == "smtps":
        client: smtplib.SMTP = smtplib.SMTP_SSL(parts.hostname, port, timeout=20, context=ssl.create_default_context())
    else:
        client = smtplib.SMTP(parts.hostname, port, timeout=20)
    with client:
        if parts.scheme == "smtp+starttls":
            client.starttls(context=ssl.create_default_context())
        if parts.username:
            client.login(unquote(parts.username), unquote(parts.password or ""))
        client.send_message(message)


def send_mail(repo: AccountRepo, to: str, subject: str, body: str, smtp_url: str | None = None) -> int:
    """Put a mail in the outbox and, when SMTP is configured, send it; returns the outbox id. Never raises on SMTP."""
    mail_id = repo.add_mail(to, subject, body)
    if smtp_url:
        query = parse_qs(urlsplit(smtp_url).query)
        message = EmailMessage()
        message["From"] = query.get("from", [DEFAULT_FROM])[0]
        message["To"] = to
        message["Subject"] = subject
        message.set_content(body)
        try:
            _deliver(smtp_url, message)
        except (OSError, smtplib.SMTPException) as exc:
            repo.mark_mail(mail_id, sent_at=None, error=f"{type(exc).__name__}: {exc}"[:500])
        else:
            repo.mark_mail(mail_id, sent_at=time.time(), error=None)
    return mail_id
