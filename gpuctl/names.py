"""Kubernetes naming rules, checked before any request so a bad flag is a one-line error (exit 2)
instead of an API server 422 half-way through a run. Standard library only."""

from __future__ import annotations

import re

from gpuctl.errors import ConfigError

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_NAME_RE = re.compile(rf"^{_NAME}$")
_DNS_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
MAX_NAME = 63
MAX_PREFIX = 253


def is_dns_label(name: str) -> bool:
    """RFC 1123 label: namespaces, RuntimeClasses, Secrets referenced by name, ..."""
    return bool(DNS_LABEL.match(name))


def check_dns_label(flag: str, value: str | None, example: str) -> None:
    """Raise ConfigError naming `flag` when `value` (if given) is not a DNS label."""
    if value is not None and not is_dns_label(value):
        raise ConfigError(
            f"{flag} {value!r}: not a valid Kubernetes name",
            hint=f"use lower-case a-z, 0-9 and '-' (at most 63), e.g. {flag} {example}",
        )


def qualified_name_problem(key: str) -> str:
    """Why `key` is not a valid label/taint key (empty string when it is)."""
    prefix, _, name = key.rpartition("/")
    if "/" in key and not prefix:
        return "the prefix before '/' is empty"
    if prefix and (len(prefix) > MAX_PREFIX or not _DNS_SUBDOMAIN_RE.match(prefix)):
        return f"prefix {prefix!r} must be a lower-case DNS subdomain"
    if not name or len(name) > MAX_NAME or not _NAME_RE.match(name):
        return (
            "name part must be 1-63 characters: letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit"
        )
    return ""


def value_problem(value: str) -> str:
    """Why `value` is not a valid label/taint value (empty string when it is)."""
    if value and (len(value) > MAX_NAME or not _NAME_RE.match(value)):
        return (
            "must be at most 63 characters: letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit"
        )
    return ""
