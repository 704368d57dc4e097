"""Whether a pasted text shows its commands ran inside a container, and what that changes.

nvidia-smi's "couldn't communicate with the NVIDIA driver" on a host means the kernel driver is not
loaded; printed inside a container, far more often the host's driver is fine and the runtime gave
the container none of it (no nvidia runtime, no `--gpus`, no runtimeClassName, no CDI device). The
line alone cannot tell the two apart; the text around it can: a container's shell prompt (Docker
names a container by 12 hex digits of its id), the `docker run` or `kubectl exec` that started it.
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpuctl.diagnose import Diagnosis, signature_of

_IN_CONTAINER = re.compile(
    r"(?:\[?\w+@[0-9a-f]{12}[:\s]"  # root@24c96d985c30:/# , [root@24c96d985c30 /]#
    r"|\b(?:docker|podman|nerdctl|ctr|crictl)(?:\.exe)? (?:container )?(?:run|exec)\b"
    r"|\bkubectl (?:exec|run|logs)\b|Defaulted container )",
)
# What a driver-not-loaded reading becomes in a container.
_IN_CONTAINER_READING = {
    "smi.driver-not-loaded": "smi.driver-not-injected",
    "plugin.driver-not-loaded": "smi.driver-not-injected",
}


def inside_container(text: str) -> bool:
    """Whether `text` shows its commands ran in a container (a prompt, a `docker run`)."""
    return _IN_CONTAINER.search(text) is not None


def read_in_container(found: list[Diagnosis], text: str) -> list[Diagnosis]:
    """`found` with the host readings that mean "no GPU given" in a container replaced, where
    `text` shows a container."""
    if not any(d.signature_id in _IN_CONTAINER_READING for d in found) or not inside_container(text):
        return found
    return [_reread(diagnosis) for diagnosis in found]


def _reread(diagnosis: Diagnosis) -> Diagnosis:
    target = _IN_CONTAINER_READING.get(diagnosis.signature_id)
    signature = signature_of(target) if target else None
    if signature is None:
        return diagnosis
    return replace(
        diagnosis,
        signature_id=signature.id,
        cause=signature.cause,
        hint=signature.hint.replace("{node}", "NODE"),
        category=signature.category,
    )
