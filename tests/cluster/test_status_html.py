"""`gpuctl status -o html`: one self-contained page whose node grid matches status's JSON, node by
node, with the cluster's text (a hostile product, a hostile taint) shown as text, never as markup."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import Any

from gpuctl.report.html_page import status_node_state
from tests.polling import wait_until
from tests.untrusted import MARKUP

HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>"'
SCENARIO = {
    "devicePlugin": "installed",
    "nodes": [
        {"name": "gpu-{i}", "count": 2, "gpus": 4},
        {"name": "gpu-sick", "gpus": 4, "unhealthyGpus": 1, "gpuProduct": f"{MARKUP}{HOSTILE}"},
        {
            "name": "gpu-held",
            "gpus": 2,
            "taints": [{"key": "example.com/x", "value": HOSTILE, "effect": "PreferNoSchedule"}],
        },
        {"name": "cpu-0"},
    ],
}


class _Page(HTMLParser):
    """The page's nodes (data-node → data-state), its tags, and its text."""

    def __init__(self) -> None:
        super().__init__()
        self.nodes: dict[str, str] = {}
        self.tags: list[str] = []
        self.body: dict[str, str] = {}
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = {key: value or "" for key, value in attrs}
        if tag == "details" and "data-node" in values:
            self.nodes[values["data-node"]] = values["data-state"]
        if tag == "body":
            self.body = values

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_status_page_matches_the_json_and_shows_hostile_text_as_text(sim: Any, cli: Any) -> None:
    cluster = sim(SCENARIO)
    wanted = {"gpu-0": 4, "gpu-1": 4, "gpu-sick": 3, "gpu-held": 2}
    wait_until(
        lambda: {k: v for k, v in cluster.allocatable_gpus().items() if v} == wanted, "GPUs advertised"
    )
    from kubernetes.client import CoreV1Api

    CoreV1Api(cluster.api_client()).patch_node("gpu-held", {"spec": {"unschedulable": True}})
    document = json.loads(cli("status", "--kubeconfig", cluster.kubeconfig, "-o", "json").stdout)
    result = cli("status", "--kubeconfig", cluster.kubeconfig, "-o", "html")
    assert result.exit_code == 0, result.output
    page = _Page()
    page.feed(result.stdout)
    assert page.nodes == {node["name"]: status_node_state(node) for node in document["nodes"]}
    assert page.nodes == {"gpu-0": "pass", "gpu-1": "pass", "gpu-sick": "fail", "gpu-held": "warn"}
    assert (page.body["data-serving"], page.body["data-degraded"], page.body["data-held"]) == ("2", "1", "1")
    assert page.body["data-nodes"] == str(len(document["nodes"]))
    assert "script" not in page.tags
    assert "img" not in page.tags
    text = "".join(page.text)
    assert HOSTILE in text  # shown, as text
    assert "Content-Security-Policy" in result.stdout
    assert "script-src 'none'" in result.stdout.replace("&#x27;", "'")
