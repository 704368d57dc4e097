"""`gpuctl render`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from gpuctl.cli.flag_rules import refuse_inapplicable_flags
from gpuctl.cli.options import (
    MigStrategy,
    MigStrategyOption,
    ReplicasOption,
    Sharing,
    SharingOption,
)
from gpuctl.cli.stack_options import (
    DEFAULT_CHART,
    DEFAULT_CHART_VERSION,
    ChartVersionOption,
    Distribution,
    DistributionOption,
    OperatorDriverOption,
    OperatorToolkitOption,
    Stack,
    StackOption,
    dra_settings,
)
from gpuctl.cli.verify_gate_options import gate_options
from gpuctl.core.stacks import DEFAULT_STACK
from gpuctl.defaults import (
    DEFAULT_READINESS_TAINT,
    DEVICE_PLUGIN_IMAGE,
    DEVICE_PLUGIN_NAMESPACE,
    DEVICE_PLUGIN_VERSION,
    GATE_CONDITION_TYPE,
    GATE_TAINT_KEY,
    GPU_TAINT_EFFECT,
    GPU_TAINT_KEY,
    GPUCTL_NAMESPACE,
    RUNTIME_CLASS,
)
from gpuctl.errors import ConfigError

HELP = """\
Print the manifests gpuctl would apply for the cluster layer (for GitOps): the NVIDIA
device plugin DaemonSet (optional time-slicing/MPS ConfigMap, MIG strategy; with MPS, also
NVIDIA's MPS control daemon) and the RuntimeClass `nvidia`; or, with --stack operator (alias
--gpu-operator), the Helm values `gpuctl bootstrap --stack operator` installs the NVIDIA GPU
Operator with; with --rbac, the least-privilege roles of verify,
taint-gpu-nodes, status and the node-by-node upgrade, each bound to its own ServiceAccount
(verify's and taint's node writes fenced by an admission policy). Multi-document YAML on
stdout, or one file per manifest with --out DIR. Every value is checked as the API server, the
container runtime and helm would check it before anything is printed or written; a flag the
chosen stack does not use is refused.
"""


def _node_selector(pairs: list[str]) -> tuple[tuple[str, str], ...]:
    """KEY=VALUE pairs (the label rules are checked with the rest of the manifests' values)."""
    selector = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(
                f"--node-selector {pair!r}: expected KEY=VALUE",
                hint="e.g. --node-selector nvidia.com/gpu.present=true",
            )
        selector.append((key, value))
    return tuple(selector)


def command(
    *,
    out: Annotated[
        Optional[str],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
        typer.Option(
            "--out",
            help="Write one file per manifest into this folder (all of them or none).",
            show_default=False,
            metavar="DIR",
        ),
    ] = None,
    namespace: Annotated[
        str, typer.Option("--namespace", "-n", help="Device plugin namespace.")
    ] = DEVICE_PLUGIN_NAMESPACE,
    image: Annotated[
        Optional[str],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
        typer.Option(
            "--image",
            help=f"Device plugin image (default: NVIDIA's {DEVICE_PLUGIN_VERSION}).",
            show_default=False,
        ),
    ] = None,
    mig_strategy: MigStrategyOption = MigStrategy.none,
    sharing: SharingOption = Sharing.none,
    replicas: ReplicasOption = 2,
    taint_key: Annotated[str, typer.Option("--taint-key", help="GPU taint key to tolerate.")] = GPU_TAINT_KEY,
    taint_effect: Annotated[
        str, typer.Option("--taint-effect", help="GPU taint effect to tolerate.")
    ] = GPU_TAINT_EFFECT,
    runtime_class: Annotated[str, typer.Option("--runtime-class", help="RuntimeClass name.")] = RUNTIME_CLASS,
    node_selector: Annotated[
        Optional[list[str]],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
        typer.Option(
            "--node-selector", help="KEY=VALUE to pin the device plugin (repeatable).", show_default=False
        ),
    ] = None,
    gpu_operator: Annotated[bool, typer.Option("--gpu-operator", help="Same as --stack operator.")] = False,
    stack: StackOption = DEFAULT_STACK,
    distribution: DistributionOption = Distribution.auto,
    operator_driver: OperatorDriverOption = False,
    operator_toolkit: OperatorToolkitOption = False,
    chart_version: ChartVersionOption = DEFAULT_CHART_VERSION,
    rbac: Annotated[bool, typer.Option("--rbac", help="Also render the gpuctl RBAC roles.")] = False,
    rbac_subject: Annotated[
        str,
        typer.Option(
            "--rbac-subject",
            help="Bind every role to this one subject: ServiceAccount:NAMESPACE:NAME, User:NAME or "
            "Group:NAME (default: each role to its own ServiceAccount gpuctl-ROLE in --verify-namespace).",
            show_default=False,
        ),
    ] = "",
    verify_namespace: Annotated[
        str,
        typer.Option(
            "--verify-namespace",
            help="Namespace of the verification pods and gpuctl's accounts (RBAC); not one every "
            "cluster has (kube-system, default, ...).",
        ),
    ] = GPUCTL_NAMESPACE,
    log_namespace: Annotated[
        Optional[list[str]],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
        typer.Option(
            "--log-namespace",
            help="Also let verify read GPU plugin logs in this namespace (RBAC; repeatable). "
            "The stack's own namespace is always included.",
            show_default=False,
        ),
    ] = None,
    verify_cronjob: Annotated[
        bool,
        typer.Option(
            "--verify-cronjob",
            help="Also render a CronJob running `gpuctl verify --output json` in the cluster "
            "(namespace --verify-namespace, its ServiceAccount and least-privilege role).",
        ),
    ] = False,
    verify_schedule: Annotated[
        str, typer.Option("--verify-schedule", help="Cron schedule of --verify-cronjob.")
    ] = "*/30 * * * *",
    gpuctl_image: Annotated[
        str,
        typer.Option(
            "--gpuctl-image", help="Image holding gpuctl, for --verify-cronjob or --verify-deployment."
        ),
    ] = "",
    verify_deployment: Annotated[
        bool,
        typer.Option(
            "--verify-deployment",
            help="Instead of --verify-cronjob: a Deployment running `gpuctl verify --watch --metrics-addr "
            ":9400 --gate` with a Service for its Prometheus metrics (namespace --verify-namespace, its "
            "ServiceAccount and least-privilege role).",
        ),
    ] = False,
    service_monitor: Annotated[
        bool,
        typer.Option(
            "--service-monitor",
            help="With --verify-deployment: also a ServiceMonitor (prometheus-operator's "
            "monitoring.coreos.com/v1) that scrapes it.",
        ),
    ] = False,
    readiness_rule: Annotated[
        bool,
        typer.Option(
            "--readiness-rule",
            help="Also a NodeReadinessRule (readiness.node.x-k8s.io, the Node Readiness Controller) "
            "that taints GPU nodes until verify's node condition is True (verify --gate --gate-mode "
            "condition).",
        ),
    ] = False,
    readiness_taint: Annotated[
        str,
        typer.Option("--readiness-taint", metavar="KEY", help="The taint key of --readiness-rule."),
    ] = DEFAULT_READINESS_TAINT,
    readiness_condition: Annotated[
        str,
        typer.Option(
            "--readiness-condition", metavar="TYPE", help="The node condition --readiness-rule waits for."
        ),
    ] = GATE_CONDITION_TYPE,
    gate_taint: Annotated[
        str,
        typer.Option(
            "--gate-taint",
            metavar="KEY",
            help="The taint the in-cluster verify gates with (its --gate-taint), which verify's "
            "admission policy lets its account set (e.g. readiness.k8s.io/gpu-proven).",
        ),
    ] = GATE_TAINT_KEY,
    gate_condition: Annotated[
        str,
        typer.Option(
            "--gate-condition",
            metavar="TYPE",
            help="The node condition the in-cluster verify publishes (its --gate-condition), the one "
            "verify's status policy lets its account write.",
        ),
    ] = GATE_CONDITION_TYPE,
) -> None:
    from gpuctl.core.render import (
        parse_rbac_subject,
        render_manifests,
        write_rendered,
    )
    from gpuctl.core.render_options import RenderOptions
    from gpuctl.core.stacks.settings import OperatorSettings

    refuse_inapplicable_flags("render")
    # verify's own checks of the two values, so that render allows what verify --gate takes
    gate_options(True, gate_taint, "taint", gate_condition)
    # Rendered for the host layer's hosts: it installs the driver and toolkit, unless told otherwise.
    operator = OperatorSettings(
        driver_enabled=operator_driver,
        toolkit_enabled=operator_toolkit,
        distribution="standard" if distribution is Distribution.auto else distribution.value,
        chart_version=chart_version,
    )
    options = RenderOptions(
        namespace=namespace,
        image=DEVICE_PLUGIN_IMAGE if image is None else image,
        mig_strategy=mig_strategy.value,
        sharing=sharing.value,
        replicas=replicas,
        taint_key=taint_key,
        taint_effect=taint_effect,
        runtime_class=runtime_class,
        stack=Stack.OPERATOR if gpu_operator else stack,
        dra=dra_settings(DEFAULT_CHART, chart_version),
        operator=operator,
        rbac=rbac,
        rbac_subject=parse_rbac_subject(rbac_subject),
        verify_namespace=verify_namespace,
        log_namespaces=tuple(log_namespace or ()),
        node_selector=_node_selector(node_selector or []),
        verify_cronjob=verify_cronjob,
        verify_schedule=verify_schedule,
        gpuctl_image=gpuctl_image,
        verify_deployment=verify_deployment,
        service_monitor=service_monitor,
        readiness_rule=readiness_rule,
        readiness_taint=readiness_taint,
        readiness_condition=readiness_condition,
        gate_taint=gate_taint,
        gate_condition=gate_condition,
    )
    result = render_manifests(options)
    if out is None:
        typer.echo(result.as_stream(), nl=False)
        return
    written, removed = write_rendered(result, Path(out))
    for path in written:
        typer.echo(f"wrote {path}")
    for path in removed:
        typer.echo(f"removed {path} (an earlier render's, not part of this one)")
