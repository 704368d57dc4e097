"""What `gpuctl explain WORD` names: pod/NAME or node/NAME (kubectl's KIND/NAME, with its short
kind names), or a text file to scan."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from gpuctl.core.explain_subject.evidence import Subject
from gpuctl.errors import ConfigError
from gpuctl.validation import dns_label_problem, dns_subdomain_problem

_KINDS = {"pod": "pod", "pods": "pod", "po": "pod", "node": "node", "nodes": "node", "no": "node"}
# Kinds kubectl knows that gpuctl does not explain: KIND/NAME with one of these, and no such file,
# is a mistaken subject, not a file to read.
_OTHER_KINDS = frozenset({
    "deploy", "deployment", "deployments", "ds", "daemonset", "daemonsets", "sts", "statefulset",
    "statefulsets", "rs", "replicaset", "replicasets", "job", "jobs", "cj", "cronjob", "cronjobs", "svc",
    "service", "services", "cm", "configmap", "configmaps", "ns", "namespace", "namespaces", "pvc", "pv",
    "secret", "secrets", "runtimeclass", "runtimeclasses", "resourceclaim", "resourceclaims",
})  # fmt: skip
_EXAMPLE = "`gpuctl explain pod/NAME -n NAMESPACE` or `gpuctl explain node/NAME`"


def subject_of(word: str, namespace: str | None, default_namespace: Callable[[], str]) -> Subject | None:
    """The pod or node `word` names (ConfigError for a malformed one), None for a file. A pod's
    namespace is -n's, else `default_namespace()`'s (kubectl's: the context's namespace); a
    node's -n is ignored, as `kubectl get node NAME -n X` ignores it."""
    kind, slash, name = word.partition("/")
    known = _KINDS.get(kind.lower()) if slash else None
    if known is None:
        if slash and kind.lower() in _OTHER_KINDS and not Path(word).exists():
            raise ConfigError(
                f"explain {word}: gpuctl explains pods and nodes, not {kind}",
                hint=f"explain one of its pods (`kubectl get pods` lists them): {_EXAMPLE}",
            )
        return None
    if not name:
        raise ConfigError(f"explain {word}: no {known} name after the slash", hint=f"name one: {_EXAMPLE}")
    problem = dns_subdomain_problem(name)
    if problem:
        raise ConfigError(f"explain {word}: {name!r} is {problem}", hint=f"`kubectl get {known}s` lists them")
    if known == "node":  # -n is context, as in kubectl: a node has no namespace, so it is ignored
        return Subject("node", name)
    namespace = default_namespace() if namespace is None else namespace
    problem = dns_label_problem(namespace)
    if problem:
        raise ConfigError(f"-n {namespace!r}: {problem}", hint=f"e.g. `gpuctl explain pod/{name} -n default`")
    return Subject("pod", name, namespace)
