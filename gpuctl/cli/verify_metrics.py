"""verify's outputs besides standard output, after each run: Prometheus metrics served
(`--metrics-addr`, with --watch) or pushed (`--pushgateway`), and the --report page (rewritten
whole after each --watch round)."""

from __future__ import annotations

import contextlib
import ssl
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional
from urllib.parse import urlsplit

import typer

from gpuctl.errors import ConfigError
from gpuctl.input_files import read_input_file
from gpuctl.urls import redact_url

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
PushgatewayCaOption = Annotated[
    OptStr,
    typer.Option(
        "--pushgateway-ca",
        help="CA certificate file (PEM) that signed an https --pushgateway's certificate "
        "(default: the system's CAs).",
        metavar="FILE",
        show_default=False,
    ),
]
_ADDR_HINT = "e.g. `--metrics-addr :9400` or `--metrics-addr 127.0.0.1:9400`"
_PUSH_HINT = "e.g. `--pushgateway http://pushgateway.monitoring:9091`"
_CA_HINT = (
    "give the PEM file of the CA that signed the gateway's certificate: "
    "`gpuctl verify --pushgateway URL --pushgateway-ca ca.crt`"
)


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


def check_round_outputs(
    metrics_addr: str | None, pushgateway: str | None, pushgateway_ca: str | None = None
) -> ssl.SSLContext | None:
    """Refuse a bad --metrics-addr, --pushgateway or --pushgateway-ca before anything is read from
    the cluster; the TLS context an https gateway is verified with (None: the system's CAs)."""
    if metrics_addr is not None:
        parse_metrics_addr(metrics_addr)
    if pushgateway is not None:
        check_pushgateway(pushgateway)
    if pushgateway_ca is None:
        return None
    if pushgateway is not None and urlsplit(pushgateway).scheme != "https":
        raise ConfigError(
            f"--pushgateway-ca {pushgateway_ca}: --pushgateway {redact_url(pushgateway)} is not https",
            hint="give the gateway's https:// URL, e.g. `--pushgateway https://pushgateway.monitoring:9091`",
        )
    return gateway_tls(Path(pushgateway_ca))


def check_pushgateway(url: str) -> None:
    """Refuse a --pushgateway that is not an http(s) URL (shown without its password)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ConfigError(
            f"--pushgateway {redact_url(url)!r}: expected an http:// or https:// URL", _PUSH_HINT
        )


def gateway_tls(ca_file: Path) -> ssl.SSLContext:
    """A client TLS context that trusts the CA certificates of `ca_file` (PEM) only, the host
    name checked, as the kubeconfig's certificate-authority is used."""
    try:
        pem = read_input_file(ca_file, "--pushgateway-ca", hint=_CA_HINT).decode("utf-8", errors="replace")
    except OSError as error:  # missing, unreadable
        raise ConfigError(f"--pushgateway-ca {ca_file}: {error.strerror or error}", hint=_CA_HINT) from error
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies the chain and the host name
    try:
        context.load_verify_locations(cadata=pem)
    except (ssl.SSLError, ValueError) as error:
        detail = getattr(error, "reason", None) or "no certificate in it"  # OpenSSL's, e.g. BAD_BASE64_DECODE
        raise ConfigError(
            f"--pushgateway-ca {ca_file}: not a PEM CA certificate ({detail})", hint=_CA_HINT
        ) from error
    return context


@dataclass
class RoundOutputs:
    """What each run hands its result to besides standard output."""

    metrics: VerifyMetrics | None
    pushgateway: str | None
    report_file: Path | None
    context: str | None
    gateway_tls: ssl.SSLContext | None = None

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
            self.metrics.push(self.pushgateway, tls=self.gateway_tls)


@contextlib.contextmanager
def round_outputs(
    *,
    metrics_addr: str | None,
    pushgateway: str | None,
    report_file: Path | None,
    context: str | None,
    pushgateway_ca: str | None = None,
) -> Iterator[RoundOutputs]:
    """The outputs of the runs to come; with --metrics-addr the server listens from here (a busy
    port fails now, not after the first run) until the block ends."""
    tls = check_round_outputs(metrics_addr, pushgateway, pushgateway_ca)
    address = parse_metrics_addr(metrics_addr) if metrics_addr is not None else None
    metrics = None
    if address is not None or pushgateway is not None:
        from gpuctl.report.metrics import VerifyMetrics

        metrics = VerifyMetrics()
    outputs = RoundOutputs(metrics, pushgateway, report_file, context, tls)
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
