"""Bad inputs of issue 33's flag classes: flags that would be silently ignored where they do not
apply or where another flag contradicts them (gpuctl/cli/flag_rules.py refuses them), and values
render would print although Kubernetes, the container runtime or helm would reject the output
(gpuctl/validation.py). Each answer: exit 2, one `error:` line naming the flag, one `hint:` line."""

from __future__ import annotations

from tests.bad_inputs_cases import Case, case

CRONJOB = "render --verify-cronjob --gpuctl-image registry.example/gpuctl:1 --verify-schedule"


def _render_stacks() -> list[Case]:
    """render: a flag of one stack given with another."""
    return [
        case("flags-render-dra-sharing", "render --stack dra --sharing mps", 2, "--sharing mps"),
        case(
            "flags-render-readiness-taint-prefix",
            "render --readiness-rule --readiness-taint gpuctl.io/unproven",
            2,
            "--readiness-taint",
        ),
        case(
            "flags-render-gate-taint-without-rbac",
            "render --gate-taint readiness.k8s.io/gpu-proven",
            2,
            "--gate-taint",
        ),
        case("flags-render-gate-taint-invalid", "render --rbac --gate-taint 'bad key'", 2, "--gate-taint"),
        case(
            "flags-render-gate-condition-readiness",
            "render --rbac --readiness-rule --gate-condition GPUReady",
            2,
            "--gate-condition",
        ),
        case("flags-render-dra-mig", "render --stack dra --mig-strategy single", 2, "--mig-strategy single"),
        case("flags-render-dra-image", "render --stack dra --image nvcr.io/x/plugin:1", 2, "--image"),
        case("flags-render-operator-namespace", "render --stack operator -n gpus", 2, "--namespace gpus"),
        case(
            "flags-render-operator-runtime-class",
            "render --gpu-operator --runtime-class gpu",
            2,
            "--runtime-class",
        ),
        case("flags-render-gpu-operator-and-dra", "render --gpu-operator --stack dra", 2, "--gpu-operator"),
        case("flags-render-chart-version-plugin", "render --chart-version v25.3.0", 2, "--chart-version"),
        case("flags-render-distribution-plugin", "render --distribution k3s", 2, "--distribution"),
        case(
            "flags-render-operator-driver-dra", "render --stack dra --operator-driver", 2, "--operator-driver"
        ),
        case(
            "flags-render-no-operator-toolkit-dra",
            "render --stack dra --no-operator-toolkit",
            2,
            "--no-operator-toolkit",
        ),
        case(
            "flags-render-verify-namespace-alone",
            "render --verify-namespace gpu-proof",
            2,
            "--verify-namespace",
        ),
        case("flags-render-log-namespace-alone", "render --log-namespace kube-system", 2, "--log-namespace"),
        case(
            "flags-render-gpuctl-image-alone", "render --gpuctl-image r.example/gpuctl:1", 2, "--gpuctl-image"
        ),
    ]


def _bootstrap_phases() -> list[Case]:
    """bootstrap: a flag of one phase given to another."""
    host = "bootstrap --phase host -i {dir}/hosts.yml"
    return [
        case(
            "flags-bootstrap-limit-without-inventory", "bootstrap --phase cluster --limit gpu-0", 2, "--limit"
        ),
        case("flags-bootstrap-tags-cluster", "bootstrap --phase cluster --tags driver", 2, "--tags driver"),
        case(
            "flags-bootstrap-keep-artifacts-verify",
            "bootstrap --phase verify --keep-artifacts",
            2,
            "--keep-artifacts",
        ),
        case(
            "flags-bootstrap-pass-env-cluster",
            "bootstrap --phase cluster --pass-env AWS_PROFILE",
            2,
            "--pass-env",
        ),
        case("flags-bootstrap-ansible-args-cluster", "bootstrap --phase cluster -- -vvv", 2, "-- -vvv"),
        case("flags-bootstrap-become-cluster", "bootstrap --phase cluster -K", 2, "--ask-become-pass"),
        case("flags-bootstrap-reboot-verify", "bootstrap --phase verify --reboot", 2, "--reboot"),
        case("flags-bootstrap-reboot-check", f"{host} --check --reboot", 2, "--reboot"),
        case("flags-bootstrap-sharing-host", f"{host} --sharing mps", 2, "--sharing mps"),
        case("flags-bootstrap-stack-host", f"{host} --stack operator", 2, "--stack operator"),
        case("flags-bootstrap-timeout-host", f"{host} --timeout 60", 2, "--timeout 60"),
        case("flags-bootstrap-no-taint-verify", "bootstrap --phase verify --no-taint", 2, "--no-taint"),
        case("flags-bootstrap-no-gate-host", f"{host} --no-gate", 2, "--no-gate"),
        case("flags-bootstrap-force-conflicts-host", f"{host} --force-conflicts", 2, "--force-conflicts"),
    ]


