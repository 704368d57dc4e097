"""A tiny protobuf encoder for the tests of the simulated cluster's protobuf request bodies."""

from __future__ import annotations


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # a negative int64/int32 is two's complement in 64 bits
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def vi(number: int, value: int) -> bytes:
    """A varint field."""
    return varint(number << 3) + varint(value)


def ld(number: int, *parts: bytes | str) -> bytes:
    """A length-delimited field (string, bytes or message) made of `parts`."""
    data = b"".join(part.encode() if isinstance(part, str) else part for part in parts)
    return varint(number << 3 | 2) + varint(len(data)) + data


def entry(number: int, key: str, value: bytes | str) -> bytes:
    """One map entry: a message {key=1, value=2}."""
    return ld(number, ld(1, key), ld(2, value))


def envelope(api_version: str, kind: str, *fields: bytes) -> bytes:
    """The magic bytes and the runtime.Unknown around an object's fields."""
    return b"k8s\x00" + ld(1, ld(1, api_version), ld(2, kind)) + ld(2, *fields)
