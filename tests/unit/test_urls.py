"""redact_url: the password of every URL in a text, or a token in the user's place, shown as
`xxxxx` (Go's URL.Redacted()); split_credentials: the URL to send and the basic auth to send."""

from __future__ import annotations

import pytest

from gpuctl.urls import Credentials, redact_url, split_credentials


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("https://alice:s3cret@gw:9091/x", "https://alice:xxxxx@gw:9091/x"),
        ("http://TOKEN@gw", "http://xxxxx@gw"),
        ("http://alice:@gw", "http://alice:xxxxx@gw"),
        # an `@` in the password: the authority ends at its last `@`, as urlsplit reads it
        ("http://alice:p@ss@gw/metrics", "http://alice:xxxxx@gw/metrics"),
        (
            "push to http://a:b@one and https://c:d@two failed",
            "push to http://a:xxxxx@one and https://c:xxxxx@two failed",
        ),
        ("http://gw:9091/path@x", "http://gw:9091/path@x"),  # an @ in the path is no userinfo
        ("https://gw:9091", "https://gw:9091"),
        ("no url at all: user@host", "no url at all: user@host"),
    ],
)
def test_redact_url(text: str, shown: str) -> None:
    assert redact_url(text) == shown


def test_split_credentials() -> None:
    assert split_credentials("https://alice:s%40cret@gw:9091/p") == (
        "https://gw:9091/p",
        Credentials("alice", "s@cret"),
    )
    assert split_credentials("http://TOKEN@gw") == ("http://gw", Credentials("TOKEN", ""))
    assert split_credentials("http://gw:9091") == ("http://gw:9091", None)
