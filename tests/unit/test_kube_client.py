"""The client boundary: clients sized for a thread pool keep the request timeouts; the token
refresh hook runs at most once per interval, in every copy of the client."""

import threading
from pathlib import Path
from typing import Any

from gpuctl.kube.client import ThrottledRefresh, default_request_timeout, load_api_client, pooled_client

KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:9"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


def test_pooled_client_keeps_the_timeout_client_and_leaves_the_original_alone(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    original = load_api_client(path)
    size_before = original.configuration.connection_pool_maxsize
    pooled = pooled_client(original, 32)
    assert type(pooled) is type(original)  # the subclass that adds default request timeouts
    assert pooled.configuration.connection_pool_maxsize == 36
    assert original.configuration.connection_pool_maxsize == size_before
    assert default_request_timeout()[1] > 0


def test_a_token_kubeconfig_gets_a_throttled_refresh_hook(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    configuration = load_api_client(path).configuration
    assert isinstance(configuration.refresh_api_key_hook, ThrottledRefresh)
    assert configuration.get_api_key_with_prefix("BearerToken", alias="authorization") == "Bearer t"
    # kube_config's hook re-installs itself each time it runs: the throttle stays in its place.
    assert isinstance(configuration.refresh_api_key_hook, ThrottledRefresh)


class _CountingHook:
    """A refresh hook as the client's are: it writes a token into the Configuration it is given
    and installs a new copy of itself."""

    def __init__(self, runs: list[Any]) -> None:
        self.runs = runs

    def __call__(self, configuration: Any) -> None:
        self.runs.append(configuration)
        configuration.api_key["BearerToken"] = f"Bearer token-{len(self.runs)}"
        configuration.refresh_api_key_hook = _CountingHook(self.runs)


def test_the_hook_runs_once_per_interval_from_many_threads_and_once_more_in_a_copy(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    original = load_api_client(path)
    runs: list[Any] = []
    original.configuration.refresh_api_key_hook = ThrottledRefresh(_CountingHook(runs), interval_s=3600)
    threads = [threading.Thread(target=original.configuration.auth_settings) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert runs == [original.configuration]
    assert original.configuration.auth_settings()["BearerToken"]["value"] == "Bearer token-1"
    pooled = pooled_client(original, 8)  # a deep copy: its own schedule, so its first request refreshes
    assert pooled.configuration.auth_settings()["BearerToken"]["value"] == "Bearer token-2"
    assert runs == [original.configuration, pooled.configuration]
    assert original.configuration.auth_settings()["BearerToken"]["value"] == "Bearer token-1"


def test_with_no_interval_the_hook_runs_for_every_request(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    configuration = load_api_client(path).configuration
    runs: list[Any] = []
    configuration.refresh_api_key_hook = ThrottledRefresh(_CountingHook(runs), interval_s=0)
    tokens = [configuration.auth_settings()["BearerToken"]["value"] for _ in range(3)]
    assert tokens == ["Bearer token-1", "Bearer token-2", "Bearer token-3"]
