"""The manifests gpuctl would apply for the cluster layer, rendered from templates/."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gpuctl.core.render_options import DEFAULT_VERIFY_SCHEDULE, RbacSubject, RenderedFile, RenderOptions
from gpuctl.core.stacks.registry import STACKS, stack_for
from gpuctl.defaults import (
    DEVICE_PLUGIN_IMAGE,
    DEVICE_PLUGIN_NAMESPACE,
    GATE_CONDITION_TYPE,
    GATE_TAINT_KEY,
    GPU_TAINT_KEY,
    GPUCTL_NAMESPACE,
    READINESS_RULE_API,
    READINESS_TAINT_PREFIX,
    RUNTIME_CLASS,
)
from gpuctl.errors import ConfigError, ExitCode
from gpuctl.kube.nodes import GFD_PRESENT_LABEL as GPU_PRESENT_LABEL
from gpuctl.kube.nodes import TAINT_EFFECTS
from gpuctl.names import qualified_name_problem
from gpuctl.output_paths import stage_output
from gpuctl.templating import render_template
from gpuctl.validation import (
    check,
    cron_problem,
    dns_label_problem,
    dns_subdomain_problem,
    image_problem,
    label_key_problem,
    label_value_problem,
    subject_name_problem,
)

MIG_STRATEGIES = ("none", "single", "mixed")
SHARING_MODES = ("none", "time-slicing", "mps")
SUBJECT_KINDS = ("ServiceAccount", "User", "Group")
MAX_REPLICAS = 1024
# NVIDIA's MPS control daemon refuses more clients per GPU than an MPS server takes: 48 on Volta
# and newer, 16 before (cmd/mps-control-daemon/mps/device.go of k8s-device-plugin).
MAX_MPS_REPLICAS = 48
# Kubernetes minor versions whose schemas every rendered manifest is validated against (tests).
SUPPORTED_KUBERNETES_VERSIONS = ("1.29", "1.30", "1.31", "1.32", "1.33")
# The first of them serving admissionregistration.k8s.io/v1 ValidatingAdmissionPolicies, which
# fence the node writes of verify's and taint's accounts (on 1.29 that one object is refused).
POLICIES_SINCE = "1.30"

# Namespaces every cluster has: refused as the verification namespace, where gpuctl's accounts,
# its pods' Pod Security labels ("restricted") and its pods would share a namespace with the
# cluster's own components (and their rights).
BUILTIN_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
# The commands `render --rbac` renders a role for, each bound to its own ServiceAccount.
RBAC_COMMANDS = ("verify", "taint", "status", "upgrade")
# The accounts whose node patches an admission policy fences (RBAC grants `patch nodes` whole).
NODE_POLICY_COMMANDS = ("verify", "taint")
VERIFY_CRONJOB_TIMEOUT_S = 300
VERIFY_WATCH_INTERVAL_S = 300  # the verify Deployment's --interval
VERIFY_METRICS_PORT = 9400  # its --metrics-addr port, the Service's and the ServiceMonitor's
MigStrategy = Literal["none", "single", "mixed"]
Sharing = Literal["none", "time-slicing", "mps"]


@dataclass(frozen=True)
class RenderResult:
    files: tuple[RenderedFile, ...]
    exit_code: ExitCode = ExitCode.OK  # bad options raise ConfigError before anything is rendered

    def as_stream(self) -> str:
        """All files as one multi-document YAML stream (each document starts with `---`).

        Helm values and Kubernetes objects do not belong in one stream (`kubectl apply -f -`
        would choke on the values): that combination needs one file each.
        """
        if len({rendered.helm_values for rendered in self.files}) > 1:
            raise ConfigError(
                "cannot print Helm values and Kubernetes manifests as one YAML stream",
                hint="write one file each with `gpuctl render --gpu-operator --rbac --out DIR`",
            )
        return "".join(f"---\n{rendered.content}" for rendered in self.files)


def _validate(options: RenderOptions) -> None:
    _validate_names(options)
    problem = qualified_name_problem(options.taint_key)
    if problem:
        raise ConfigError(
            f"--taint-key {options.taint_key!r}: {problem}", hint=f"e.g. --taint-key {GPU_TAINT_KEY}"
        )
    if options.taint_effect not in TAINT_EFFECTS:
        raise ConfigError(
            f"--taint-effect {options.taint_effect!r}: must be one of {', '.join(TAINT_EFFECTS)}",
            hint="e.g. --taint-effect NoSchedule",
        )
    if options.mig_strategy not in MIG_STRATEGIES:
        raise ConfigError(
            f"--mig-strategy {options.mig_strategy}: must be one of {', '.join(MIG_STRATEGIES)}",
            hint="run `gpuctl render --help`",
        )
    if options.sharing not in SHARING_MODES:
        raise ConfigError(
            f"--sharing {options.sharing}: must be one of {', '.join(SHARING_MODES)}",
            hint="run `gpuctl render --help`",
        )
    if options.sharing != "none" and not 2 <= options.replicas <= MAX_REPLICAS:
        raise ConfigError(
            f"--replicas {options.replicas}: must be between 2 and {MAX_REPLICAS} to share a GPU",
            hint="e.g. `gpuctl render --sharing time-slicing --replicas 4`",
        )
    _validate_mps(options)
    _validate_subject(options.rbac_subject)


def _validate_names(options: RenderOptions) -> None:
    """The names, labels and images that reach the manifests, refused as the API server or the
    container runtime would refuse them, but before anything is printed or written."""
    check("--namespace", options.namespace, dns_label_problem, DEVICE_PLUGIN_NAMESPACE)
    check("--runtime-class", options.runtime_class, dns_label_problem, RUNTIME_CLASS)
    check("--verify-namespace", options.verify_namespace, dns_label_problem, GPUCTL_NAMESPACE)
    if options.verify_namespace in BUILTIN_NAMESPACES:
        raise ConfigError(
            f"--verify-namespace {options.verify_namespace}: a namespace every cluster has; gpuctl's "
            'accounts and pods (Pod Security "restricted") need one of their own',
            hint=f"e.g. `gpuctl render --rbac --verify-namespace {GPUCTL_NAMESPACE}`",
        )
    for namespace in options.log_namespaces:
        check("--log-namespace", namespace, dns_label_problem, DEVICE_PLUGIN_NAMESPACE)
    check("--image", options.image, image_problem, DEVICE_PLUGIN_IMAGE)
    _validate_node_selector(options.node_selector)


def _validate_node_selector(pairs: tuple[tuple[str, str], ...]) -> None:
    seen: dict[str, str] = {}
    for key, value in pairs:
        problem = label_key_problem(key) or label_value_problem(value)
        if key in seen:
            problem = f"label key {key!r} given twice ({key}={seen[key]}, {key}={value})"
        if problem:
            raise ConfigError(
                f"--node-selector {f'{key}={value}'!r}: {problem}",
                hint="e.g. --node-selector nvidia.com/gpu.present=true",
            )
        seen[key] = value


def _validate_subject(subject: RbacSubject | None) -> None:
    if subject is None:
        return  # one account per role, named by gpuctl
    example = f"e.g. `gpuctl render --rbac --rbac-subject ServiceAccount:{GPUCTL_NAMESPACE}:gpuctl`"
    if subject.kind not in SUBJECT_KINDS:
        raise ConfigError(
            f"--rbac-subject {subject.kind}: kind must be one of {', '.join(SUBJECT_KINDS)}", hint=example
        )
    text = ":".join(part for part in (subject.kind, subject.namespace, subject.name) if part)
    problem = _subject_problem(subject)
    if problem:
        raise ConfigError(f"--rbac-subject {text!r}: {problem}", hint=example)


def _subject_problem(subject: RbacSubject) -> str:
    """A ServiceAccount lives in a namespace and has an object's name; users and groups are
    whatever the authenticator says."""
    if subject.kind != "ServiceAccount":
        return subject_name_problem(subject.name)
    namespace_problem = dns_label_problem(subject.namespace)
    if namespace_problem:
        return f"namespace {subject.namespace!r}: {namespace_problem}"
    name_problem = dns_subdomain_problem(subject.name)
    return f"name {subject.name!r}: {name_problem}" if name_problem else ""


def _validate_mps(options: RenderOptions) -> None:
    """The combinations NVIDIA's device plugin v0.17 refuses at start-up (or ignores) with MPS."""
    if options.sharing != "mps":
        return
    if options.mig_strategy == "mixed":
        raise ConfigError(
            "--sharing mps --mig-strategy mixed: NVIDIA's device plugin does not support MPS "
            "with the mixed MIG strategy",
            hint="use `gpuctl render --sharing mps --mig-strategy none`, "
            "or `--sharing time-slicing` to keep --mig-strategy mixed",
        )
    if options.replicas > MAX_MPS_REPLICAS:
        raise ConfigError(
            f"--sharing mps --replicas {options.replicas}: an MPS server takes at most "
            f"{MAX_MPS_REPLICAS} clients per GPU (16 before Volta)",
            hint=f"e.g. `gpuctl render --sharing mps --replicas {MAX_MPS_REPLICAS}`",
        )


