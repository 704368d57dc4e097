"""The client boundary: clients sized for a thread pool keep the request timeouts."""

from pathlib import Path

from gpuctl.kube.client import default_request_timeout, load_api_client, pooled_client

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