def _bootstrap_stacks() -> list[Case]:
    """bootstrap --phase cluster: a flag of one stack given with another, as render refuses it."""
    cluster = "bootstrap --phase cluster"
    return [
        case("flags-bootstrap-dra-sharing", f"{cluster} --stack dra --sharing mps", 2, "--sharing mps"),
        case(
            "flags-bootstrap-chart-version-plugin", f"{cluster} --chart-version v25.3.0", 2, "--chart-version"
        ),
        case("flags-bootstrap-helm-plugin", f"{cluster} --helm /usr/bin/helm", 2, "--helm"),
        case(
            "flags-bootstrap-chart-plugin",
            f"{cluster} --stack device-plugin --chart ./chart",
            2,
            "--chart ./chart",
        ),
        case(
            "flags-bootstrap-distribution-dra",
            f"{cluster} --stack dra --distribution k3s",
            2,
            "--distribution k3s",
        ),
        case(
            "flags-bootstrap-operator-driver-dra",
            f"{cluster} --stack dra --operator-driver",
            2,
            "--operator-driver",
        ),
        case("flags-bootstrap-replicas-alone", f"{cluster} --replicas 4", 2, "--replicas"),
        case(
            "flags-bootstrap-replicas-sharing-none",
            f"{cluster} --sharing none --replicas 4",
            2,
            "--replicas 4",
        ),
        case(
            "flags-bootstrap-chart-version-empty",
            f"{cluster} --stack operator --chart-version ''",
            2,
            "--chart-version ''",
        ),
        case("flags-bootstrap-chart-empty", f"{cluster} --stack dra --chart ''", 2, "--chart ''"),
        case(
            "flags-bootstrap-chart-version-spaces",
            f"{cluster} --stack dra --chart-version '1 2'",
            2,
            "--chart-version",
        ),
    ]


def _verify_and_taint() -> list[Case]:
    return [
        case("flags-verify-interval-without-watch", "verify --interval 60", 2, "--interval"),
        case("flags-verify-no-pods-image", "verify --no-pods --image busybox", 2, "--image busybox"),
        case("flags-verify-no-pods-toleration", "verify --no-pods --toleration dedicated", 2, "--toleration"),
        case("flags-verify-no-pods-gate", "verify --no-pods --gate", 2, "--gate"),
        case(
            "flags-verify-gate-taint-without-gate",
            "verify --gate-taint readiness.k8s.io/gpu-proven",
            2,
            "--gate-taint",
        ),
        case("flags-verify-gate-mode-unknown", "verify --gate --gate-mode both", 2, "--gate-mode 'both'"),
        case("flags-verify-gate-taint-invalid", "verify --gate --gate-taint 'bad key'", 2, "--gate-taint"),
        case(
            "flags-verify-no-pods-pull-secret",
            "verify --no-pods --image-pull-secret regcred",
            2,
            "--image-pull-secret",
        ),
        case("flags-verify-watch-yaml", "verify --watch -o yaml", 2, "--watch"),
        case("flags-verify-image-upper-case", "verify --image nvcr.io/NVIDIA/cuda:12.4.1", 2, "--image"),
        case("flags-verify-image-empty-tag", "verify --image cuda:", 2, "--image 'cuda:'"),
        case("flags-verify-level-unknown", "verify --level gpu", 2, "--level"),
        case("flags-verify-no-pods-level", "verify --no-pods --level cuda", 2, "--level cuda"),
        case("flags-verify-min-busbw-zero", "verify --level nccl --min-busbw 0", 2, "--min-busbw 0"),
        case("flags-verify-min-busbw-text", "verify --level nccl --min-busbw fast", 2, "--min-busbw fast"),
        case("flags-verify-min-busbw-without-nccl", "verify --level cuda --min-busbw 300", 2, "--min-busbw"),
        case("flags-verify-nccl-image-without-nccl", "verify --nccl-image repo/nccl:1", 2, "--nccl-image"),
        case(
            "flags-verify-cuda-image-upper-case",
            "verify --level cuda --cuda-image nvcr.io/NVIDIA/x:1",
            2,
            "--cuda-image",
        ),
        case(
            "flags-bootstrap-level-host",
            "bootstrap --phase host -i hosts.yml --level cuda",
            2,
            "--level cuda",
        ),
        case("flags-taint-remove-value", "taint-gpu-nodes --remove --value present", 2, "--value present"),
        case("flags-taint-yes-noschedule", "taint-gpu-nodes --yes", 2, "--yes"),
        case("flags-taint-remove-yes", "taint-gpu-nodes --remove --effect NoExecute --yes", 2, "--yes"),
    ]


