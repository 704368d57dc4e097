"""The scenario fields of the NCCL level's hardware: `nvls` and `nvlinks` (docs/scenario.md)."""

from __future__ import annotations

import pytest

from gpuctl.errors import ConfigError
from gpuctl.sim.scenario import NodeSpec, parse_scenario


def _node(**fields: object) -> NodeSpec:
    return parse_scenario(
        {"nodes": [{"name": "hgx", "gpus": 8, "interconnect": "nvswitch", **fields}]}
    ).nodes[0]


def test_defaults_keep_a_node_whole() -> None:
    node = _node()
    assert (node.nvls, node.nvlinks) == (True, None)


def test_the_fields_are_read() -> None:
    node = _node(nvls=False, nvlinks=12)
    assert (node.nvls, node.nvlinks) == (False, 12)
    assert _node(nvlinks=0).nvlinks == 0


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"nvlinks": 19}, "nodes[0].nvlinks: must be <= 18 (the NVLinks of an H100 or B200 GPU)"),
        ({"nvlinks": -1}, "nodes[0].nvlinks"),
        ({"nvls": "maybe"}, "nodes[0].nvls"),
    ],
)
def test_bad_values_are_refused_naming_the_field(fields: dict[str, object], problem: str) -> None:
    with pytest.raises(ConfigError) as refused:
        _node(**fields)
    assert problem in str(refused.value)
