"""`-o json` is json.dumps(document, indent=2) and a newline, byte for byte, whichever encoder
writes it (orjson where its text is the same, the standard library's elsewhere)."""

from __future__ import annotations

import contextlib
import io
import json
import random
from typing import Any

import pytest

from gpuctl.cli import output


def _written(document: Any) -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        output._write_json(document)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "document",
    [
        {"empty": [], "map": {}, "nested": [1, {"text": "line\nbreak\ttab\u001f"}]},
        {"del": "x\x7f"},  # DEL: escaped by json.dumps, not by orjson
        {"accented": "héllo", "emoji": "\U0001f600"},  # escaped by json.dumps
        {"floats": [1e-05, 0.00012, 0.5, 2.0, 1e16, -0.0, 123.456, 5e-324]},
        {"text that looks like a small number": "a: 0.00001"},
        {"text with e- after a digit": "h100e-5", "and not": "node-e-1", "value": [2.5e-10, 3e-5]},
        {"big": 10**30},  # orjson refuses integers beyond 64 bits
        {1: "an integer key"},  # orjson refuses keys that are not strings
        {"tuple": (1, 2), "none": None, "bools": [True, False]},
        {"deep": {"deeper": [[1e-05, "x"], {"k": 0.00003, "é": [{}]}]}, "m": {1: "x"}},
        [[[]], [{}], 1e-07],
        [],
        "plain",
    ],
)
def test_json_output_is_the_standard_library_text(document: Any) -> None:
    assert _written(document) == json.dumps(document, indent=2) + "\n"


def test_a_large_document_is_written_whole_and_the_same() -> None:
    random.seed(7)
    nodes = [
        {
            "name": f"gpu-{index}",
            "ok": index % 7 != 0,
            "gpus": random.randint(0, 8),
            "seconds": round(random.uniform(0, 30), 3),
            "checks": [{"id": "smi.count", "ok": True, "detail": "8 of 8 GPUs"}] * 3,
        }
        for index in range(6000)
    ]
    document = {"summary": {"nodes": len(nodes)}, "nodes": nodes}
    text = _written(document)
    assert len(text) > output.JSON_WRITE_BYTES  # written in several slices
    assert text == json.dumps(document, indent=2) + "\n"


def test_floats_of_every_magnitude_are_written_as_the_standard_library_writes_them() -> None:
    random.seed(11)
    for _ in range(20000):
        value = random.uniform(-1000, 1000) * 10 ** random.randint(-30, 30)
        if random.random() < 0.5:
            value = round(value, random.randint(0, 8))
        assert (
            _written({"value": value, "values": [value]})
            == json.dumps({"value": value, "values": [value]}, indent=2) + "\n"
        )
