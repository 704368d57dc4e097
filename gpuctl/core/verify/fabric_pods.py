"""The manifests of one multi-node all-reduce, in the shape MPI Operator gives an MPIJob: worker
pods running sshd (one per node, all its GPUs), a headless Service that names them
(`w0.SERVICE`), a Secret with the SSH keys the launcher logs in with, and a launcher pod that runs
`mpirun` of the pinned nccl-tests image over the workers' GPUs, one rank per GPU.

Pod Security: the pods meet the "restricted" profile (non-root, no privilege escalation, every
capability dropped, RuntimeDefault seccomp) unless asked otherwise: `--fabric-ipc-lock` adds
IPC_LOCK (RDMA memory registration pins memory; needed where the runtime's memlock limit is not
unlimited) and `--fabric-host-network` the host's network namespace; neither is allowed by
"restricted" (nor "baseline"): such a run needs a namespace labelled for the "privileged" profile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuctl.core.verify.pod_manifest import (
    COMPONENT,
    DEADLINE_GRACE_S,
    MANAGED_BY,
    NODE_ANNOTATION,
    RUN_ID_LABEL,
    tolerations_for,
)
from gpuctl.defaults import GPU_RESOURCE, NCCL_TESTS_ALL_REDUCE
from gpuctl.kube.nodes import HOSTNAME_LABEL

if TYPE_CHECKING:
    from gpuctl.core.verify.model import VerifyOptions
    from gpuctl.kube.nodes import NodeInfo
    from gpuctl.kube.raw import JsonDict

FABRIC_RUN_LABEL = "gpuctl.io/fabric-run"  # one multi-node run: its workers, launcher, Service
FABRIC_ROUND_LABEL = "gpuctl.io/fabric-round"  # every pod of one round, deleted together
FABRIC_ROLE_LABEL = "gpuctl.io/fabric-role"  # launcher | worker | service
LAUNCHER = "launcher"
WORKER = "worker"
SSH_PORT = 2222  # sshd as a non-root user cannot bind port 22
SSH_MOUNT = "/etc/gpuctl-mpi"  # the Secret's keys, in the launcher and in every worker
MPI_UID = 1000  # the unprivileged user MPI Operator's examples run mpirun and sshd as (mpiuser)
# The all-reduce of a multi-node run: one rank per GPU (-g 1), the same sizes as the node-level one.
ALL_REDUCE_ARGS = ("-b", "8", "-e", "8G", "-f", "2", "-g", "1")
# NCCL's debug lines say which network each host's ranks used and the NICs it found (fabric_nccl).
NCCL_ENV = ("NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,NET")


def run_name(run_id: str, round_no: int, index: int) -> str:
    """`gpuctl-verify-<run>-f<round>g<index>`: the run's Service; its pods' names start with it."""
    return f"gpuctl-verify-{run_id}-f{round_no}g{index}"


def worker_host(index: int, service: str) -> str:
    """A worker's DNS name through the headless Service (the namespace's search domain completes it)."""
    return f"w{index}.{service}"


def fabric_labels(run_id: str, service: str, round_no: int, role: str) -> dict[str, str]:
    """The labels of everything one run makes: verify's run labels, the run, its round, the role."""
    return {
        MANAGED_BY: "gpuctl",
        COMPONENT: "verify",
        RUN_ID_LABEL: run_id,
        FABRIC_RUN_LABEL: service,
        FABRIC_ROUND_LABEL: f"{run_id}-{round_no}",
        FABRIC_ROLE_LABEL: role,
    }


