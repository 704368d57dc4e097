"""The shared table rules: words kept whole within the width, one product spelling, node ranges."""

from __future__ import annotations

import io

import pytest

from gpuctl.report.tables import keep_words_whole, node_ranges, product_name


@pytest.mark.parametrize(
    ("names", "folded"),
    [
        ([f"gpu-{i}" for i in range(50)], "gpu-[0-49]"),
        (["gpu-0", "gpu-1", "gpu-3", "gpu-4", "gpu-9"], "gpu-[0-1,3-4,9]"),
        (["gpu-7"], "gpu-7"),
        (["n01", "n02", "cpu-a"], "cpu-a, n01, n02"),  # zero-padded numbers stay as written
        (["b-2", "a-1", "b-1"], "a-1, b-[1-2]"),
    ],
)
def test_node_ranges(names: list[str], folded: str) -> None:
    assert node_ranges(names) == folded


def test_one_product_spelling_from_nvidia_smi_and_from_the_label() -> None:
    assert (
        product_name("NVIDIA A100-SXM4-40GB")
        == product_name("NVIDIA-A100-SXM4-40GB")
        == "NVIDIA A100 SXM4 40GB"
    )
    assert product_name("-") == "-"


@pytest.mark.parametrize("width", [40, 60, 80])
def test_cells_wrap_between_words_within_the_width(width: int) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    for column in ("NODE", "PRODUCT", "DRIVER", "NOTE"):
        table.add_column(column, overflow="fold", no_wrap=column == "DRIVER")
    table.add_row("gpu-node-0", "NVIDIA H100 80GB HBM3", "550.90.07", "nothing to say about this node at all")
    out = io.StringIO()
    Console(file=out, width=width).print(keep_words_whole(table, width))
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= width
    words = out.getvalue().split()
    for word in ("gpu-node-0", "NVIDIA", "H100", "80GB", "HBM3", "550.90.07", "nothing", "about"):
        assert word in words, out.getvalue()
