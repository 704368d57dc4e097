"""verify's outputs besides standard output, after each run: Prometheus metrics served
(`--metrics-addr`, with --watch) or pushed (`--pushgateway`), and the --report page (rewritten
whole after each --watch round)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional
from urllib.parse import urlsplit

import typer

from gpuctl.errors import ConfigError

if TYPE_CHECKING:
    from gpuctl.core.verify.model import VerifyResult
    from gpuctl.report.metrics import VerifyMetrics

OptStr = Optional[str]  # noqa: UP045 - Typer needs Optional[] on Python 3.10
MetricsAddrOption = Annotated[
    OptStr,
    typer.Option(
        "--metrics-addr",
        help="With --watch: serve Prometheus metrics on http://HOST:PORT/metrics "
        "(:PORT listens on every interface; port 0 picks a free one).",
        metavar="HOST:PORT",
        show_default=False,
    ),
]
PushgatewayOption = Annotated[
    OptStr,
    typer.Option(
        "--pushgateway",
        help="Push the run's Prometheus metrics to this Pushgateway (job gpuctl-verify), "
        "e.g. http://pushgateway:9091; with --watch after every run.",
        metavar="URL",
        show_default=False,
    ),
]
_ADDR_HINT = "e.g. `--metrics-addr :9400` or `--metrics-addr 127.0.0.1:9400`"
_PUSH_HINT = "e.g. `--pushgateway http://pushgateway.monitoring:9091`"


def parse_metrics_addr(text: str) -> tuple[str, int]:
    """HOST:PORT, [IPv6]:PORT or :PORT (every IPv4 interface) as (host, port)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(f"--metrics-addr {text!r}: expected HOST:PORT with a port 0-65535", _ADDR_HINT)
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if any(ch.isspace() or ch in "[]/" for ch in host):
        raise ConfigError(f"--metrics-addr {text!r}: {host!r} is not a host name or address", _ADDR_HINT)
    return host or "0.0.0.0", int(port)  # `:PORT` asks for every interface, as Prometheus exporters do


def check_round_outputs(metrics_addr: str | None, pushgateway: str | None) -> None:
    """Refuse a bad --metrics-addr or --pushgateway before anything is read from the cluster."""
    if metrics_addr is not None:
        parse_metrics_addr(metrics_addr)
    if pushgateway is not None:
        check_pushgateway(pushgateway)


def check_pushgateway(url: str) -> None:
    """Refuse a --pushgateway that is not an http(s) URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ConfigError(f"--pushgateway {url!r}: expected an http:// or https:// URL", _PUSH_HINT)


@dataclass
class RoundOutputs:
    """What each run hands its result to besides standard output."""

    metrics: VerifyMetrics | None
    pushgateway: str | None
    report_file: Path | None
    context: str | None

    def publish(self, result: VerifyResult) -> None:
        """After a --watch round: the metrics updated and pushed, the page rewritten. A push that
        fails is said on stderr and tried again next round: the watch goes on."""
        from gpuctl.errors import UnreachableError

        self.record(result)
        if self.report_file is not None:
            from gpuctl.cli.verify_reports import write_report_page

            write_report_page(result, self.report_file, context=self.context)
        try:
            self.push()
        except UnreachableError as error:
            sys.stderr.write(f"warning: {error.message} (tried again after the next run)\n")

    def record(self, result: VerifyResult) -> None:
        if self.metrics is not None:
            self.metrics.record(result)

    def push(self) -> None:
        if self.metrics is not None and self.pushgateway is not None:
            self.metrics.push(self.pushgateway)


@contextlib.contextmanager
def round_outputs(
    *, metrics_addr: str | None, pushgateway: str | None, report_file: Path | None, context: str | None
) -> Iterator[RoundOutputs]:
    """The outputs of the runs to come; with --metrics-addr the server listens from here (a busy
    port fails now, not after the first run) until the block ends."""
    check_round_outputs(metrics_addr, pushgateway)
    address = parse_metrics_addr(metrics_addr) if metrics_addr is not None else None
    metrics = None
    if address is not None or pushgateway is not None:
        from gpuctl.report.metrics import VerifyMetrics

        metrics = VerifyMetrics()
    outputs = RoundOutputs(metrics, pushgateway, report_file, context)
    if address is None or metrics is None:
        yield outputs
        return
    from gpuctl.report.metrics import serve

    server = serve(*address, metrics)
    host = f"[{address[0]}]" if ":" in address[0] else address[0]
    sys.stderr.write(f"serving metrics on http://{host}:{server.server_port}/metrics\n")
    sys.stderr.flush()
    try:
        yield outputs
    finally:
        server.shutdown()
        server.server_close()
