"""Kubernetes protobuf request bodies, decoded into the JSON-shaped dict a JSON body would give.

kubectl's typed-client writes (`kubectl create namespace|configmap|secret|role ...`, `kubectl auth
can-i`) send `Content-Type: application/vnd.kubernetes.protobuf`; a real API server has no JSON
fallback there, so the sim decodes them. The body is the 4 magic bytes `k8s\\x00` and then a
`runtime.Unknown` (typeMeta=1 {apiVersion=1, kind=2}, raw=2, contentEncoding=3, contentType=4)
whose `raw` is the object's protobuf. Field numbers come from k8s.io/api `generated.proto`.

The output follows Go's JSON encoding of the decoded struct: the generated marshallers write every
non-pointer scalar even when it is zero, so a zero value is dropped unless the Go field has no
`omitempty` or is a pointer (`keep`); nested structs always appear; `bytes` become base64; a zero
metav1.Time becomes null. Unknown field numbers are skipped, as proto decoders do.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from gpuctl.sim.api.api_errors import ApiError, bad_request
from gpuctl.sim.api.kinds import ResourceType
from gpuctl.sim.api.protobuf_kinds import KINDS, TYPE_META, Field, Message

Obj = dict[str, Any]
MAGIC = b"k8s\x00"
MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
WireValue = int | bytes
_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5


class ProtobufError(ValueError):
    """The body is not a well-formed Kubernetes protobuf message."""


class UnsupportedKind(Exception):
    """A well-formed envelope around a kind this decoder has no field table for."""

    def __init__(self, api_version: str, kind: str) -> None:
        super().__init__(f"{api_version}, Kind={kind}")
        self.api_version = api_version
        self.kind = kind


def is_protobuf(content_type: str) -> bool:
    return content_type.split(";", maxsplit=1)[0].strip().lower() == MEDIA_TYPE


def request_object(body: bytes, resource: ResourceType) -> Obj:
    """The object in a protobuf request body for `resource`, or the API server's error Status:
    400 for a malformed body, 415 for a kind without a field table."""
    try:
        return decode_body(body, api_version=resource.api_version, kind=resource.kind)
    except ProtobufError as error:
        raise bad_request(f"error decoding request body: {error}") from None
    except UnsupportedKind:
        # What a real API server answers for a resource without protobuf support (a CRD).
        raise ApiError(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json, application/yaml",
        ) from None


# -- decoding --------------------------------------------------------------------------------------
def decode_body(body: bytes, *, api_version: str, kind: str) -> Obj:
    """The object in a protobuf request body; `api_version`/`kind` apply when the envelope has none.

    Raises ProtobufError for a malformed body, UnsupportedKind for a kind without a table.
    """
    if not body.startswith(MAGIC):
        raise ProtobufError(
            f"provided data does not appear to be a protobuf message, expected prefix {list(MAGIC)}"
        )
    type_meta, raw = _envelope(body[len(MAGIC) :])
    api_version = type_meta.get("apiVersion") or api_version
    kind = type_meta.get("kind") or kind
    group = api_version.rpartition("/")[0]
    message = KINDS.get((group, kind))
    if message is None:
        raise UnsupportedKind(api_version, kind)
    return {"kind": kind, "apiVersion": api_version, **_decode(raw, message)}


def _envelope(data: bytes) -> tuple[Obj, bytes]:
    """runtime.Unknown: typeMeta=1, raw=2; contentEncoding=3 and contentType=4 stay empty in
    practice (kubectl never sets them), so they are not read."""
    type_meta: Obj = {}
    raw = b""
    for number, wire, value in _wire_fields(data, "Unknown"):
        if number == 1:
            type_meta = _decode(_length(wire, value, "Unknown.typeMeta"), TYPE_META)
        elif number == 2:
            raw = _length(wire, value, "Unknown.raw")
    return type_meta, raw


def _decode(data: bytes, message: Message) -> Obj:
    out: Obj = {}
    for number, wire, value in _wire_fields(data, message.name):
        spec = message.fields.get(number)
        if spec is None:
            continue  # an unknown field number: skipped, as proto3 decoders do
        where = f"{message.name}.{spec.name}"
        if spec.kind in ("map", "bytes_map"):
            key, item = _map_entry(_length(wire, value, where), spec.kind, where)
            out.setdefault(spec.name, {})[key] = item
            continue
        decoded = _value(spec, wire, value, where)
        if spec.repeated:
            out.setdefault(spec.name, []).append(decoded)
        elif spec.kind == "message" or spec.keep or decoded not in ("", 0, False):
            out[spec.name] = decoded
        else:
            out.pop(spec.name, None)  # omitempty: a zero scalar is absent in JSON
    for spec in message.fields.values():
        if spec.repeated and spec.keep:
            out.setdefault(spec.name, None)
    return out


def _value(spec: Field, wire: int, value: WireValue, where: str) -> Any:
    if spec.kind == "int":
        return _signed(_varint_value(wire, value, where))
    if spec.kind == "bool":
        return _varint_value(wire, value, where) != 0
    data = _length(wire, value, where)
    if spec.message is not None:
        return _decode(data, spec.message)
    return _LENGTH_DELIMITED[spec.kind](data, where)


def _string(data: bytes, _where: str = "") -> str:
    return data.decode("utf-8", errors="replace")  # Go's JSON encoder also replaces bad UTF-8


def _bytes(data: bytes, _where: str = "") -> str:
    return base64.b64encode(data).decode("ascii")


def _map_entry(data: bytes, kind: str, where: str) -> tuple[str, str]:
    """A map entry is a message {key=1, value=2}; either may be absent (then empty)."""
    key, value = b"", b""
    for number, wire, item in _wire_fields(data, where):
        if number == 1:
            key = _length(wire, item, where)
        elif number == 2:
            value = _length(wire, item, where)
    render = _bytes if kind == "bytes_map" else _string
    return _string(key, where), render(value, where)


def _time(data: bytes, where: str) -> str | None:
    """metav1.Time {seconds=1, nanos=2}: empty is the zero time (null in JSON). The API server keeps
    whole seconds only (its JSON form has no fraction), so nanos are dropped as it drops them."""
    if not data:
        return None
    seconds = 0
    for number, wire, value in _wire_fields(data, where):
        if number == 1:
            seconds = _signed(_varint_value(wire, value, where))
    try:
        moment = datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        raise ProtobufError(f"{where}: timestamp {seconds} out of range") from None
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _fields_v1(data: bytes, where: str) -> Any:
    """FieldsV1 {Raw=1}: Raw is JSON, and the JSON form is that document itself."""
    raw = b""
    for number, wire, value in _wire_fields(data, where):
        if number == 1:
            raw = _length(wire, value, where)
    try:
        return json.loads(raw or b"{}")
    except ValueError:
        raise ProtobufError(f"{where}: Raw is not JSON") from None


_LENGTH_DELIMITED: dict[str, Callable[[bytes, str], Any]] = {
    "string": _string,
    "bytes": _bytes,
    "time": _time,
    "fields_v1": _fields_v1,
}


# -- the wire format -------------------------------------------------------------------------------
def _wire_fields(data: bytes, where: str) -> Iterator[tuple[int, int, WireValue]]:
    """(field number, wire type, value) per field: an int for varint/fixed, bytes for length-delimited."""
    position = 0
    while position < len(data):
        key, position = _varint(data, position, where)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ProtobufError(f"{where}: illegal field number 0 at offset {position}")
        value: WireValue
        if wire == _VARINT:
            value, position = _varint(data, position, where)
        elif wire in (_FIXED64, _FIXED32):
            size = 8 if wire == _FIXED64 else 4
            value, position = int.from_bytes(_take(data, position, size, where), "little"), position + size
        elif wire == _LENGTH:
            size, position = _varint(data, position, where)
            value, position = _take(data, position, size, where), position + size
        else:
            raise ProtobufError(f"{where}: unsupported wire type {wire} for field {number}")
        yield number, wire, value


def _varint(data: bytes, position: int, where: str) -> tuple[int, int]:
    result = shift = 0
    while True:
        if position >= len(data):
            raise ProtobufError(f"{where}: truncated varint at offset {position}")
        if shift >= 64:
            raise ProtobufError(f"{where}: varint longer than 10 bytes at offset {position}")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return result & 0xFFFFFFFFFFFFFFFF, position


def _take(data: bytes, position: int, size: int, where: str) -> bytes:
    if position + size > len(data):
        raise ProtobufError(
            f"{where}: field needs {size} bytes at offset {position}, only {len(data) - position} left"
        )
    return data[position : position + size]


def _signed(value: int) -> int:
    """int32/int64 are two's complement in 64 bits on the wire (a negative int32 is sign-extended)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _varint_value(wire: int, value: WireValue, where: str) -> int:
    if wire != _VARINT or not isinstance(value, int):
        raise ProtobufError(f"{where}: wire type {wire}, expected a varint")
    return value


def _length(wire: int, value: WireValue, where: str) -> bytes:
    if wire != _LENGTH or not isinstance(value, bytes):
        raise ProtobufError(f"{where}: wire type {wire}, expected length-delimited")
    return value
