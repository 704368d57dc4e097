"""The bad inputs of tests/bad_inputs.py, grouped by what they get wrong. Placeholders: {dir} the
case's folder, {kc} a running simulated cluster's kubeconfig, {port} its port."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Case:
    """One bad input: the command line, the files it reads, the environment, what must come back."""

    name: str
    argv: tuple[str, ...]
    code: int
    names: str  # the offending file, field, flag, host or variable, as the error line must say it
    files: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)


def case(  # noqa: PLR0917 - a table row reads best positionally
    name: str,
    argv: str,
    code: int,
    names: str,
    files: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
) -> Case:
    return Case(name, tuple(shlex.split(argv)), code, names, files or {}, env or {})


def kubeconfig(
    server: str = "http://127.0.0.1:{port}",
    user: str = "{token: x}",
    current: str = "current-context: c\n",
    context: str = "{cluster: c, user: u}",
) -> str:
    return (
        f"apiVersion: v1\nkind: Config\n{current}"
        f"clusters: [{{name: c, cluster: {{server: '{server}'}}}}]\n"
        f"contexts: [{{name: c, context: {context}}}]\nusers: [{{name: u, user: {user}}}]\n"
    )


def _usage() -> list[Case]:
    """Commands, flags and values Typer itself refuses."""
    return [
        case("unknown-command", "frobnicate", 2, "frobnicate"),
        case("unknown-global-flag", "--frob status", 2, "--frob"),
        case("unknown-flag", "status --frob", 2, "--frob"),
        case("misspelt-flag", "verify --timout 3", 2, "--timout"),
        case("output-choice", "status -o xml", 2, "'-o'"),
        case("output-junit-on-status", "status -o junit", 2, "'-o'"),
        case("output-ctrf-on-status", "status -o ctrf", 2, "'-o'"),
        case("output-missing-value", "status -o", 2, "-o"),
        case("extra-argument", "status extra", 2, "extra"),
        case("completion-shell", "completion tcsh", 2, "tcsh"),
        case("sim-unknown-subcommand", "sim sideways", 2, "sideways"),
    ]


def _render() -> list[Case]:
    return [
        case("render-namespace", "render --namespace Bad_NS", 2, "--namespace 'Bad_NS'"),
        case("render-namespace-empty", "render -n ''", 2, "--namespace"),
        case("render-runtime-class", "render --runtime-class NVIDIA", 2, "--runtime-class 'NVIDIA'"),
        case("render-verify-namespace", "render --rbac --verify-namespace a.b", 2, "--verify-namespace"),
        case("render-replicas-alone", "render --replicas 4", 2, "--replicas"),
        case("render-replicas-sharing-none", "render --sharing none --replicas 4", 2, "--replicas"),
        case("render-replicas-zero", "render --sharing time-slicing --replicas 0", 2, "--replicas"),
        case("render-replicas-text", "render --sharing mps --replicas two", 2, "--replicas"),
        case("render-sharing-choice", "render --sharing always", 2, "--sharing"),
        case("render-mig-choice", "render --mig-strategy both", 2, "--mig-strategy"),
        case("render-subject-without-rbac", "render --rbac-subject User:bob", 2, "--rbac-subject"),
        case("render-subject-kind", "render --rbac --rbac-subject Robot:x", 2, "--rbac-subject"),
        case("render-image-empty", "render --image ''", 2, "--image"),
        case("render-image-spaces", "render --image nvidia/k8s:v1 latest", 2, "latest"),
        case("render-taint-effect", "render --taint-effect Sometimes", 2, "--taint-effect"),
        case("render-taint-key", "render --taint-key bad/key/x", 2, "--taint-key"),
        case("render-node-selector", "render --node-selector novalue", 2, "--node-selector"),
        case("render-node-selector-key", "render --node-selector =x", 2, "--node-selector"),
        case(
            "render-schedule",
            "render --verify-cronjob --gpuctl-image r/gpuctl:1 --verify-schedule hourly",
            2,
            "--verify-schedule",
        ),
        case("render-cronjob-without-image", "render --verify-cronjob", 2, "--gpuctl-image"),
        case("render-schedule-alone", "render --verify-schedule '0 * * * *'", 2, "--verify-schedule"),
        case("render-gpuctl-image", "render --verify-cronjob --gpuctl-image ''", 2, "--gpuctl-image"),
        case(
            "render-out-is-a-file",
            "render --out {dir}/file.txt",
            2,
            "{dir}/file.txt",
            files={"file.txt": "not a folder\n"},
        ),
        case(
            "render-out-under-a-file",
            "render --out {dir}/file.txt/manifests",
            2,
            "{dir}/file.txt",
            files={"file.txt": "not a folder\n"},
        ),
    ]


def _verify() -> list[Case]:
    kc = "--kubeconfig {kc}"
    return [
        case("verify-timeout-inf", "verify --timeout inf", 2, "--timeout"),
        case("verify-timeout-negative", "verify --timeout -1", 2, "--timeout"),
        case("verify-timeout-text", "verify --timeout soon", 2, "--timeout"),
        case("verify-concurrency-zero", "verify --concurrency 0", 2, "--concurrency"),
        case("verify-interval-zero", "verify --watch --interval 0", 2, "--interval"),
        case("verify-keep-and-no-pods", "verify --keep-pods --no-pods", 2, "--keep-pods"),
        case("verify-namespace", "verify -n Bad_NS", 2, "--namespace 'Bad_NS'"),
        case("verify-image-empty", "verify --image ''", 2, "--image"),
        case("verify-runtime-class", "verify --runtime-class NVIDIA", 2, "--runtime-class"),
        case("verify-pull-secret", f"verify {kc} --image-pull-secret Bad_Secret", 2, "--image-pull-secret"),
        case("verify-toleration-effect", f"verify {kc} --toleration key:Sometimes", 2, "--toleration"),
        case("verify-toleration-empty", f"verify {kc} --toleration ''", 2, "--toleration"),
        case("verify-expect-gpus-text", f"verify {kc} --expect-gpus eight", 2, "--expect-gpus"),
        case("verify-expect-gpus-pattern", f"verify {kc} --expect-gpus gpu-*=x", 2, "--expect-gpus"),
        case("verify-expect-gpus-negative", f"verify {kc} --expect-gpus -3", 2, "--expect-gpus"),
        case(
            "verify-expect-gpus-file-missing", f"verify {kc} --expect-gpus @{{dir}}/gpus.txt", 2, "gpus.txt"
        ),
        case(
            "verify-expect-gpus-file-bad",
            f"verify {kc} --expect-gpus @{{dir}}/gpus.txt",
            2,
            "gpus.txt",
            files={"gpus.txt": "gpu-0 = many\n"},
        ),
        case("verify-expect-nodes-empty", f"verify {kc} --expect-nodes ,", 2, "--expect-nodes"),
        case("verify-watch-junit", f"verify {kc} --watch -o junit", 2, "--watch"),
        case("verify-watch-ctrf", f"verify {kc} --watch -o ctrf", 2, "--watch"),
        case("verify-watch-html", f"verify {kc} --watch -o html", 2, "--watch"),
        case("verify-metrics-no-watch", f"verify {kc} --metrics-addr :9400", 2, "--metrics-addr"),
        case("verify-metrics-addr-port", f"verify {kc} --watch --metrics-addr gpu:http", 2, "--metrics-addr"),
        case("verify-pushgateway-url", f"verify {kc} --pushgateway pushgateway:9091", 2, "--pushgateway"),
        case("verify-report-folder", f"verify {kc} --report {{dir}}", 2, "--report"),
        case("verify-report-no-folder", f"verify {kc} --report {{dir}}/missing/verify.html", 2, "--report"),
    ]


def _taint() -> list[Case]:
    kc = "--kubeconfig {kc}"
    return [
        case("taint-effect", f"taint-gpu-nodes {kc} --effect Sometimes", 2, "--effect"),
        case("taint-key-spaces", f"taint-gpu-nodes {kc} --key bad key", 2, "key"),
        case("taint-key-invalid", f"taint-gpu-nodes {kc} --key -bad-", 2, "--key"),
        case("taint-key-empty", f"taint-gpu-nodes {kc} --key ''", 2, "--key"),
        case("taint-value-invalid", f"taint-gpu-nodes {kc} --value a/b", 2, "--value"),
        case("taint-selector-syntax", f"taint-gpu-nodes {kc} --selector a=b=c", 2, "--selector"),
        case("taint-selector-and-nodes", f"taint-gpu-nodes {kc} --selector a=b --nodes gpu-0", 2, "--nodes"),
        case("taint-nodes-empty", f"taint-gpu-nodes {kc} --nodes ,", 2, "--nodes"),
        case("taint-unknown-node", f"taint-gpu-nodes {kc} --nodes gpu-9", 2, "gpu-9"),
        case("taint-output-junit", f"taint-gpu-nodes {kc} -o junit", 2, "'-o'"),
    ]


def _kubeconfigs() -> list[Case]:
    """Kubeconfig files, contexts and the KUBECONFIG variable, through `status`."""
    kc = "--kubeconfig {dir}/kc"
    return [
        case("kubeconfig-missing", "status --kubeconfig {dir}/none", 2, "{dir}/none"),
        case("kubeconfig-directory", "status --kubeconfig {dir}", 2, "{dir}"),
        case("kubeconfig-invalid-yaml", f"status {kc}", 2, "kc", files={"kc": "clusters: [oops\n"}),
        case("kubeconfig-empty", f"status {kc}", 2, "kc", files={"kc": ""}),
        case("kubeconfig-a-list", f"status {kc}", 2, "kc", files={"kc": "- a\n- b\n"}),
        case("kubeconfig-a-string", f"status {kc}", 2, "kc", files={"kc": "just words\n"}),
        case("kubeconfig-binary", f"status {kc}", 2, "kc", files={"kc": "\x00\x01\x02\x7f"}),
        case(
            "kubeconfig-no-current-context",
            f"status {kc}",
            2,
            "current-context",
            {"kc": kubeconfig(current="")},
        ),
        case("kubeconfig-unknown-context", f"status {kc} --context nope", 2, "'nope'", {"kc": kubeconfig()}),
        case(
            "kubeconfig-current-context-missing",
            f"status {kc}",
            2,
            "kc",
            {"kc": kubeconfig(current="current-context: gone\n")},
        ),
        case(
            "kubeconfig-context-without-cluster",
            f"status {kc}",
            2,
            "kc",
            {"kc": kubeconfig(context="{cluster: elsewhere, user: u}")},
        ),
        case(
            "kubeconfig-context-without-user",
            f"status {kc}",
            2,
            "kc",
            {"kc": kubeconfig(context="{cluster: c, user: nobody}")},
        ),
        case("kubeconfig-server-not-a-url", f"status {kc}", 2, "kc", {"kc": kubeconfig(server="not a url")}),
        case("kubeconfig-server-empty", f"status {kc}", 2, "kc", {"kc": kubeconfig(server="")}),
        case(
            "kubeconfig-client-cert-missing",
            f"status {kc}",
            2,
            "client.crt",
            {"kc": kubeconfig(user="{client-certificate: {dir}/client.crt, client-key: {dir}/client.key}")},
        ),
        case(
            "kubeconfig-token-file-missing",
            f"status {kc}",
            2,
            "token",
            {"kc": kubeconfig(user="{tokenFile: {dir}/token}")},
        ),
        case(
            "kubeconfig-exec-missing",
            f"status {kc}",
            2,
            "no-such-credential-helper",
            {
                "kc": kubeconfig(
                    user="{exec: {apiVersion: client.authentication.k8s.io/v1, "
                    "command: no-such-credential-helper}}"
                )
            },
        ),
        case(
            "kubeconfig-ca-missing",
            f"status {kc}",
            2,
            "ca.crt",
            {
                "kc": kubeconfig(server="https://127.0.0.1:{port}").replace(
                    "server:", "certificate-authority: {dir}/ca.crt, server:"
                )
            },
        ),
        case(
            "kubeconfig-https-unknown-ca",
            f"status {kc}",
            3,
            "https://127.0.0.1",
            {"kc": kubeconfig(server="https://127.0.0.1:{port}")},
        ),
        case(
            "kubeconfig-http-to-https",
            f"status {kc}",
            3,
            "https",
            {"kc": kubeconfig(server="http://127.0.0.1:{port}")},
        ),
        case(
            "kubeconfig-token-refused",
            f"status {kc}",
            3,
            "401",
            {
                "kc": kubeconfig(server="https://127.0.0.1:{port}").replace(
                    "server:", "insecure-skip-tls-verify: true, server:"
                )
            },
        ),
        case(
            "kubeconfig-nothing-listens",
            f"status {kc}",
            3,
            "127.0.0.1:1",
            {"kc": kubeconfig(server="http://127.0.0.1:1")},
        ),
        case("kubeconfig-env-colons", "status", 2, "KUBECONFIG", env={"KUBECONFIG": "::::"}),
        case("kubeconfig-env-missing-file", "status", 2, "{dir}/none", env={"KUBECONFIG": "{dir}/none"}),
        case("kubeconfig-env-directory", "status", 2, "{dir}", env={"KUBECONFIG": "{dir}"}),
        case(
            "kubeconfig-env-invalid",
            "status",
            2,
            "kc",
            {"kc": "clusters: [oops\n"},
            {"KUBECONFIG": "{dir}/kc"},
        ),
        case("no-kubeconfig-at-all", "status", 2, "kubeconfig"),
        case(
            "request-timeout-text",
            "status --kubeconfig {kc}",
            2,
            "GPUCTL_REQUEST_TIMEOUT",
            env={"GPUCTL_REQUEST_TIMEOUT": "soon"},
        ),
        case(
            "request-timeout-zero",
            "status --kubeconfig {kc}",
            2,
            "GPUCTL_REQUEST_TIMEOUT",
            env={"GPUCTL_REQUEST_TIMEOUT": "0"},
        ),
        case("verify-kubeconfig-missing", "verify --kubeconfig {dir}/none", 2, "{dir}/none"),
        case("taint-kubeconfig-missing", "taint-gpu-nodes --kubeconfig {dir}/none", 2, "{dir}/none"),
        case(
            "bootstrap-kubeconfig-missing",
            "bootstrap --phase cluster --kubeconfig {dir}/none",
            2,
            "{dir}/none",
        ),
    ]


def _inventories() -> list[Case]:
    """Inventories, through `preflight` (and `bootstrap --phase host` where it differs)."""
    inv = "preflight --inventory {dir}/hosts"
    hosts = "all:\n  children:\n    gpu_nodes:\n      hosts:\n        n1: {ansible_host: 127.0.0.1}\n"
    return [
        case("inventory-missing", "preflight --inventory {dir}/none.yml", 2, "none.yml"),
        case("inventory-missing-flag", "preflight", 2, "--inventory"),
        case("inventory-empty-folder", "preflight --inventory {dir}", 2, "{dir}"),
        case(
            "inventory-yaml-invalid",
            f"{inv}.yml",
            2,
            "hosts.yml",
            {"hosts.yml": "all:\n  hosts:\n    a: [\n"},
        ),
        case("inventory-yaml-list", f"{inv}.yml", 2, "hosts.yml", {"hosts.yml": "- gpu_nodes\n- n1\n"}),
        case("inventory-yaml-string", f"{inv}.yaml", 2, "hosts.yaml", {"hosts.yaml": "gpu_nodes\n"}),
        case(
            "inventory-no-gpu-group", f"{inv}.yml", 2, "gpu_nodes", {"hosts.yml": "all:\n  hosts:\n    a:\n"}
        ),
        case(
            "inventory-kubespray-no-gpu-group",
            f"{inv}.yml",
            2,
            "gpu_nodes",
            {"hosts.yml": "all:\n  children:\n    kube_node:\n      hosts:\n        a:\n"},
        ),
        case(
            "inventory-empty-gpu-group",
            f"{inv}.ini",
            2,
            "gpu_nodes",
            {"hosts.ini": "[gpu_nodes]\n[other]\nx\n"},
        ),
        case(
            "inventory-limit-matches-nothing", f"{inv}.yml --limit nope", 2, "--limit", {"hosts.yml": hosts}
        ),
        case(
            "inventory-port-text",
            f"{inv}.yml",
            2,
            "ansible_port",
            {"hosts.yml": hosts.replace("127.0.0.1}", "127.0.0.1, ansible_port: ssh}")},
        ),
        case(
            "inventory-port-range",
            f"{inv}.yml",
            2,
            "ansible_port",
            {"hosts.yml": hosts.replace("127.0.0.1}", "127.0.0.1, ansible_port: 70000}")},
        ),
        case(
            "inventory-ini-section",
            f"{inv}.ini",
            2,
            "hosts.ini:3",
            {"hosts.ini": "[all]\n\n[gpu_nodes\nn1\n"},
        ),
        case(
            "inventory-ini-host-var",
            f"{inv}.ini",
            2,
            "hosts.ini:2",
            {"hosts.ini": "[gpu_nodes]\nn1 ansible_port\n"},
        ),
        case(
            "inventory-ini-group-var",
            f"{inv}.ini",
            2,
            "hosts.ini:2",
            {"hosts.ini": "[gpu_nodes:vars]\nfoo\n"},
        ),
        case(
            "inventory-ini-quote", f"{inv}.ini", 2, "hosts.ini:2", {"hosts.ini": '[gpu_nodes]\nn1 a="open\n'}
        ),
        case(
            "inventory-ini-child",
            f"{inv}.ini",
            2,
            "hosts.ini:4",
            {"hosts.ini": "[gpu_nodes]\nn1\n[gpu_nodes:children]\nmissing\n"},
        ),
        case("inventory-ini-range", f"{inv}.ini", 2, "hosts.ini:2", {"hosts.ini": "[gpu_nodes]\nnode[1:]\n"}),
        case(
            "inventory-ini-section-type",
            f"{inv}.ini",
            2,
            "hosts.ini:1",
            {"hosts.ini": "[gpu_nodes:kids]\nn1\n"},
        ),
        case(
            "inventory-setting-branch",
            f"{inv}.yml",
            2,
            "gpuctl_driver_branch",
            {"hosts.yml": hosts, "group_vars/all/driver.yml": "gpuctl_driver_branch: latest\n"},
        ),
        case(
            "inventory-setting-bool",
            f"{inv}.yml",
            2,
            "gpuctl_cdi_enabled",
            {"hosts.yml": hosts.replace("127.0.0.1}", "127.0.0.1, gpuctl_cdi_enabled: perhaps}")},
        ),
        case(
            "bootstrap-inventory-missing", "bootstrap --phase host --inventory {dir}/none.yml", 2, "none.yml"
        ),
        case("bootstrap-inventory-flag", "bootstrap --phase host", 2, "--inventory"),
        case("bootstrap-phase-missing", "bootstrap --inventory {dir}/x.yml", 2, "--phase"),
        case("bootstrap-phase-choice", "bootstrap --phase everything", 2, "--phase"),
        case("bootstrap-stack-choice", "bootstrap --phase cluster --stack helm", 2, "--stack"),
        case(
            "bootstrap-replicas-zero",
            "bootstrap --phase cluster --kubeconfig {kc} --sharing mps --replicas 0",
            2,
            "--replicas",
        ),
        case("bootstrap-timeout-negative", "bootstrap --phase cluster --timeout -5", 2, "--timeout"),
    ]


def _scenarios() -> list[Case]:
    """Scenario files, through `sim up` (and `demo`)."""
    up = "sim up --scenario {dir}/s.yaml --kubeconfig {dir}/out.kubeconfig --detach"

    def bad(name: str, text: str, names: str) -> Case:
        return case(f"scenario-{name}", up, 2, names, {"s.yaml": text})

    return [
        bad("gpus-negative", "nodes: [{name: g, gpus: -1}]\n", "nodes[0].gpus"),
        bad("gpus-text", 'nodes: [{name: g, gpus: "eight"}]\n', "nodes[0].gpus"),
        bad("driver-state", "nodes: [{name: g, gpus: 2, host: {driver: broken}}]\n", "nodes[0].host.driver"),
        bad(
            "toolkit-state", "nodes: [{name: g, gpus: 2, host: {toolkit: maybe}}]\n", "nodes[0].host.toolkit"
        ),
        bad("device-plugin", "devicePlugin: maybe\nnodes: [{name: g}]\n", "devicePlugin"),
        bad("invalid-yaml", "nodes: [{name: g, gpus: 2\n", "s.yaml"),
        bad(
            "exit-code",
            "nodes: [{name: g, gpus: 2, nvidiaSmi: {exitCode: x}}]\n",
            "nodes[0].nvidiaSmi.exitCode",
        ),
        bad("empty", "", "s.yaml"),
        bad("comment-only", "# nothing\n", "s.yaml"),
        bad("count-huge", "nodes:\n  - name: gpu-{i}\n    count: 1000000\n", "nodes[0].count"),
        bad(
            "too-many-nodes",
            "nodes:\n  - {name: 'a-{i}', count: 6000}\n  - {name: 'b-{i}', count: 6000}\n",
            "10000",
        ),
        bad("forbidden-verb", "forbidden: ['frobnicate nodes']\nnodes: [{name: n}]\n", "frobnicate"),
        bad("forbidden-resource", "forbidden: ['list Nodes']\nnodes: [{name: n}]\n", "Nodes"),
        bad("nodes-not-a-list", "nodes: {name: g}\n", "nodes"),
        bad("node-without-name", "nodes: [{gpus: 2}]\n", "nodes[0]"),
        bad("unknown-field", "nodes: [{name: g, gpu: 2}]\n", "gpu"),
        bad("duplicate-names", "nodes: [{name: g}, {name: g}]\n", "g"),
        bad("pod-start-negative", "podStartSeconds: -1\nnodes: [{name: g}]\n", "podStartSeconds"),
        bad("kubernetes-version", "kubernetesVersion: latest\nnodes: [{name: g}]\n", "kubernetesVersion"),
        bad("taint-effect", "nodes: [{name: g, taints: [{key: a, effect: Sometimes}]}]\n", "nodes[0].taints"),
        bad("labels-list", "nodes: [{name: g, labels: [a, b]}]\n", "nodes[0].labels"),
        bad("ready-text", "nodes: [{name: g, ready: perhaps}]\n", "nodes[0].ready"),
        bad("top-level-list", "- name: g\n", "s.yaml"),
        bad("node-name-invalid", "nodes: [{name: Bad_Name}]\n", "nodes[0].name"),
        case(
            "scenario-missing",
            "sim up --scenario {dir}/none.yaml --kubeconfig {dir}/k --detach",
            2,
            "none.yaml",
        ),
        case("scenario-directory", "sim up --scenario {dir} --kubeconfig {dir}/k --detach", 2, "{dir}"),
        case("sim-up-without-kubeconfig", "sim up --detach", 2, "--kubeconfig"),
        case(
            "sim-up-hosts-from-missing",
            "sim up --hosts-from {dir}/none.yml --kubeconfig {dir}/k --detach",
            2,
            "none.yml",
        ),
        case("sim-down-without-kubeconfig", "sim down", 2, "--kubeconfig"),
        case(
            "sim-up-hosts-from-no-gpu-group",
            "sim up --hosts-from {dir}/h.yml --kubeconfig {dir}/k --detach",
            2,
            "gpu_nodes",
            {"h.yml": "all:\n  hosts:\n    a:\n"},
        ),
        case("demo-scenario-missing", "demo --scenario {dir}/none.yaml", 2, "none.yaml"),
        case(
            "demo-scenario-invalid",
            "demo --scenario {dir}/s.yaml",
            2,
            "nodes[0].gpus",
            {"s.yaml": "nodes: [{name: g, gpus: -2}]\n"},
        ),
    ]


def _explain() -> list[Case]:
    return [
        case("explain-missing-file", "explain {dir}/none.log", 2, "none.log"),
        case("explain-directory", "explain {dir}", 2, "{dir}"),
        case("explain-output-junit", "explain -o junit", 2, "'-o'"),
        case("explain-pod-without-name", "explain pod/ --kubeconfig {kc}", 2, "pod/"),
        case("explain-other-kind", "explain deploy/x --kubeconfig {kc}", 2, "deploy"),
        case("explain-pod-bad-name", "explain pod/Bad_Name --kubeconfig {kc}", 2, "Bad_Name"),
        case("explain-pod-bad-namespace", "explain pod/p -n Bad_Ns --kubeconfig {kc}", 2, "Bad_Ns"),
        case("explain-pod-missing", "explain pod/none -n kube-system --kubeconfig {kc}", 2, "pod none"),
        case("explain-node-missing", "explain node/none --kubeconfig {kc}", 2, "node none"),
        case("explain-since-malformed", "explain --since 5x {dir}/k.log", 2, "--since", {"k.log": "x\n"}),
        case("explain-since-zero", "explain --since 0s {dir}/k.log", 2, "--since '0s'", {"k.log": "x\n"}),
        case(
            "explain-since-no-stamps",
            "explain --since 2h {dir}/describe.txt",
            2,
            "--since 2h",
            {"describe.txt": "Events:\n  Warning  Failed  kubelet  Error: ErrImagePull\n"},
        ),
        case("explain-since-pod", "explain pod/p -n kube-system --since 1h --kubeconfig {kc}", 2, "--since"),
    ]


def _more() -> list[Case]:
    """The classes added for issues 33 and 40, each in a module of its own."""
    from tests import (
        bad_inputs_api,
        bad_inputs_bootstrap,
        bad_inputs_fabric,
        bad_inputs_flags,
        bad_inputs_io,
        bad_inputs_newcomer,
        bad_inputs_overwrite,
        bad_inputs_rbac,
        bad_inputs_secrets,
        bad_inputs_sim,
    )

    return [
        *bad_inputs_api.cases(),
        *bad_inputs_flags.cases(),
        *bad_inputs_io.cases(),
        *bad_inputs_bootstrap.cases(),
        *bad_inputs_overwrite.cases(),
        *bad_inputs_secrets.cases(),
        *bad_inputs_rbac.cases(),
        *bad_inputs_sim.cases(),
        *bad_inputs_newcomer.cases(),
        *bad_inputs_fabric.cases(),
    ]


CASES: tuple[Case, ...] = (
    *_usage(),
    *_render(),
    *_verify(),
    *_taint(),
    *_kubeconfigs(),
    *_inventories(),
    *_scenarios(),
    *_explain(),
    *_more(),
)
