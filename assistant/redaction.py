"""Secrets never leave the process: API keys, bearer and basic credentials, URL passwords.

Every message that may carry a server's words or a configured URL (errors, logs, the UI, the
export, feedback, evaluation output) goes through `redact`; the HTTP client libraries' loggers
get a filter that does the same to their records.
"""

from __future__ import annotations

import logging
import re

from assistant.text import substituted, substitutions

_USERINFO = re.compile(r"//[^/@\s]*@")
_SECRET_TOKENS = substitutions(
    (
        (r"\bsk-[A-Za-z0-9_\-]{6,}", "sk-***"),
        (r"(?i)\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=\-]+", r"\1 ***"),
        (r"(?i)\b(api[_-]?key|access[_-]?token|password)=([^&\s\"']+)", r"\1=***"),
    )
)
PLACEHOLDER_KEY = "not-needed"  # what a local server gets when no key is configured


def strip_userinfo(url: str) -> str:
    """`http://user:pass@host/v1` -> `http://host/v1`."""
    return _USERINFO.sub("//", url)


def redact(text: str, *secrets: str | None) -> str:
    """`text` without the given secrets, `sk-...` keys, bearer/basic credentials or URL passwords."""
    text = strip_userinfo(text)
    for secret in secrets:
        if secret and len(secret) >= 4 and secret != PLACEHOLDER_KEY:
            text = text.replace(secret, "***")
    return substituted(text, _SECRET_TOKENS)


class SecretFilter(logging.Filter):
    """Scrubs secrets from log records (httpx logs each request's URL at INFO, credentials included)."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record is the logging module's to report, not ours
            return True
        clean = redact(message, *tuple(self.secrets))  # a snapshot: another thread may be adding one
        if clean != message:
            record.msg, record.args = clean, None
        return True


_FILTER = SecretFilter()
CLIENT_LOGGERS = ("httpx", "httpx2", "httpcore", "httpcore2", "openai", "openai._base_client", "langchain_openai")


def guard_client_logs(secret: str | None) -> None:
    """Make the client libraries' loggers drop `secret` (and any credential form) from their messages."""
    if secret:
        _FILTER.secrets.add(secret)
    for name in CLIENT_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
