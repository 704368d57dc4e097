"""--toleration as the API server validates a pod's tolerations (gpuctl.validation): every form it
accepts gets through to the pods, with the operator it implies."""

from __future__ import annotations

import pytest

from gpuctl.core.verify import parse_toleration
from gpuctl.errors import ConfigError


@pytest.mark.parametrize(
    ("text", "as_dict"),
    [
        ("dedicated", {"key": "dedicated", "operator": "Exists"}),
        ("dedicated=", {"key": "dedicated", "operator": "Equal", "value": ""}),
        (
            "example.com/pool=gpu_a-1.x:NoExecute",
            {"key": "example.com/pool", "operator": "Equal", "value": "gpu_a-1.x", "effect": "NoExecute"},
        ),
        # no key: Exists, every taint of that effect, as the API server allows
        (":PreferNoSchedule", {"key": "", "operator": "Exists", "effect": "PreferNoSchedule"}),
        ("k:", {"key": "k", "operator": "Exists"}),
    ],
)
def test_every_form_the_api_server_takes_is_taken(text: str, as_dict: dict[str, str]) -> None:
    assert parse_toleration(text).as_dict() == as_dict


@pytest.mark.parametrize("text", ["=v", "a b", "k=v w", "k=v:Never", "k=" + "v" * 64, "-k"])
def test_what_the_api_server_refuses_is_one_config_error_naming_the_flag(text: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_toleration(text)
    assert refused.value.message.startswith(f"--toleration {text!r}: ")
