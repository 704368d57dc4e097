"""A message `kubectl get -o yaml` folds over several lines is matched whole: scan.find_all reads
a folded block scalar (`message: >-`) or a quoted scalar broken at spaces as the one line it
stands for. The messages are real ones (kubernetes/kubernetes#49896 as the thread printed it;
kubernetes-sigs/dra-driver-nvidia-gpu#338's scheduler message folded by a YAML emitter the way
kubectl's does)."""

from __future__ import annotations

import yaml

from gpuctl.diagnose.scan import find_all, unfold

# kubernetes/kubernetes#49896: `kubectl get pod -o yaml` of a pending pod, as quoted there.
QUOTED = """\
    message: '0/10 nodes are available: 10 node(s) didn''t match node selector, 4
      Insufficient cpu.'
    reason: Unschedulable
"""
# kubernetes-sigs/dra-driver-nvidia-gpu#338.
DRA_MESSAGE = (
    "0/2 nodes are available: request gpu: device class gpu.nvidia.com does not exist. no new claims "
    "to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
)


class _Folded(str):
    """A string PyYAML writes as a folded block scalar (`>-`)."""


def _folded(dumper: yaml.SafeDumper, value: _Folded) -> yaml.ScalarNode:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=">")


yaml.SafeDumper.add_representer(_Folded, _folded)


def test_a_quoted_message_broken_over_lines_is_read_whole() -> None:
    found = find_all(QUOTED)
    assert [d.signature_id for d in found] == ["sched.insufficient-resource"]
    assert "4 Insufficient cpu." in found[0].evidence
    assert "didn''t match node selector" in found[0].evidence


def test_a_folded_block_and_a_folded_list_item_are_read_whole() -> None:
    block = yaml.safe_dump({"message": _Folded(DRA_MESSAGE)}, width=60)
    item = yaml.safe_dump({"conditions": [{"message": DRA_MESSAGE, "reason": "Unschedulable"}]}, width=60)
    for text in (block, item):
        assert len(text.splitlines()) > 3  # the emitter folded it
        assert any(DRA_MESSAGE in line for line in unfold(text.splitlines())), text
        assert [d.signature_id for d in find_all(text)] == ["dra.device-class-missing"]


def test_lines_that_are_not_folded_stay_as_they_are() -> None:
    lines = ["    reason: Unschedulable", "  message: 'one line'", "plain text", "key: >-"]
    assert unfold(lines) == lines
