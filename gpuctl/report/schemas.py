"""The JSON Schemas of gpuctl's documents (`gpuctl.<command>/v1`), shipped in the package as
gpuctl/schemas/<command>.v1.schema.json, so a pipeline can validate what `-o json` printed."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any


def schema_file_name(document: str) -> str:
    """`gpuctl.verify/v1` → `verify.v1.schema.json`."""
    command, version = document.removeprefix("gpuctl.").split("/", 1)
    return f"{command}.{version}.schema.json"


def schema_id(document: str) -> str:
    """`gpuctl.verify/v1` → `urn:gpuctl:verify:v1`, the schema's $id (an absolute URI, so that the
    bootstrap schema's `$ref` to verify's resolves)."""
    command, version = document.removeprefix("gpuctl.").split("/", 1)
    return f"urn:gpuctl:{command}:{version}"


def load_schema(document: str) -> dict[str, Any]:
    """The JSON Schema of `document` (e.g. `gpuctl.status/v1`)."""
    text = (
        resources.files("gpuctl")
        .joinpath("schemas")
        .joinpath(schema_file_name(document))
        .read_text(encoding="utf-8")
    )
    schema: dict[str, Any] = json.loads(text)
    return schema