def plugin_log_namespaces(options: RenderOptions) -> tuple[str, ...]:
    """Where verify may read GPU plugin logs: the namespace of the rendered stack's plugin pods
    (the device plugin's --namespace, or its chart's namespace), then
    --log-namespace. Nowhere else: no cluster-wide pod-log read."""
    stack = stack_for(options.stack).plugin_namespace(options)
    return tuple(dict.fromkeys((stack, *options.log_namespaces)))


def role_account(command: str) -> str:
    """The ServiceAccount (in --verify-namespace) that holds `command`'s role alone."""
    return f"gpuctl-{command}"


def _rbac_variables(options: RenderOptions, command: str, subject: RbacSubject | None) -> dict[str, object]:
    """`command`'s role file's variables: bound to `subject`, or (None) to the command's own
    account, which the verify file renders with the others and an admission policy fences."""
    own = subject is None
    if subject is None:
        subject = RbacSubject("ServiceAccount", role_account(command), options.verify_namespace)
    return {
        "subject_kind": subject.kind,
        "subject_name": subject.name,
        "subject_namespace": subject.namespace,
        "verify_namespace": options.verify_namespace,
        "log_namespaces": plugin_log_namespaces(options),
        "accounts": [role_account(name) for name in RBAC_COMMANDS] if own and command == "verify" else [],
        # verify's file binds verify's roles to the upgrade's account too, beside their namespace
        "upgrade_account": role_account("upgrade") if own and command == "verify" else "",
        "node_policy": own and command in NODE_POLICY_COMMANDS,
        "account": subject.name,
        "username": f"system:serviceaccount:{subject.namespace}:{subject.name}",
        "taint_key": options.gate_taint if command == "verify" else options.taint_key,
        "gpu_nodes_only": command == "verify",
        "condition_type": _gate_condition(options),  # verify's status policy: the condition it writes
    }


