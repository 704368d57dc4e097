"""What preflight says about one aspect of a host: a finding (pass, warn or fail, with a hint)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Status = Literal["pass", "warn", "fail"]


@dataclass(frozen=True)
class Finding:
    id: str
    status: Status
    message: str
    hint: str = ""
