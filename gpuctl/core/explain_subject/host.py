"""The node's host, read with gpuctl's one host probe over SSH, joined to the cluster's symptom: a
host whose driver does not answer, whose container runtime lacks the nvidia runtime or whose
Fabric Manager is down is the root of what the plugin and the pods show, and its fix is the host
phase on that node."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gpuctl.core.explain_subject.evidence import Clue, clue
from gpuctl.diagnose import Diagnosis, signature_of
from gpuctl.diagnose.signatures import HOST_LAYER_CATEGORIES
from gpuctl.errors import ConfigError
from gpuctl.hosts.driver_state import nvidia_smi_state
from gpuctl.hosts.host_state import HostState, ProbeOutputError, parse_probe_output
from gpuctl.hosts.inventory import Host, load_inventory, node_name
from gpuctl.hosts.probe_script import probe_script
from gpuctl.hosts.ssh import SshFailure, connect, resolve, run_script
from gpuctl.shell import command_line

CONNECT_TIMEOUT_S = 10.0
SCRIPT_TIMEOUT_S = 90.0
# Cluster causes the host can be the root of: the host layer's own, and a plugin that finds no GPU.
_JOINABLE = (*HOST_LAYER_CATEGORIES, "plugin")


def inventory_host(inventory: Path, node: str, addresses: Sequence[str]) -> Host:
    """The inventory host behind `node`: its name, gpuctl_node_name or ansible_host is the node's
    name or one of its addresses."""
    loaded = load_inventory(inventory)
    names = {node, *addresses}
    for host in loaded.hosts:
        if {host.name, host.address, node_name(host)} & names:
            return host
    raise ConfigError(
        f"no host of {inventory} is node {node}",
        hint=f"name the host {node} in group gpu_nodes, or set its gpuctl_node_name: {node}",
    )


def probe_host_state(host: Host) -> HostState | str:
    """The host's state from one run of the probe; why not, in words, when SSH or the probe failed."""
    settings = resolve(host, insecure_skip_host_key_check=False)
    try:
        client = connect(settings, timeout=CONNECT_TIMEOUT_S)
    except SshFailure as failure:
        return failure.message
    try:
        result = run_script(client, probe_script(), timeout=SCRIPT_TIMEOUT_S)
    except Exception as error:  # any transport failure is this host's evidence, never a traceback
        return f"the probe did not finish: {error or 'timed out'}"
    finally:
        client.close()
    try:
        return parse_probe_output(result.stdout)
    except ProbeOutputError:
        return f"the probe did not answer (exit {result.exit_status})"


def _bootstrap(inventory: str, node: str) -> str:
    return command_line("gpuctl", "bootstrap", "--phase", "host", "-i", inventory, "--limit", node)


def _host_diagnosis(signature_id: str, evidence: str, cause: str, fix: str, category: str) -> Diagnosis:
    return Diagnosis(signature_id, evidence, cause, fix, category)


def host_clues(state: HostState, host: str, node: str, inventory: str) -> list[Clue]:
    """The host's driver, nvidia runtime and Fabric Manager, each a clue; a diagnosis where it is
    broken."""
    where = f"host {host} probe"
    fix = _bootstrap(inventory, node)
    driver = nvidia_smi_state(state.nvidia_smi.rc, state.nvidia_smi.output)
    module = "loaded" if "nvidia" in state.modules else "not loaded"
    driver_text = f"{driver.message}; kernel module nvidia {module}"
    clues = [clue(where, driver_text, _driver_diagnosis(driver.state, driver_text, host, node, fix))]
    if state.nvidia_runtime:  # the runtimes the probe read the configuration of
        clues.append(_runtime_clue(state, where, host, fix))
    if state.nvswitches or state.fabricmanager.installed:
        clues.append(_fabric_manager_clue(state, where, host, fix))
    return clues


def _runtime_clue(state: HostState, where: str, host: str, fix: str) -> Clue:
    knows = sorted(name for name, known in state.nvidia_runtime.items() if known)
    runtimes = ", ".join(sorted(state.nvidia_runtime))
    if knows:
        return clue(where, f"container runtime {runtimes}: nvidia runtime configured ({', '.join(knows)})")
    text = f"container runtime {runtimes}: no nvidia runtime configured"
    cause = (
        f"the container runtime on host {host} has no nvidia runtime (the container toolkit is "
        "missing, or the runtime's configuration lost it)"
    )
    return clue(where, text, _host_diagnosis("host.no-nvidia-runtime", text, cause, fix, "toolkit"))


def _driver_diagnosis(state: str, text: str, host: str, node: str, fix: str) -> Diagnosis | None:
    if state == "working":
        return None
    if state == "reboot_required":
        reboot = (
            f"reboot {node} (`kubectl drain {node} --ignore-daemonsets` first) so the installed driver loads"
        )
        return _host_diagnosis("host.driver-reboot-required", text, f"host {host}: {text}", reboot, "driver")
    return _host_diagnosis(
        "host.driver-not-working",
        text,
        f"the NVIDIA driver on host {host} does not work: {text}",
        fix,
        "driver",
    )


def _fabric_manager_clue(state: HostState, where: str, host: str, fix: str) -> Clue:
    service = state.fabricmanager
    running = service.active_state or "not installed"
    text = f"{len(state.nvswitches)} NVSwitch(es); nvidia-fabricmanager {running}"
    if not state.nvswitches or service.active_state == "active":
        return clue(where, text)
    cause = f"host {host} has NVSwitches but Fabric Manager is not running: CUDA cannot start there"
    return clue(where, text, _host_diagnosis("host.fabricmanager-down", text, cause, fix, "driver"))


def joined(cluster: Clue | None, host: list[Clue]) -> Clue | None:
    """The one cause: the host's problem when the cluster shows none, or one the host layer can
    be the root of (the joined cause says both); else the cluster's."""
    host_cause = next((found for found in host if found.diagnosis is not None), None)
    if host_cause is None or host_cause.diagnosis is None:
        return cluster
    if cluster is None or cluster.diagnosis is None:
        return host_cause
    signature = signature_of(cluster.diagnosis.signature_id)
    category = signature.category if signature else cluster.diagnosis.category
    if category not in _JOINABLE:
        return cluster
    root = host_cause.diagnosis
    both = Diagnosis(
        root.signature_id,
        root.evidence,
        f"{root.cause}; in the cluster: {cluster.diagnosis.cause}",
        root.hint,
        root.category,
    )
    return Clue(host_cause.evidence, both)