def _gate_condition(options: RenderOptions) -> str:
    """The node condition the rendered verify publishes, which verify's status policy lets its
    account write: --gate-condition, or with --readiness-rule the condition the rule waits for."""
    if not options.readiness_rule or options.gate_condition == options.readiness_condition:
        return options.gate_condition
    if options.gate_condition != GATE_CONDITION_TYPE:
        raise ConfigError(
            f"--gate-condition {options.gate_condition!r}: the NodeReadinessRule waits for "
            f"{options.readiness_condition!r}, a condition verify would not write",
            hint=f"give both the same type: --gate-condition {options.gate_condition} "
            f"--readiness-condition {options.gate_condition}",
        )
    return options.readiness_condition


def rbac_files(options: RenderOptions) -> list[RenderedFile]:
    """The least-privilege roles of verify, taint-gpu-nodes, status and the node-by-node upgrade
    (docs/rbac.md): each bound to its own ServiceAccount, or all to --rbac-subject."""
    return [
        RenderedFile(
            f"rbac-{command}.yaml",
            render_template(
                f"rbac-{command}.yaml.j2", **_rbac_variables(options, command, options.rbac_subject)
            ),
        )
        for command in RBAC_COMMANDS
    ]


def _check_gpuctl_image(options: RenderOptions, flag: str) -> None:
    if not options.gpuctl_image.strip() or any(ch.isspace() for ch in options.gpuctl_image):
        raise ConfigError(
            f"{flag} needs --gpuctl-image: the image that holds gpuctl",
            hint="build one from this repository (`pip install .` on a Python base image) and pass "
            "`--gpuctl-image REGISTRY/gpuctl:TAG`",
        )
    check("--gpuctl-image", options.gpuctl_image, image_problem, "REGISTRY/gpuctl:TAG")


def _verify_role(options: RenderOptions) -> str:
    """gpuctl's verify role (with the gate's rights and the policy that fences them), bound to
    verify's own account, which the in-cluster verify runs as (its file renders the account)."""
    variables = _rbac_variables(options, "verify", None)
    return render_template("rbac-verify.yaml.j2", **{**variables, "accounts": [], "upgrade_account": ""})