def _render_values() -> list[Case]:
    """render: output Kubernetes, the container runtime or helm would reject."""
    return [
        case("render-cron-minute-61", f"{CRONJOB} '61 * * * *'", 2, "--verify-schedule '61 * * * *'"),
        case("render-cron-hour-24", f"{CRONJOB} '0 24 * * *'", 2, "--verify-schedule"),
        case("render-cron-weekday-7", f"{CRONJOB} '0 0 * * 7'", 2, "--verify-schedule"),
        case("render-cron-month-name", f"{CRONJOB} '0 0 1 foo *'", 2, "--verify-schedule"),
        case("render-cron-range-backwards", f"{CRONJOB} '30-10 * * * *'", 2, "--verify-schedule"),
        case("render-cron-step-zero", f"{CRONJOB} '*/0 * * * *'", 2, "--verify-schedule"),
        case("render-cron-empty-list-item", f"{CRONJOB} '1,,2 * * * *'", 2, "--verify-schedule"),
        case("render-cron-time-zone", f"{CRONJOB} 'TZ=UTC 0 * * * *'", 2, "--verify-schedule"),
        case("render-cron-unknown-macro", f"{CRONJOB} @fortnightly", 2, "--verify-schedule"),
        case(
            "render-node-selector-key-300", "render --node-selector " + "k" * 300 + "=x", 2, "--node-selector"
        ),
        case("render-node-selector-value", "render --node-selector gpu=a/b", 2, "--node-selector 'gpu=a/b'"),
        case("render-node-selector-prefix", "render --node-selector Example.COM/gpu=1", 2, "--node-selector"),
        case(
            "render-node-selector-twice",
            "render --node-selector a=1 --node-selector a=2",
            2,
            "--node-selector",
        ),
        case(
            "render-subject-namespace",
            "render --rbac --rbac-subject ServiceAccount:Bad_NS:gpuctl",
            2,
            "Bad_NS",
        ),
        case("render-subject-name", "render --rbac --rbac-subject ServiceAccount:ci:Bad_Name", 2, "Bad_Name"),
        case("render-subject-user-spaces", "render --rbac --rbac-subject 'User: bob'", 2, "--rbac-subject"),
        case(
            "render-subject-account-short",
            "render --rbac --rbac-subject ServiceAccount:ci",
            2,
            "--rbac-subject",
        ),
        case(
            "render-image-upper-case", "render --image nvcr.io/NVIDIA/k8s-device-plugin:v0.17.0", 2, "--image"
        ),
        case("render-image-bad-tag", "render --image nvcr.io/nvidia/k8s-device-plugin:-v1", 2, "--image"),
        case("render-image-digest-only", "render --image @sha256:abc", 2, "--image"),
        case(
            "render-gpuctl-image-upper-case",
            "render --verify-cronjob --gpuctl-image Registry/GPUCTL:1",
            2,
            "--gpuctl-image",
        ),
        case("render-out-empty", "render --out ''", 2, "--out ''"),
        case(
            "render-chart-version-empty",
            "render --stack operator --chart-version ''",
            2,
            "--chart-version ''",
        ),
        case("render-chart-version-spaces", "render --stack dra --chart-version 'v 1'", 2, "--chart-version"),
        case(
            "render-log-namespace-invalid",
            "render --rbac --log-namespace Not_A_NS",
            2,
            "--log-namespace 'Not_A_NS'",
        ),
    ]


def cases() -> list[Case]:
    return [
        *_render_stacks(),
        *_bootstrap_phases(),
        *_bootstrap_stacks(),
        *_verify_and_taint(),
        *_render_values(),
    ]
