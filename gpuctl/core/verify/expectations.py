"""Parse and apply what the user expects: `--expect-nodes`, `--expect-gpus`, `--toleration`."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

from gpuctl.core.verify.model import Check, Expectations, GpuCounts, NodeResult, Toleration, failed
from gpuctl.errors import ConfigError
from gpuctl.input_files import read_input_file
from gpuctl.validation import toleration_problem

_GLOB_CHARS = re.compile(r"[*?\[]")
_NODE_PATTERN = re.compile(r"^[a-z0-9*?\[\]]([-a-z0-9.*?\[\]]*[a-z0-9*?\[\]])?$")


def is_glob(pattern: str) -> bool:
    return bool(_GLOB_CHARS.search(pattern))


def matches(pattern: str, name: str) -> bool:
    return fnmatch.fnmatchcase(name, pattern)


def _node_patterns(text: str, flag: str) -> tuple[str, ...]:
    patterns = tuple(part.strip() for part in text.split(",") if part.strip())
    if not patterns:
        raise ConfigError(
            f"{flag} {text!r}: names no node", hint="e.g. --expect-nodes 'gpu-*,dgx-01', or leave it out"
        )
    for pattern in patterns:
        if not _NODE_PATTERN.match(pattern):
            raise ConfigError(
                f"{flag}: {pattern!r} is not a node name or glob",
                hint="use lower-case node names or globs, e.g. --expect-nodes 'gpu-*,dgx-01'",
            )
    return patterns


def _one_pattern(text: str, flag: str) -> str:
    patterns = _node_patterns(text, flag)
    if len(patterns) != 1:
        raise ConfigError(
            f"{flag}: {text!r} is not one node name or glob", hint="e.g. --expect-gpus 'gpu-0=8'"
        )
    return patterns[0]


def _gpu_count(text: str, where: str) -> int:
    try:
        count = int(text.strip())
    except ValueError:
        count = -1
    if count < 0:
        raise ConfigError(
            f"{where}: {text.strip()!r} is not a GPU count (an integer >= 0)",
            hint="e.g. --expect-gpus 8 or --expect-gpus 'gpu-0=8,gpu-*=4' or --expect-gpus @gpus.yaml",
        )
    return count


def _mapping_from_file(path: Path) -> list[tuple[str, str]]:
    import yaml

    try:
        data = yaml.safe_load(read_input_file(path, "--expect-gpus file").decode("utf-8", "replace"))
    except OSError as error:
        raise ConfigError(
            f"--expect-gpus @{path}: {error.strerror or error}",
            hint="pass an existing YAML file mapping node names or globs to GPU counts",
        ) from error
    except yaml.YAMLError as error:
        raise ConfigError(
            f"--expect-gpus @{path}: invalid YAML: {str(error).splitlines()[0]}",
            hint="the file is a mapping such as `gpu-0: 8`",
        ) from error
    if not isinstance(data, dict):
        raise ConfigError(
            f"--expect-gpus @{path}: expected a mapping of node name → GPU count",
            hint="the file is a mapping such as `gpu-0: 8`",
        )
    return [(str(key), str(value)) for key, value in data.items()]


def parse_expectations(expect_nodes: str | None, expect_gpus: str | None) -> Expectations:
    """`--expect-nodes a,b,gpu-*` and `--expect-gpus 8 | name=N,glob=N | @file.yaml`."""
    patterns = _node_patterns(expect_nodes, "--expect-nodes") if expect_nodes else ()
    if not expect_gpus:
        return Expectations(node_patterns=patterns)
    text = expect_gpus.strip()
    if text.startswith("@"):
        pairs = _mapping_from_file(Path(text[1:]))
        where = f"--expect-gpus {text}"
    elif "=" not in text:
        return Expectations(patterns, gpus_default=_gpu_count(text, "--expect-gpus"))
    else:
        pairs = []
        for part in filter(None, (item.strip() for item in text.split(","))):
            name, sep, count = part.partition("=")
            if not sep:
                raise ConfigError(
                    f"--expect-gpus: {part!r} is not NAME=COUNT",
                    hint="e.g. --expect-gpus 'gpu-0=8,gpu-1=4'",
                )
            pairs.append((name.strip(), count))
        where = "--expect-gpus"
    mapping = tuple(
        (_one_pattern(name, where), _gpu_count(count, f"{where}: {name}")) for name, count in pairs
    )
    return Expectations(patterns, gpus_by_pattern=mapping)


def expected_gpus(expectations: Expectations, node: str) -> int | None:
    for pattern, count in expectations.gpus_by_pattern:
        if matches(pattern, node):
            return count
    return expectations.gpus_default


def is_expected(expectations: Expectations, node: str) -> bool:
    patterns = [*expectations.node_patterns, *(p for p, _ in expectations.gpus_by_pattern)]
    return any(matches(pattern, node) for pattern in patterns)


def all_patterns(expectations: Expectations) -> list[str]:
    seen: dict[str, None] = {}
    for pattern in [*expectations.node_patterns, *(p for p, _ in expectations.gpus_by_pattern)]:
        seen.setdefault(pattern)
    return list(seen)


def parse_toleration(text: str) -> Toleration:
    """`KEY[=VALUE][:EFFECT]` like `kubectl taint`; no value means operator Exists."""
    body, _, effect = text.partition(":")
    key, sep, value = body.partition("=")
    toleration = Toleration(key, "Equal" if sep else "Exists", value, effect)
    # Checked as the API server checks a pod's tolerations: refused here, not as every pod's 422.
    problem = toleration_problem(toleration.key, toleration.operator, toleration.value, toleration.effect)
    if not text:  # valid to the API server (every taint tolerated), but more likely an unset variable
        problem = "empty (`:EFFECT` tolerates every taint of that effect)"
    if problem:
        raise ConfigError(
            f"--toleration {text!r}: {problem}",
            hint="give KEY[=VALUE][:EFFECT], e.g. --toleration nvidia.com/gpu=present:NoSchedule",
        )
    return toleration


def missing_node(pattern: str, expectations: Expectations) -> NodeResult:
    """The result of an expected node that is not in the cluster."""
    check = failed(
        "node.exists",
        f"expected node {pattern} is not in the cluster",
        "`kubectl get nodes` — is the node joined, and is the name in --expect-nodes/--expect-gpus right?",
    )
    counts = GpuCounts(expected_gpus(expectations, pattern), 0, 0, None)
    return NodeResult(pattern, counts, (check,))


def expected_globs(missing: list[str]) -> list[Check]:
    """A failing check for the expected globs no node matches."""
    globs = [pattern for pattern in missing if is_glob(pattern)]
    if not globs:
        return []
    return [
        failed(
            "cluster.expected-nodes",
            f"no node matches {', '.join(globs)}",
            "`kubectl get nodes` and check the globs passed to --expect-nodes/--expect-gpus",
        )
    ]