def verify_cronjob_files(options: RenderOptions) -> list[RenderedFile]:
    """The CronJob that keeps proving the GPUs, its namespace and ServiceAccount, and the verify
    role bound to that ServiceAccount."""
    _check_gpuctl_image(options, "--verify-cronjob")
    check("--verify-schedule", options.verify_schedule, cron_problem, f"'{DEFAULT_VERIFY_SCHEDULE}'")
    cronjob = render_template(
        "verify-cronjob.yaml.j2",
        namespace=options.verify_namespace,
        service_account=role_account("verify"),
        schedule=options.verify_schedule,
        image=options.gpuctl_image,
        timeout_seconds=VERIFY_CRONJOB_TIMEOUT_S,
        deadline_seconds=VERIFY_CRONJOB_TIMEOUT_S + 120,
        gate_args=_gate_args(options),
    )
    return [
        RenderedFile("verify-cronjob.yaml", cronjob),
        RenderedFile("verify-cronjob-rbac.yaml", _verify_role(options)),
    ]


def _gate_args(options: RenderOptions) -> list[str]:
    """The in-cluster verify's gate flags beyond --gate: a --gate-taint or --gate-condition other
    than the default (what its rendered admission policies allow), and with --readiness-rule only
    the condition the rule waits for: the Node Readiness Controller owns the taint (`verify --gate
    --gate-mode condition`), and the controller's taint as --gate-taint, which in that mode verify
    writes nothing under but tolerates, so that a node the controller keeps out is proven again and
    let back. The defaults add nothing, so that their output stays as it was."""
    args = [] if options.gate_taint == GATE_TAINT_KEY else ["--gate-taint", options.gate_taint]
    condition = _gate_condition(options)
    if options.readiness_rule:
        tolerated = ["--gate-taint", options.readiness_taint]
        return [*tolerated, "--gate-mode", "condition", "--gate-condition", condition]
    if condition != GATE_CONDITION_TYPE:
        return [*args, "--gate-condition", condition]
    return args


def verify_deployment_files(options: RenderOptions) -> list[RenderedFile]:
    """`verify --watch --metrics-addr` kept running by a Deployment, its metrics Service, its
    namespace and ServiceAccount with the verify role, and with --service-monitor the
    prometheus-operator ServiceMonitor that scrapes it (docs/metrics.md)."""
    if options.verify_cronjob:
        raise ConfigError(
            "--verify-cronjob and --verify-deployment: pick one; both would verify and gate the same nodes",
            hint="`gpuctl render --verify-deployment --service-monitor --gpuctl-image REGISTRY/gpuctl:TAG`",
        )
    _check_gpuctl_image(options, "--verify-deployment")
    variables = {"namespace": options.verify_namespace, "metrics_port": VERIFY_METRICS_PORT}
    deployment = render_template(
        "verify-deployment.yaml.j2",
        **variables,
        service_account=role_account("verify"),
        image=options.gpuctl_image,
        timeout_seconds=VERIFY_CRONJOB_TIMEOUT_S,
        interval_seconds=VERIFY_WATCH_INTERVAL_S,
        gate_args=_gate_args(options),
    )
    files = [
        RenderedFile("verify-deployment.yaml", deployment),
        RenderedFile("verify-deployment-rbac.yaml", _verify_role(options)),
    ]
    if options.service_monitor:
        monitor = render_template("verify-servicemonitor.yaml.j2", **variables)
        files.append(RenderedFile("verify-servicemonitor.yaml", monitor))
    return files


def readiness_rule_files(options: RenderOptions) -> list[RenderedFile]:
    """A NodeReadinessRule (readiness.node.x-k8s.io) that has the Node Readiness Controller own
    the GPU gate taint from verify's node condition (`verify --gate --gate-mode condition`)."""
    key = options.readiness_taint
    problem = qualified_name_problem(key)
    if not key.startswith(READINESS_TAINT_PREFIX) or problem or key.count("/") != 1:
        raise ConfigError(
            f"--readiness-taint {key!r}: "
            + (problem or f"the Node Readiness Controller only manages keys under {READINESS_TAINT_PREFIX}"),
            hint=f"e.g. --readiness-taint {READINESS_TAINT_PREFIX}gpu-proven",
        )
    problem = qualified_name_problem(options.readiness_condition)
    if problem:
        raise ConfigError(
            f"--readiness-condition {options.readiness_condition!r}: {problem}",
            hint=f"e.g. --readiness-condition {GATE_CONDITION_TYPE} (what `verify --gate` publishes)",
        )
    rule = render_template(
        "node-readiness-rule.yaml.j2",
        api_version=READINESS_RULE_API,
        rule_name="gpuctl-gpu-proven",
        condition_type=options.readiness_condition,
        taint_key=key,
        node_label=GPU_PRESENT_LABEL,
    )
    return [RenderedFile("node-readiness-rule.yaml", rule)]


