"""`gpuctl verify`: parse options → gpuctl.core.verify → render."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
from collections.abc import Iterator
from datetime import UTC
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from gpuctl.bounds import CONCURRENCY, WAIT_TIMEOUT, WATCH_INTERVAL
from gpuctl.cli.flag_rules import refuse_inapplicable_flags
from gpuctl.cli.number_options import number_option
from gpuctl.cli.options import (
    Context,
    CudaImageOption,
    FabricHostNetworkOption,
    FabricIpcLockOption,
    FabricResourceOption,
    Kubeconfig,
    Level,
    LevelOption,
    MinBusbwOption,
    NcclImageOption,
    Output,
    VerifyOutput,
)
from gpuctl.cli.proof_options import proof_options
from gpuctl.cli.verify_gate_options import (
    GateConditionOption,
    GateModeOption,
    GateTaintOption,
    gate_options,
    with_gate_toleration,
)
from gpuctl.cli.verify_metrics import (
    MetricsAddrOption,
    PushgatewayCaOption,
    PushgatewayOption,
    RoundOutputs,
    check_round_outputs,
    round_outputs,
)
from gpuctl.cli.verify_reports import ReportOption, check_report_file, emit_verify
from gpuctl.defaults import (
    CUDA_SAMPLE_IMAGE,
    GATE_CONDITION_TYPE,
    GATE_TAINT_KEY,
    GPUCTL_NAMESPACE,
    NCCL_TESTS_IMAGE,
    VERIFICATION_PODS_SELECTOR,
    VERIFY_IMAGE,
)
from gpuctl.names import check_dns_label
from gpuctl.output_paths import Input, inputs
from gpuctl.shell import command_line
from gpuctl.validation import check, image_problem

if TYPE_CHECKING:
    from pathlib import Path

    from gpuctl.core.proof.gate import GateOptions
    from gpuctl.core.verify import VerifyOptions, VerifyResult
    from gpuctl.core.verify.model import ProofOptions
    from gpuctl.core.verify.progress import PodProgress

HELP = """\
Prove every GPU node: read-only checks (node Ready and schedulable, nvidia.com/gpu capacity vs
allocatable vs expected, device plugin pod and log, taints) plus one verification pod per GPU
node that requests all its GPUs and runs nvidia-smi; --level cuda then runs CUDA's vectorAdd on
every GPU, --level nccl also an NCCL all-reduce across each node's GPUs (one more pod per node and
level, one after the other). Each failure comes with a diagnosis and a hint. Verification pods
are always deleted (success, failure, --timeout, Ctrl-C).
Exit 0 all good, 1 a check failed, 2 usage/config error, 3 cluster unreachable or forbidden,
130 interrupted.
"""

OptStr = Optional[str]  # noqa: UP045 - Typer needs Optional[] on Python 3.10
OptList = Optional[list[str]]  # noqa: UP045 - Typer needs Optional[] on Python 3.10


def _options(
    *,
    expect_nodes: str | None,
    expect_gpus: str | None,
    namespace: str,
    image: str,
    image_pull_secret: str | None,
    runtime_class: str | None,
    timeout: float,
    keep_pods: bool,
    concurrency: int,
    no_pods: bool,
    allow_empty: bool,
    toleration: list[str],
    proof: ProofOptions,
) -> VerifyOptions:
    from gpuctl.core.verify import VerifyOptions, parse_expectations, parse_toleration

    check_dns_label("--namespace", namespace, GPUCTL_NAMESPACE)
    check_dns_label("--image-pull-secret", image_pull_secret, "registry-credentials")
    check_dns_label("--runtime-class", runtime_class, "nvidia")
    check("--image", image, image_problem, VERIFY_IMAGE)
    return VerifyOptions(
        expectations=parse_expectations(expect_nodes, expect_gpus),
        namespace=namespace,
        image=image,
        image_pull_secret=image_pull_secret,
        runtime_class=runtime_class,
        timeout_s=timeout,
        keep_pods=keep_pods,
        concurrency=concurrency,
        run_pods=not no_pods,
        allow_empty=allow_empty,
        tolerations=tuple(parse_toleration(text) for text in toleration),
        proof=proof,
    )


def command(
    *,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    output: VerifyOutput = Output.table,
    expect_nodes: Annotated[
        OptStr, typer.Option(help="Comma-separated node names or globs (gpu-*) that must be GPU nodes.")
    ] = None,
    expect_gpus: Annotated[
        OptStr, typer.Option(help="GPUs per node: N, or NAME=N,GLOB=N, or @FILE (YAML mapping).")
    ] = None,
    allow_empty: Annotated[
        bool, typer.Option("--allow-empty", help="A cluster without any GPU node passes.")
    ] = False,
    namespace: Annotated[
        str,
        typer.Option(
            "--namespace",
            "-n",
            help="Namespace of the verification pods (created if absent, PSS restricted).",
        ),
    ] = GPUCTL_NAMESPACE,
    image: Annotated[
        str,
        typer.Option(help="Image of the verification pods (nvidia-smi is injected by the NVIDIA runtime)."),
    ] = VERIFY_IMAGE,
    image_pull_secret: Annotated[OptStr, typer.Option(help="imagePullSecret for --image.")] = None,
    runtime_class: Annotated[
        OptStr, typer.Option(help="runtimeClassName of the verification pods (e.g. nvidia).")
    ] = None,
    toleration: Annotated[
        OptList,
        typer.Option(
            help="Extra toleration KEY[=VALUE][:EFFECT] (repeatable); GPU taints are tolerated already."
        ),
    ] = None,
    timeout: Annotated[
        float, number_option(WAIT_TIMEOUT, "Seconds to wait for all verification pods.")
    ] = 300.0,
    concurrency: Annotated[int, number_option(CONCURRENCY, "Parallel API requests.", "N")] = 32,
    keep_pods: Annotated[
        bool, typer.Option("--keep-pods", help="Leave the verification pods for debugging.")
    ] = False,
    no_pods: Annotated[bool, typer.Option("--no-pods", help="Read-only checks only; create no pod.")] = False,
    level: LevelOption = Level.smi,
    cuda_image: CudaImageOption = CUDA_SAMPLE_IMAGE,
    nccl_image: NcclImageOption = NCCL_TESTS_IMAGE,
    min_busbw: MinBusbwOption = None,
    fabric_resource: FabricResourceOption = None,
    fabric_host_network: FabricHostNetworkOption = False,
    fabric_ipc_lock: FabricIpcLockOption = False,
    report_file: ReportOption = None,
    watch: Annotated[
        bool,
        typer.Option("--watch", "-w", help="Verify again every --interval and print only what changed."),
    ] = False,
    interval: Annotated[float, number_option(WATCH_INTERVAL, "Seconds between --watch runs.")] = 300.0,
    gate: Annotated[
        bool,
        typer.Option(
            "--gate",
            help="Taint the GPU nodes that fail at --level gpuctl.io/unproven=LEVEL:NoSchedule, "
            "untaint those that pass (every round with --watch); publish the node condition "
            "GPUProven on each; on DRA nodes keep a GPU that fails alone out by a DeviceTaintRule.",
        ),
    ] = False,
    metrics_addr: MetricsAddrOption = None,
    pushgateway: PushgatewayOption = None,
    pushgateway_ca: PushgatewayCaOption = None,
    gate_taint: GateTaintOption = GATE_TAINT_KEY,
    gate_mode: GateModeOption = "taint",
    gate_condition: GateConditionOption = GATE_CONDITION_TYPE,
) -> None:
    from gpuctl.cli.signals import interruptible
    from gpuctl.kube.client import load_api_client
    from gpuctl.report import verify as report

    refuse_inapplicable_flags("verify")
    check_round_outputs(metrics_addr, pushgateway, pushgateway_ca)
    options = _options(
        expect_nodes=expect_nodes,
        expect_gpus=expect_gpus,
        namespace=namespace,
        image=image,
        image_pull_secret=image_pull_secret,
        runtime_class=runtime_class,
        timeout=timeout,
        keep_pods=keep_pods,
        concurrency=concurrency,
        no_pods=no_pods,
        allow_empty=allow_empty,
        toleration=toleration or [],
        proof=proof_options(
            level,
            cuda_image,
            nccl_image,
            min_busbw,
            fabric=(fabric_resource or [], fabric_host_network, fabric_ipc_lock),
        ),
    )
    gating = gate_options(gate, gate_taint, gate_mode, gate_condition)
    options = with_gate_toleration(options, gating)
    api_client = load_api_client(kubeconfig, context)
    check_report_file(report_file, _inputs(kubeconfig, expect_gpus, pushgateway_ca))
    with round_outputs(
        metrics_addr=metrics_addr,
        pushgateway=pushgateway,
        pushgateway_ca=pushgateway_ca,
        report_file=report_file,
        context=context,
    ) as outputs:
        if watch:
            _watch(api_client, options, output, interval, gating, outputs=outputs)
        with interruptible(_interrupted_cleanup(options)), _progress() as progress:
            result = _verified(api_client, options, gating, progress)
        if result.kept_pods and output not in (Output.table, Output.wide):
            sys.stderr.write(report.kept_pods_note(result) + "\n")  # stdout holds the document
        outputs.record(result)
        try:
            emit_verify(result, output, report_file=report_file, context=context)
        finally:  # a failed run is pushed too (after its report): a push that fails then exits 3
            outputs.push()
            _raise_gate_refusal(result)


def _inputs(kubeconfig: Path | None, expect_gpus: str | None, pushgateway_ca: str | None) -> list[Input]:
    """The files this run reads, which its --report must not be."""
    from gpuctl.kube.client import kubeconfig_inputs

    expectations = [expect_gpus[1:]] if expect_gpus and expect_gpus.startswith("@") else []
    return [
        *kubeconfig_inputs(kubeconfig),
        *inputs("--expect-gpus file", expectations),
        *inputs("--pushgateway-ca", [pushgateway_ca]),
    ]


def _verified(
    api_client: Any, options: VerifyOptions, gate: GateOptions | None, progress: PodProgress | None = None
) -> VerifyResult:
    """One run of gpuctl.core.proof.prove: verify, each GPU node's verdict and, with --gate, the
    gate. A refused gate write (no `patch nodes`) ends the command with exit 3, after the report."""
    from gpuctl.core.proof.prove import prove

    return prove(api_client, options=options, gate=gate, progress=progress).result


def _raise_gate_refusal(result: VerifyResult) -> None:
    """--gate whose write the API server refused: that error (exit 3), now that the report is out."""
    refusal = result.gate.refusal() if result.gate is not None else None
    if refusal is not None:
        raise refusal


def _watch(
    api_client: Any,
    options: VerifyOptions,
    output: Output,
    interval: float,
    gate: GateOptions | None,
    *,
    outputs: RoundOutputs,
) -> None:
    """Verify now, print the result, then every `interval` print only what changed; Ctrl-C or
    SIGTERM ends it (exit 130, pods cleaned up). With -o json each line is one JSON document
    (NDJSON), from the first run on. When standard output's reader leaves (`| head`), the watch
    ends with its last run's exit status. After each run the metrics, the Pushgateway and the
    --report page get its result (`outputs`)."""
    from gpuctl.cli.output import exit_with, print_result
    from gpuctl.cli.signals import interruptible
    from gpuctl.cli.stdout_guard import sleep_while_read
    from gpuctl.core.verify.watch import changes
    from gpuctl.report import verify as report
    from gpuctl.report.console import make_console

    console = make_console()
    with interruptible("stopped watching; " + _interrupted_cleanup(options)):
        previous = _verified(api_client, options, gate)
        outputs.publish(previous)
        if output.value == "json":  # the first run is a change from nothing: every node is new
            nothing = dataclasses.replace(previous, nodes=(), cluster_checks=())
            _json_line(report.change_json(changes(nothing, previous), _now(), previous))
        else:
            print_result(previous, output, report)
        sys.stdout.flush()
        _raise_gate_refusal(previous)
        while sleep_while_read(interval):
            current = _verified(api_client, options, gate)
            outputs.publish(current)
            found = changes(previous, current)
            if found and output.value == "json":
                _json_line(report.change_json(found, _now(), current))
            elif found:
                report.print_changes(found, _now(), console)
            sys.stdout.flush()
            previous = current
            _raise_gate_refusal(current)
    exit_with(previous.exit_code)


def _json_line(document: dict[str, Any]) -> None:
    """One NDJSON line: the whole document on it, nothing else."""
    sys.stdout.write(json.dumps(document, separators=(",", ":")) + "\n")


def _now() -> str:
    from datetime import datetime

    return datetime.now(tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@contextlib.contextmanager
def _progress() -> Iterator[PodProgress | None]:
    """Live progress on stderr when it is a terminal; nothing at all when it is not."""
    if not sys.stderr.isatty():
        yield None
        return
    from gpuctl.report.console import make_console
    from gpuctl.report.verify_progress import live_progress

    with live_progress(make_console(stderr=True)) as progress:
        yield progress


def _interrupted_cleanup(options: VerifyOptions) -> str:
    if not options.keep_pods:
        return "verification pods deleted"
    remove = command_line(
        "kubectl", "-n", options.namespace, "delete", "pods", "-l", VERIFICATION_PODS_SELECTOR
    )
    return f"verification pods kept (--keep-pods); remove them with `{remove}`"
