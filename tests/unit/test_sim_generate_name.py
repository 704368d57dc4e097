"""generateName never hands out a name in use: 5,000 device plugin pods once collided and one
node silently lost its plugin (found by bench/verify_scale.py at 5,000 nodes)."""

from __future__ import annotations

import random

from gpuctl.sim.runtime.objects import GENERATE_NAME_TRIES, generated_name


def test_a_taken_name_is_never_returned() -> None:
    random.seed(7)
    first = generated_name("ds-", lambda _: False)
    assert first is not None
    random.seed(7)  # the same random draw again: the first candidate is now taken
    second = generated_name("ds-", lambda name: name == first)
    assert second is not None
    assert second != first
    assert second.startswith("ds-")


def test_every_try_taken_gives_none_after_the_api_servers_retries() -> None:
    tried: list[str] = []

    def taken(name: str) -> bool:
        tried.append(name)
        return True

    assert generated_name("ds-", taken) is None
    assert len(tried) == GENERATE_NAME_TRIES


def test_five_thousand_daemonset_pods_get_distinct_names() -> None:
    from gpuctl.sim.runtime.cluster import Cluster
    from gpuctl.sim.scenario import parse_scenario

    scenario = parse_scenario(
        {"devicePlugin": "installed", "nodes": [{"name": "gpu-{i}", "count": 5000, "gpus": 1}]}, "t"
    )
    random.seed(2)  # with this seed, two of the 5,000 plain suffix draws collide
    cluster = Cluster(scenario)
    pods = cluster.store.items("pods", "kube-system")
    assert len(pods) == 5000
    assert len(cluster.running_plugins) == 5000  # every node runs its own plugin pod
    nodes = cluster.store.items("nodes", "")
    assert all(node["status"]["allocatable"].get("nvidia.com/gpu") == "1" for node in nodes)