def render_stack(options: RenderOptions) -> list[RenderedFile]:
    """The files of the chosen stack alone, its options checked first: the static device plugin
    (+ sharing config, + the MPS control daemon for MPS) and RuntimeClass, or the Helm values of
    a chart stack's chart (which then create them)."""
    _validate(options)
    return stack_for(options.stack).render(options)


def render_manifests(options: RenderOptions) -> RenderResult:
    """Render the cluster layer: the stack's files (render_stack), then with --rbac gpuctl's
    roles and with --verify-cronjob the CronJob that keeps proving the GPUs."""
    files = render_stack(options)
    if options.rbac:
        files.extend(rbac_files(options))
    if options.verify_cronjob:
        files.extend(verify_cronjob_files(options))
    if options.verify_deployment:
        files.extend(verify_deployment_files(options))
    if options.readiness_rule:
        files.extend(readiness_rule_files(options))
    return RenderResult(files=tuple(files))


def parse_rbac_subject(text: str) -> RbacSubject | None:
    """`KIND:NAMESPACE:NAME` for a ServiceAccount, `KIND:NAME` for a User or Group (whose names may
    hold colons themselves: `Group:system:masters`); "" (not given): None, one account per role."""
    if not text:
        return None
    kind, _, rest = text.partition(":")
    parts = rest.split(":")
    if kind == "ServiceAccount" and len(parts) == 2 and all(parts):
        return RbacSubject(kind=kind, namespace=parts[0], name=parts[1])
    if kind in ("User", "Group") and rest:
        return RbacSubject(kind=kind, name=rest, namespace="")
    raise ConfigError(
        f"--rbac-subject {text}: expected ServiceAccount:NAMESPACE:NAME, User:NAME or Group:NAME",
        hint=f"e.g. `gpuctl render --rbac --rbac-subject ServiceAccount:{GPUCTL_NAMESPACE}:gpuctl`",
    )


_OWN_NAMES = (
    *(name for stack in STACKS.values() for name in stack.own_files),
    "rbac-verify.yaml",
    "rbac-taint.yaml",
    "rbac-status.yaml",
    "rbac-upgrade.yaml",
    "verify-cronjob.yaml",
    "verify-cronjob-rbac.yaml",
    "verify-deployment.yaml",
    "verify-deployment-rbac.yaml",
    "verify-servicemonitor.yaml",
)
_MANAGED_BY_GPUCTL = "app.kubernetes.io/managed-by: gpuctl"


def _earlier_render(directory: Path) -> set[str]:
    """The files an earlier render left in `directory`: gpuctl's fixed file names, and RuntimeClass
    files (named after --runtime-class) that carry gpuctl's managed-by label. Anything else in the
    folder (a kustomization.yaml, the user's own manifests) is not gpuctl's and stays."""
    own = {path.name for path in directory.glob("*.yaml") if path.name in _OWN_NAMES}
    runtime_classes = {
        path.name
        for path in directory.glob("runtimeclass-*.yaml")
        if _MANAGED_BY_GPUCTL in path.read_text(encoding="utf-8", errors="replace")
    }
    return own | runtime_classes


def write_rendered(result: RenderResult, directory: Path) -> tuple[list[Path], list[Path]]:
    """Write one file per rendered manifest under `directory` (created if absent) and remove the
    files of an earlier render that this one does not produce (a GitOps sync would keep applying
    them): gpuctl's files there are exactly this render. Returns (written, removed).

    All or nothing: every file is written beside its target first and renamed over it only once
    all were written, so a full disk or an unwritable file leaves the folder as it was."""
    staged: list[tuple[Path, Path]] = []
    try:
        directory.mkdir(parents=True, exist_ok=True)
        stale = _earlier_render(directory) - {rendered.filename for rendered in result.files}
        for rendered in result.files:
            target = directory / rendered.filename
            if target.is_dir():
                raise IsADirectoryError(21, "is a folder", str(target))
            staged.append((stage_output(target, rendered.content), target))
        for temporary, target in staged:
            temporary.replace(target)
        removed = [directory / name for name in sorted(stale)]
        for path in removed:
            path.unlink()
    except OSError as error:
        for temporary, _ in staged:
            with contextlib.suppress(OSError):
                temporary.unlink()
        where = f" {error.filename}" if error.filename and error.filename != str(directory) else ""
        raise ConfigError(
            f"--out {directory}: cannot write{where}: {error.strerror or error}",
            hint="pick a writable folder, e.g. `gpuctl render --out ./manifests`",
        ) from error
    return [target for _, target in staged], removed
