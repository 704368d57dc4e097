"""Request bodies as the API server reads them: by Content-Length or in chunks, at most 3 MiB.

kubectl sends `create --raw PATH -f FILE` with `Transfer-Encoding: chunked` (Go's http.Client does
for a body of unknown length); a server that only reads Content-Length sees an empty body and then
takes the first chunk-size line for a new request. Go's net/http decodes chunks before the API
server's handlers see the body, and the API server refuses a body over its MaxRequestBodyBytes
(3 MiB) with 413, so a client cannot make the sim buffer an upload of any size.
"""

from __future__ import annotations

import re
from io import BufferedIOBase

from gpuctl.sim.api.api_errors import ApiError

MAX_BODY_BYTES = 3 * 1024 * 1024  # kube-apiserver's --max-request-body-bytes default
_MAX_LINE = 4096  # a chunk-size line or a trailer line; Go allows 4 KiB
_CHUNK_SIZE = re.compile(rb"[0-9a-fA-F]{1,16}")


def read_body(rfile: BufferedIOBase, headers: dict[str, str]) -> bytes:
    """The request's body (headers keyed by lower-case name); ApiError 400, 413 or 501 when it
    cannot be read, after which the connection must be closed (its framing is lost)."""
    encoding = headers.get("transfer-encoding", "").strip().lower()
    if encoding:
        if encoding != "chunked":  # Go's net/http answers any other coding so
            raise ApiError(501, "NotImplemented", f"unsupported transfer encoding: {encoding!r}")
        return _read_chunked(rfile)
    length_text = headers.get("content-length", "").strip() or "0"
    if not length_text.isdigit():
        raise ApiError(400, "BadRequest", f"bad Content-Length {length_text!r}")
    length = int(length_text)
    _check_size(length)
    body = rfile.read(length) if length else b""
    if len(body) != length:
        raise ApiError(400, "BadRequest", "the request body ended before its Content-Length")
    return body


def _read_chunked(rfile: BufferedIOBase) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        line = _line(rfile, "chunk size")
        size_text = line.split(b";", 1)[0].strip()  # chunk extensions are ignored, as Go does
        if not _CHUNK_SIZE.fullmatch(size_text):
            raise _malformed(f"invalid chunk size line {line[:40]!r}")
        size = int(size_text, 16)
        if size == 0:
            break
        total += size
        _check_size(total)
        data = rfile.read(size)
        if len(data) != size or rfile.read(2) != b"\r\n":
            raise _malformed("a chunk ended before its size or without CRLF")
        parts.append(data)
    while _line(rfile, "trailer").strip():  # trailers, up to the empty line that ends the body
        pass
    return b"".join(parts)


def _line(rfile: BufferedIOBase, what: str) -> bytes:
    line = rfile.readline(_MAX_LINE + 1)
    if len(line) > _MAX_LINE or not line.endswith(b"\n"):
        raise _malformed(f"{what} line too long or cut off")
    return line


def _check_size(size: int) -> None:
    if size > MAX_BODY_BYTES:
        raise ApiError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {MAX_BODY_BYTES}")


def _malformed(problem: str) -> ApiError:
    return ApiError(400, "BadRequest", f"malformed chunked encoding: {problem}")
