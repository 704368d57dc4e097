"""Every `gpuctl.*/v1` document has a JSON Schema shipped in the package, and what the commands
really print validates against it (with the jsonschema library, not a hand-written walk)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpuctl.report.schemas import load_schema, schema_id

REPORTS = Path(__file__).resolve().parents[2] / "gpuctl" / "report"


def _documents() -> list[str]:
    """Every SCHEMA constant of gpuctl/report/*.py."""
    found = []
    for path in sorted(REPORTS.glob("*.py")):
        found += re.findall(r'^SCHEMA = "(gpuctl\.[a-z-]+/v\d+)"', path.read_text(encoding="utf-8"), re.M)
    return found


def _validator(document: str) -> Any:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    registry: Registry[Any] = Registry().with_resources(
        (schema_id(name), Resource.from_contents(load_schema(name))) for name in _documents()
    )
    schema = load_schema(document)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=registry)


def _assert_valid(document: dict[str, Any]) -> None:
    errors = sorted(_validator(document["schema"]).iter_errors(document), key=lambda error: list(error.path))
    assert not errors, [f"{list(error.path)}: {error.message}" for error in errors]


def test_every_document_has_a_schema() -> None:
    documents = _documents()
    assert len(documents) >= 6
    for document in documents:
        schema = load_schema(document)
        assert schema["$id"] == schema_id(document)
        assert schema["properties"]["schema"] == {"const": document}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A healthy node, a node whose driver does not match, and a node without a device plugin pod."""
    from gpuctl.kube.client import load_api_client
    from gpuctl.kube.nodes import list_nodes
    from gpuctl.sim.scenario import parse_scenario
    from gpuctl.sim.server.http_server import SimServer
    from tests.polling import wait_until

    scenario = {
        "podStartSeconds": 0.05,
        "devicePlugin": "installed",
        "nodes": [
            {"name": "gpu-0", "gpus": 8},
            {"name": "gpu-bad", "gpus": 8, "host": {"driver": "mismatch"}},
        ],
    }
    server = SimServer(parse_scenario(scenario, "scenario")).start()
    kubeconfig = server.write_kubeconfig(tmp_path_factory.mktemp("schemas") / "kubeconfig")
    wait_until(
        lambda: all(node.gpu_allocatable == 8 for node in list_nodes(load_api_client(kubeconfig))), "GPUs"
    )
    yield kubeconfig
    server.stop()


@pytest.mark.parametrize(
    "argv",
    [
        ["status"],
        ["verify"],
        ["verify", "--no-pods"],
        ["taint-gpu-nodes", "--dry-run"],
        ["taint-gpu-nodes", "--remove", "--dry-run"],
        ["bootstrap", "--phase", "cluster", "--check"],
    ],
    ids="-".join,
)
def test_cluster_commands_print_valid_documents(cluster: Path, cli: Any, argv: list[str]) -> None:
    result = cli([*argv, "--kubeconfig", str(cluster), "-o", "json"])
    assert "Traceback" not in result.output
    _assert_valid(json.loads(result.stdout))


def test_bootstrap_with_its_verify_phase_is_valid(cluster: Path, cli: Any) -> None:
    result = cli("bootstrap", "--phase", "verify", "--kubeconfig", cluster, "-o", "json")
    document = json.loads(result.stdout)
    assert document["verify"]["schema"] == "gpuctl.verify/v1"
    _assert_valid(document)


def test_explain_and_preflight_documents_are_valid(tmp_path: Path, cli: Any) -> None:
    log = tmp_path / "pod.log"
    log.write_text(
        "Failed to initialize NVML: Driver/library version mismatch\n"
        "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.\n",
        encoding="utf-8",
    )
    explained = json.loads(cli("explain", log, "-o", "json").stdout)
    assert explained["matches"]
    _assert_valid(explained)
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(
        "all:\n  children:\n    gpu_nodes:\n      hosts:\n"
        "        n1: {ansible_host: 127.0.0.1, ansible_port: 1}\n",
        encoding="utf-8",
    )
    preflight = json.loads(cli("preflight", "--inventory", inventory, "-o", "json").stdout)
    assert preflight["hosts"][0]["reachable"] is False
    _assert_valid(preflight)


def test_version_documents_are_valid(cli: Any) -> None:
    plain = json.loads(cli("version", "-o", "json").stdout)
    assert "components" not in plain
    _assert_valid(plain)
    components = json.loads(cli("version", "--components", "-o", "json").stdout)
    assert {item["name"] for item in components["components"]} >= {"k8s-device-plugin", "gpu-operator"}
    _assert_valid(components)
    components["components"][0]["layer"] = "kernel"
    assert list(_validator("gpuctl.version/v1").iter_errors(components))


def test_a_document_missing_a_contract_key_is_refused() -> None:
    """The schemas pin the contract: dropping a key DESIGN.md promises fails validation."""
    broken = {"schema": "gpuctl.verify/v1", "ok": True, "nodes": [{"name": "n", "ok": True, "checks": []}]}
    errors = list(_validator("gpuctl.verify/v1").iter_errors(broken))
    assert {error.message for error in errors} >= {
        "'cluster_checks' is a required property",
        "'gpus' is a required property",
    }
