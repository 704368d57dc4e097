"""What the API server, the container runtime and helm accept, checked before gpuctl prints,
writes or applies anything: cron schedules (a CronJob's), label keys and values, DNS-1123 names,
image references, chart references and versions. Each `*_problem` function says why a value is
refused ("" when it is fine); `check` turns that into the one-line error naming the flag.
Standard library only, so every layer may use it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from gpuctl.errors import ConfigError
from gpuctl.names import is_dns_label, qualified_name_problem, value_problem

MAX_SUBDOMAIN = 253

# --- cron, as Kubernetes' CronJob controller parses it (robfig/cron v3's standard parser) ---

# Kubernetes refuses a time zone in the schedule: it belongs in spec.timeZone.
_TIME_ZONE_PREFIXES = ("TZ=", "CRON_TZ=")
_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_GO_DURATION = re.compile(r"^(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+$")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


@dataclass(frozen=True)
class _Field:
    """One of the five fields: its name, bounds and the names it also takes (months, weekdays)."""

    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()  # the names of low, low + 1, ...

    def number(self, text: str) -> int | None:
        if text.isdigit():
            return int(text)
        lowered = text.lower()
        return self.low + self.names.index(lowered) if lowered in self.names else None

    def bounds(self) -> str:
        return f"{self.low}-{self.high}" + (f" or {self.names[0]}-{self.names[-1]}" if self.names else "")


# robfig/cron's bounds: the day of the week is 0-6 (7 is refused), Sunday 0.
_FIELDS = (
    _Field("minute", 0, 59),
    _Field("hour", 0, 23),
    _Field("day of month", 1, 31),
    _Field("month", 1, 12, _MONTHS),
    _Field("day of week", 0, 6, _WEEKDAYS),
)


def cron_problem(schedule: str) -> str:
    """Why a CronJob's `schedule` would be refused: five fields (minute hour day-of-month month
    day-of-week), each `*`, `?`, a number or name, a range `a-b`, a step `/n`, or a comma list of
    them; or one of @yearly, @monthly, @weekly, @daily, @hourly, @every DURATION."""
    text = schedule.strip()
    if text.startswith(_TIME_ZONE_PREFIXES):
        return "a time zone cannot be part of the schedule (Kubernetes takes it in spec.timeZone)"
    if text.startswith("@"):
        return _descriptor_problem(text)
    fields = text.split()
    if len(fields) != len(_FIELDS):
        return "not a five-field cron schedule (minute hour day-of-month month day-of-week)"
    for spec, cron_field in zip(fields, _FIELDS, strict=True):
        for part in spec.split(","):
            problem = _part_problem(part, cron_field)
            if problem:
                return f"{cron_field.name} {problem}"
    return ""


def _descriptor_problem(text: str) -> str:
    # Case-sensitive, as the controller's parser is.
    if text in _DESCRIPTORS or (text.startswith("@every ") and _GO_DURATION.match(text[len("@every ") :])):
        return ""
    macro = text.split(maxsplit=1)[0]
    return f"unknown {macro!r}: use five fields or one of {', '.join(_DESCRIPTORS)}, @every 1h"


def _part_problem(part: str, cron_field: _Field) -> str:
    """One comma-separated part: `*`/`?`, `a`, `a-b`, each optionally `/step`."""
    span, slash, step = part.partition("/")
    if slash and not (step.isdigit() and int(step) > 0):
        return f"{part!r}: the step after '/' must be a positive number"
    if span in ("*", "?"):
        return ""
    low_text, dash, high_text = span.partition("-")
    texts = (low_text, high_text) if dash else (low_text,)
    numbers = [cron_field.number(text) for text in texts]
    for text, number in zip(texts, numbers, strict=True):
        if number is None or not cron_field.low <= number <= cron_field.high:
            return f"{text!r} is not {cron_field.bounds()}" + (f" (in {part!r})" if text != part else "")
    if numbers[0] > numbers[-1]:  # type: ignore[operator] # both checked above
        return f"{span!r}: the range starts after it ends"
    return ""


# --- names and labels ---

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def dns_label_problem(name: str) -> str:
    """A namespace, RuntimeClass or Secret name: RFC 1123 label."""
    if is_dns_label(name):
        return ""
    return "not a valid Kubernetes name (lower-case a-z, 0-9 and '-', at most 63)"


def dns_subdomain_problem(name: str) -> str:
    """A ServiceAccount's or ConfigMap's name: RFC 1123 subdomain."""
    if len(name) <= MAX_SUBDOMAIN and _DNS_SUBDOMAIN.match(name):
        return ""
    return "not a valid Kubernetes name (lower-case a-z, 0-9, '-' and '.', at most 253)"


def label_key_problem(key: str) -> str:
    problem = qualified_name_problem(key)
    return f"label key {key!r}: {problem}" if problem else ""


def label_value_problem(value: str) -> str:
    problem = value_problem(value)
    return f"label value {value!r}: {problem}" if problem else ""


# A toleration's effect: one of a taint's, or "" (all of them), as the API server validates it.
TOLERATION_EFFECTS = ("", "NoSchedule", "PreferNoSchedule", "NoExecute")


def toleration_problem(key: str, operator: str, value: str, effect: str) -> str:
    """Why the API server would refuse this toleration of a pod (its validateTolerations), "" when
    it would not: an optional qualified-name key; Exists (no value) or Equal (a label value); an
    empty key only with Exists (it then tolerates every taint); an effect of a taint or none."""
    if key and (problem := qualified_name_problem(key)):
        return f"key {key!r}: {problem}"
    if problem := _operator_problem(key, operator, value):
        return problem
    if effect not in TOLERATION_EFFECTS:
        return f"effect {effect!r}: must be one of {', '.join(TOLERATION_EFFECTS[1:])} (or none: all)"
    return ""


def _operator_problem(key: str, operator: str, value: str) -> str:
    if operator not in ("Exists", "Equal"):
        return f"operator {operator!r}: must be Exists or Equal"
    if not key and operator != "Exists":
        return "a toleration without a key must use operator Exists (it tolerates every taint)"
    if operator == "Exists" and value:
        return f"value {value!r}: operator Exists takes no value"
    problem = value_problem(value)
    return f"value {value!r}: {problem}" if problem else ""


def subject_name_problem(name: str) -> str:
    """A User or Group of an RBAC binding: any non-empty name, shown as it is."""
    if not name or not name.isprintable() or name != name.strip():
        return "a user or group name must be non-empty, printable, without surrounding spaces"
    return ""


# --- images (the distribution reference grammar the container runtimes parse) ---

_ALNUM = r"[a-z0-9]+"
_PATH_COMPONENT = rf"{_ALNUM}(?:(?:[._]|__|-+){_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?"
_IMAGE_NAME = rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_TAG = r"\w[\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_IMAGE = re.compile(rf"^(?P<name>{_IMAGE_NAME})(?::{_TAG})?(?:@{_DIGEST})?$", re.ASCII)
MAX_IMAGE_NAME = 255


def image_problem(reference: str) -> str:
    """Why the container runtime would refuse `reference` (InvalidImageName), "" when it would not."""
    if not reference.strip():
        return "empty"
    match = _IMAGE.match(reference)
    if match and len(match["name"]) > MAX_IMAGE_NAME:
        return f"the repository name is longer than {MAX_IMAGE_NAME} characters"
    if match:
        return ""
    if reference != reference.lower() and _IMAGE.match(reference.lower()):
        return "not an image reference: the repository must be lower-case"
    return "not an image reference ([REGISTRY/]REPOSITORY[:TAG][@sha256:DIGEST])"


# --- helm ---


def chart_problem(chart: str) -> str:
    if not chart.strip():
        return "empty"
    if not chart.isprintable() or any(character.isspace() for character in chart):
        return "a chart is REPO/NAME, oci://REFERENCE or a folder, without spaces"
    return ""


def chart_version_problem(version: str) -> str:
    """An empty version would drop helm's --version: helm would take whatever is newest."""
    if not version.strip():
        return "empty: helm would install the newest chart instead of a pinned version"
    if not version.isprintable() or any(character.isspace() for character in version):
        return "a version (e.g. v25.3.0) has no spaces"
    return ""


def check(flag: str, value: str, problem_of: Callable[[str], str], example: str) -> None:
    """ConfigError naming `flag` and `value` when `problem_of(value)` finds a problem."""
    problem = problem_of(value)
    if problem:
        raise ConfigError(f"{flag} {value!r}: {problem}", hint=f"e.g. {flag} {example}")
