"""KUBECONFIG=a:b:c means what kubectl says it means: gpuctl's merge (gpuctl/kube/kubeconfigs.py)
against a real kubectl's `config current-context` and `config view --merge` over many combinations,
and gpuctl acting on the cluster `kubectl config current-context` names."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.kube.kubeconfigs import merge
from tests.kubectl import KUBECTL, needs_kubectl

pytestmark = needs_kubectl

# Each file's part: which current-context it sets ("" set empty, None absent) and which names it
# defines; a name defined in two files points at different servers and users in each.
CURRENT = (None, "", "shared", "own")
NAMES = (("shared",), ("shared", "own"), ())


def _file(folder: Path, label: str, current: str | None, names: tuple[str, ...]) -> Path:
    own = {"own": f"own-{label}"}  # "own" is a name only this file uses
    contexts = [own.get(name, name) for name in names]
    document: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": {"server": f"https://{label}.example:6443"}} for n in contexts],
        "users": [{"name": n, "user": {"token": f"token-{label}"}} for n in contexts],
        "contexts": [{"name": n, "context": {"cluster": n, "user": n, "namespace": label}} for n in contexts],
    }
    if current is not None:
        document["current-context"] = own.get(current, current)
    path = folder / f"{label}.kubeconfig"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


def _kubectl(files: list[Path], *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KUBECONFIG": os.pathsep.join(map(str, files)), "HOME": str(files[0].parent)}
    return subprocess.run(
        [KUBECTL, "config", *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def _view(document: dict[str, Any]) -> dict[str, Any]:
    """What matters of a merged kubeconfig: current-context and each name's fields."""
    return {
        "current-context": document.get("current-context") or "",
        **{
            f"{section}/{item['name']}": item.get(section.removesuffix("s"))
            for section in ("clusters", "contexts", "users")
            for item in document.get(section) or []
        },
    }


COMBINATIONS = [
    (first, second)
    for first, second in itertools.product(itertools.product(CURRENT, NAMES), repeat=2)
    if not (first[0] == "own" and "own" not in first[1])
    and not (second[0] == "own" and "own" not in second[1])
]


@pytest.mark.parametrize(("first", "second"), COMBINATIONS)
def test_two_files_merge_as_kubectl_merges_them(
    tmp_path: Path, first: tuple[str | None, tuple[str, ...]], second: tuple[str | None, tuple[str, ...]]
) -> None:
    files = [_file(tmp_path, "a", *first), _file(tmp_path, "b", *second)]
    merged = merge(files)
    kubectl_current = _kubectl(files, "current-context")
    assert merged.current_context == (
        kubectl_current.stdout.strip() if kubectl_current.returncode == 0 else ""
    )
    view = _kubectl(files, "view", "--merge", "-o", "json", "--raw")
    assert view.returncode == 0, view.stderr
    assert _view(merged.document) == _view(json.loads(view.stdout))


@pytest.mark.parametrize(
    "order",
    [("a", "b", "c"), ("c", "b", "a"), ("b", "a", "b"), ("missing", "a", "empty", "c"), ("empty", "b")],
)
def test_three_files_missing_empty_and_repeated_ones(tmp_path: Path, order: tuple[str, ...]) -> None:
    made = {
        "a": _file(tmp_path, "a", None, ("shared",)),
        "b": _file(tmp_path, "b", "shared", ("shared", "own")),
        "c": _file(tmp_path, "c", "own", ("own",)),
        "empty": tmp_path / "empty.kubeconfig",
        "missing": tmp_path / "missing.kubeconfig",
    }
    made["empty"].write_text("", encoding="utf-8")
    files = [made[label] for label in order]
    merged = merge([path for path in files if path.is_file()])
    kubectl_current = _kubectl(files, "current-context")
    assert merged.current_context == (
        kubectl_current.stdout.strip() if kubectl_current.returncode == 0 else ""
    )
    view = _kubectl(files, "view", "--merge", "-o", "json", "--raw")
    assert _view(merged.document) == _view(json.loads(view.stdout))


def test_relative_paths_resolve_against_the_file_that_holds_them(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    first = tmp_path / "one" / "config"
    first.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://a:6443', certificate-authority: ca.crt}}]\n"
        "users: [{name: u, user: {tokenFile: token, exec: {apiVersion: client.authentication.k8s.io/v1, "
        "command: ./bin/helper}}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n",
        encoding="utf-8",
    )
    second = tmp_path / "two" / "config"
    second.write_text(
        "apiVersion: v1\nkind: Config\nusers: [{name: v, user: {client-certificate: ../certs/v.crt}}]\n",
        encoding="utf-8",
    )
    merged = merge([first, second])
    one = tmp_path / "one"
    assert merged.entry("clusters", "c") == (
        first,
        {"server": "https://a:6443", "certificate-authority": str(one / "ca.crt")},
    )
    user = merged.entry("users", "u")[1]
    assert (user["tokenFile"], user["exec"]["command"]) == (str(one / "token"), str(one / "bin" / "helper"))
    assert merged.entry("users", "v") == (second, {"client-certificate": str(tmp_path / "certs" / "v.crt")})


def test_gpuctl_acts_on_the_cluster_kubectl_names_with_a_path_list(
    sim: Any, cli: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    """The report's bug: a:b naming different current-contexts made gpuctl use b's cluster."""
    first = sim({"nodes": [{"name": "first-cluster-node", "gpus": 1}]}, name="first")
    second = sim({"nodes": [{"name": "second-cluster-node", "gpus": 1}]}, name="second")
    renamed = []
    for cluster, label in ((first, "a"), (second, "b")):
        document = yaml.safe_load(cluster.kubeconfig.read_text(encoding="utf-8"))
        for section in ("clusters", "contexts", "users"):
            for item in document[section]:
                item["name"] = label
        document["contexts"][0]["context"].update(cluster=label, user=label)
        document["current-context"] = label
        path = tmp_path / f"{label}.yaml"
        path.write_text(yaml.safe_dump(document), encoding="utf-8")
        renamed.append(path)
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join(map(str, renamed)))
    assert _kubectl(renamed, "current-context").stdout.strip() == "a"
    result = cli("status", "-o", "json")
    assert result.exit_code == 0, result.output
    assert [node["name"] for node in json.loads(result.stdout)["nodes"]] == ["first-cluster-node"]
    result = cli("status", "-o", "json", "--context", "b")
    assert [node["name"] for node in json.loads(result.stdout)["nodes"]] == ["second-cluster-node"]
