"""429 Too Many Requests and 503 Service Unavailable: the API server (its priority and fairness, or
a proxy in front of it) asks the client to come back later, usually saying when (Retry-After).
client-go retries them; gpuctl does too, at most MAX_ATTEMPTS times and MAX_WAIT_S of waiting in
all, never past the request's deadline (a Retry-After of an hour is not waited for), and then
raises Throttled, which client.api_call names (exit 3).

urllib3 would honour Retry-After itself, sleeping as long as the header says (up to 6 hours):
TRANSPORT_RETRIES turns that off and keeps its one retry of a failed connection.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable
from typing import Any

from kubernetes.client.exceptions import ApiException
from urllib3.util.retry import Retry

from gpuctl.kube.deadlines import remaining_s

RETRY_STATUSES = frozenset({429, 503})
MAX_ATTEMPTS = 4
MAX_WAIT_S = 30.0
DEFAULT_WAIT_S = 1.0  # a 429 or 503 without a (readable) Retry-After
# One retry of a connection that failed (a keep-alive connection the server had closed); none on
# an HTTP status.
TRANSPORT_RETRIES = Retry(total=1, respect_retry_after_header=False)


class Throttled(ApiException):
    """A 429 or 503 still there after the retries gpuctl allows itself."""

    def __init__(self, response: Any, attempts: int, waited_s: float, asked_s: float) -> None:
        super().__init__(http_resp=response)
        self.attempts = attempts
        self.waited_s = waited_s
        self.asked_s = asked_s  # what the last Retry-After asked for


def send_with_retries(send: Callable[[], Any]) -> Any:
    """`send()`'s response, sent again while it is a 429 or 503 and the bounds allow."""
    attempts, waited = 1, 0.0
    response = send()
    while response.status in RETRY_STATUSES:
        response.read()  # read in full: the connection goes back to the pool, the body to the error
        wait = retry_after_s(response.headers.get("Retry-After"))
        if attempts >= MAX_ATTEMPTS or waited + wait > MAX_WAIT_S or wait >= remaining_s():
            raise Throttled(response, attempts, waited, wait)
        time.sleep(wait)
        waited += wait
        attempts += 1
        response = send()
    return response


def retry_after_s(value: str | None) -> float:
    """Seconds a Retry-After header asks to wait (delay-seconds or an HTTP date)."""
    text = (value or "").strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return DEFAULT_WAIT_S
    return max(0.0, when.timestamp() - time.time())