def _security_context(options: VerifyOptions) -> JsonDict:
    capabilities: JsonDict = {"drop": ["ALL"]}
    if options.proof.fabric_ipc_lock:
        capabilities["add"] = ["IPC_LOCK"]
    return {
        "allowPrivilegeEscalation": False,
        "capabilities": capabilities,
        "runAsNonRoot": True,
        "runAsUser": MPI_UID,
        "runAsGroup": MPI_UID,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def _pod_spec(node: NodeInfo, options: VerifyOptions, container: JsonDict, secret: str) -> JsonDict:
    container["volumeMounts"] = [{"name": "ssh", "mountPath": SSH_MOUNT, "readOnly": True}]
    container["securityContext"] = _security_context(options)
    spec: JsonDict = {
        "restartPolicy": "Never",
        "nodeSelector": {HOSTNAME_LABEL: node.hostname},
        "tolerations": tolerations_for(node, options.tolerations),
        "activeDeadlineSeconds": int(options.timeout_s) + DEADLINE_GRACE_S,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": 0,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": MPI_UID,
            "runAsGroup": MPI_UID,
            "fsGroup": MPI_UID,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "volumes": [{"name": "ssh", "secret": {"secretName": secret, "defaultMode": 0o440}}],
        "containers": [container],
    }
    if options.proof.fabric_host_network:
        spec["hostNetwork"] = True
        spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    if options.runtime_class:
        spec["runtimeClassName"] = options.runtime_class
    if options.image_pull_secret:
        spec["imagePullSecrets"] = [{"name": options.image_pull_secret}]
    return spec


def worker_pod(
    node: NodeInfo, gpus: int, index: int, names: tuple[str, str, int], options: VerifyOptions, *, secret: str
) -> JsonDict:
    """The worker of `node` in run `service`: sshd, holding the node's `gpus` GPUs and the network
    resources of --fabric-resource."""
    run_id, service, round_no = names
    requests = {
        GPU_RESOURCE: str(gpus),
        **{name: str(count) for name, count in options.proof.fabric_resources},
    }
    container: JsonDict = {
        "name": WORKER,
        "image": options.proof.nccl_image,
        "command": ["/usr/sbin/sshd", "-De", "-p", str(SSH_PORT), "-h", f"{SSH_MOUNT}/host_key",
                    "-o", f"AuthorizedKeysFile={SSH_MOUNT}/authorized_keys", "-o", "PidFile=none"],
        "resources": {"requests": requests, "limits": dict(requests)},
    }  # fmt: skip
    spec = _pod_spec(node, options, container, secret)
    spec["hostname"] = f"w{index}"
    spec["subdomain"] = service
    # NCCL's shared-memory transport needs more than the container's 64 MiB /dev/shm
    spec["volumes"].append({"name": "dev-shm", "emptyDir": {"medium": "Memory"}})
    container["volumeMounts"].append({"name": "dev-shm", "mountPath": "/dev/shm"})
    return _pod(f"{service}-w{index}", fabric_labels(run_id, service, round_no, WORKER), node, spec)


SSH_ARGS = f"-p {SSH_PORT} -i {SSH_MOUNT}/id_ed25519 -o StrictHostKeyChecking=no"


def mpirun_command(hosts: list[tuple[str, int]], *, ssh_args: str = SSH_ARGS) -> list[str]:
    """mpirun over `hosts` (DNS name, GPUs), one rank per GPU, NCCL's debug lines on; `ssh_args`
    how it logs in to the workers ("": as the environment says, e.g. MPI Operator's)."""
    ranks = sum(gpus for _, gpus in hosts)
    command = ["mpirun", "-np", str(ranks), "-H", ",".join(f"{host}:{gpus}" for host, gpus in hosts)]
    command += ["--bind-to", "none"]
    if ssh_args:
        command += ["--mca", "plm_rsh_args", ssh_args]
    for variable in NCCL_ENV:
        command += ["-x", variable]
    return [*command, NCCL_TESTS_ALL_REDUCE, *ALL_REDUCE_ARGS]


def launcher_pod(
    node: NodeInfo,
    hosts: list[tuple[str, int]],
    names: tuple[str, str, int],
    options: VerifyOptions,
    secret: str,
) -> JsonDict:
    """The launcher of run `service`, on its first worker's node without GPUs of its own."""
    run_id, service, round_no = names
    container: JsonDict = {
        "name": LAUNCHER,
        "image": options.proof.nccl_image,
        "command": mpirun_command(hosts),
        "resources": {"requests": {"cpu": "100m"}},
    }
    spec = _pod_spec(node, options, container, secret)
    return _pod(f"{service}-launcher", fabric_labels(run_id, service, round_no, LAUNCHER), node, spec)


def _pod(name: str, labels: dict[str, str], node: NodeInfo, spec: JsonDict) -> JsonDict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels, "annotations": {NODE_ANNOTATION: node.name}},
        "spec": spec,
    }


def headless_service(run_id: str, service: str, round_no: int) -> JsonDict:
    """The Service that gives run `service`'s workers their DNS names (`w0.SERVICE`)."""
    labels = fabric_labels(run_id, service, round_no, "service")
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": service, "labels": labels},
        "spec": {
            "clusterIP": "None",
            "selector": {FABRIC_RUN_LABEL: service, FABRIC_ROLE_LABEL: WORKER},
            "ports": [{"name": "ssh", "port": SSH_PORT, "targetPort": SSH_PORT}],
            "publishNotReadyAddresses": True,
        },
    }


def ssh_secret(run_id: str, name: str) -> JsonDict:
    """The SSH keys of a verify run's multi-node runs: the launcher's key, the workers' host key,
    the launcher's public key as the workers' authorized_keys (as MPI Operator's `<job>-ssh`)."""
    client_key, client_public = _ed25519()
    host_key, _ = _ed25519()
    labels = {MANAGED_BY: "gpuctl", COMPONENT: "verify", RUN_ID_LABEL: run_id}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "labels": labels},
        "type": "Opaque",
        "stringData": {"id_ed25519": client_key, "authorized_keys": client_public, "host_key": host_key},
    }


def _ed25519() -> tuple[str, str]:
    """A new ed25519 key pair: OpenSSH private key, `ssh-ed25519 ...` public key."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return private.decode(), public.decode() + "\n"
