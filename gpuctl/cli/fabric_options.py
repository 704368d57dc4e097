"""`--fabric-resource NAME=COUNT`: the network resources each --level fabric worker pod requests."""

from __future__ import annotations

import re

from gpuctl.errors import ConfigError

# An extended resource name: a DNS subdomain prefix and a name (rdma/ib, vpc.amazonaws.com/efa,
# nvidia.com/hostdev), as Kubernetes' resource names with a domain.
_RESOURCE = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
EXAMPLE = "--fabric-resource rdma/ib=1 (or vpc.amazonaws.com/efa=4)"


def fabric_resources(values: list[str]) -> tuple[tuple[str, int], ...]:
    """Each NAME=COUNT as (name, count); ConfigError naming the value that is not one."""
    resources: dict[str, int] = {}
    for value in values:
        name, _, count = value.partition("=")
        if not _RESOURCE.match(name) or not count.isdigit() or int(count) < 1:
            raise ConfigError(
                f"--fabric-resource {value!r}: must be NAME=COUNT, NAME a resource with a domain and "
                "COUNT a whole number >= 1",
                hint=f"e.g. {EXAMPLE}; `kubectl describe node NODE` lists what a node offers",
            )
        if name == "nvidia.com/gpu":
            raise ConfigError(
                f"--fabric-resource {value!r}: the workers already request all of their node's GPUs",
                hint=f"name a network resource, e.g. {EXAMPLE}",
            )
        resources[name] = int(count)
    return tuple(resources.items())
