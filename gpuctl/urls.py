"""URLs as gpuctl shows them: never with the credentials they may carry.

A URL can hold a user and password (`https://user:password@pushgateway:9091`) or a token in the
user's place (`https://TOKEN@host`). Every message, log line, report, JSON document and metrics
label that shows a URL shows it through `redact_url`, which writes the userinfo as Go's
net/url `URL.Redacted()` does (what Prometheus, Helm and kubectl print): the password becomes
`xxxxx` and the user stays, so the reader still knows which account was used. A userinfo with no
password is replaced whole (`xxxxx@`): there it is usually a token, not a user name.
"""

from __future__ import annotations

import re
from typing import NamedTuple
from urllib.parse import unquote, urlsplit, urlunsplit

REDACTED = "xxxxx"
# A scheme, `://`, then an authority up to its last `@` (as urlsplit reads one: it ends at the
# first `/`, `?` or `#`; whitespace ends a URL quoted in free text).
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#\s]*)@")


def redact_url(text: str) -> str:
    """`text` (a URL, or a message quoting URLs) with each URL's password, or its userinfo when
    it has no password, replaced by `xxxxx`."""
    return _USERINFO.sub(_redacted, text)


def _redacted(found: re.Match[str]) -> str:
    user, has_password, _password = found["userinfo"].partition(":")
    shown = f"{user}:{REDACTED}" if has_password else REDACTED
    return f"{found['scheme']}{shown}@"


class Credentials(NamedTuple):
    username: str
    password: str


def split_credentials(url: str) -> tuple[str, Credentials | None]:
    """`url` without its userinfo, and the user and password it held, percent-decoded (a user
    alone has an empty password, as curl and Go's HTTP client send it); None when it held none."""
    parts = urlsplit(url)
    if parts.username is None:
        return url, None
    host = parts.netloc.rpartition("@")[2]
    bare = urlunsplit(parts._replace(netloc=host))
    return bare, Credentials(unquote(parts.username), unquote(parts.password or ""))
