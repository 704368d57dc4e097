"""NVIDIA Fabric Manager: the states a GPU goes through joining the NVLink fabric, as `nvidia-smi
-q` prints them (its `Fabric` section), and the start-up and runtime failures Fabric Manager logs
(`/var/log/fabricmanager.log`, `journalctl -u nvidia-fabricmanager`).

On NVSwitch systems (HGX/DGX A100, H100, H200, B200, GB200 NVL72) a GPU is usable by CUDA only
once Fabric Manager has trained its NVLinks and registered it with the fabric: `nvidia-smi -q`
then shows `State : Completed` and `Status : Success`. Until then CUDA fails with error 802
(`system not yet initialized`, the table's gpu.fabric-not-ready); `Not Started` means Fabric
Manager never began, `In Progress` that it has not finished, and a `Status` other than Success
after Completed is the NVML error registration ended with. Blackwell's fabric health (`Health`:
Summary, Bandwidth, Route Unhealthy, ...) reports a fabric that registered but degraded.

Two start-up failures are rows of the hand-written table and stay there (table_gpu.py):
fabric.version-mismatch (Fabric Manager of another version than the driver) and fabric.no-nvswitch
(no NVSwitch to manage: the service is not needed).
"""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue, Entry

GUIDE = "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html"
NVML_FABRIC = "https://docs.nvidia.com/deploy/nvml-api/group__nvmlFabricDefs.html"

_STATUS = (
    "on {node}: `systemctl status nvidia-fabricmanager` and `journalctl -u nvidia-fabricmanager` "
    "(or /var/log/fabricmanager.log; with the GPU Operator, the driver pod's log) say why"
)
_START = (
    _STATUS + "; install nvidia-fabricmanager of exactly the driver's version and start it (`sudo "
    "systemctl enable --now nvidia-fabricmanager`; `gpuctl bootstrap --phase host -i INVENTORY "
    "--limit {node}` does both), then check `nvidia-smi -q | grep -A2 Fabric` says Completed"
)
_RESET_FABRIC = (
    "drain {node} (`kubectl drain {node} --ignore-daemonsets`), stop Fabric Manager (`sudo "
    "systemctl stop nvidia-fabricmanager`), reset the GPUs and NVSwitches together (`sudo "
    "nvidia-smi -r`) or reboot {node}, start it again (`sudo systemctl start "
    "nvidia-fabricmanager`) and check `nvidia-smi -q | grep -A2 Fabric` says Completed"
)
_HARDWARE = (
    "; if it comes back after the reset, collect `sudo nvidia-bug-report.sh` and open a case with "
    "the system vendor (a GPU, NVSwitch or NVLink cable/tray)"
)

_SMI: tuple[Entry, ...] = (
    Entry(
        code="state-not-started",
        name="Fabric state Not Started",
        cause="the GPU has not begun joining the NVLink fabric: Fabric Manager (or, on NVL72, the "
        "NVLink subnet manager it drives) is not running on the node, so CUDA fails with error 802 "
        "(system not yet initialized) on this NVSwitch system",
        fix=_START,
        layer="fabric",
        aliases=("State : Not Started",),
        source=NVML_FABRIC,
    ),
    Entry(
        code="state-in-progress",
        name="Fabric state In Progress",
        cause="Fabric Manager has started but not finished training the GPU's NVLinks and "
        "registering it with the fabric; normal for a minute after boot, a fault when it stays "
        "(Fabric Manager stuck or failing, an NVLink that does not train), and CUDA fails with error "
        "802 meanwhile",
        fix="wait a minute and look again (`nvidia-smi -q | grep -A2 Fabric`); if it stays In "
        "Progress, " + _STATUS + ", then " + _RESET_FABRIC,
        layer="fabric",
        aliases=("State : In Progress",),
        source=NVML_FABRIC,
        transient=True,
    ),
    Entry(
        code="probe-error",
        name="Fabric registration failed (Status)",
        cause="the GPU's registration with the NVLink fabric ended with error '{value}' (the "
        "`Status` of `nvidia-smi -q`'s Fabric section, an NVML return code): the GPU has no NVLink "
        "peer access, and on NVL72 no clique (CliqueId 0, a zero ClusterUUID), so multi-GPU and "
        "multi-node NVLink jobs fail",
        fix=_RESET_FABRIC + _HARDWARE,
        layer="fabric",
        aliases=("Status",),
        source=NVML_FABRIC,
    ),
    Entry(
        code="health-unhealthy",
        name="Fabric health Unhealthy",
        cause="the GPU joined the NVLink fabric but its fabric health summary is Unhealthy (a "
        "route, link or configuration fault; the Health rows below it say which)",
        fix=_RESET_FABRIC + _HARDWARE,
        layer="fabric",
        aliases=("Summary : Unhealthy",),
        source=NVML_FABRIC,
    ),
    Entry(
        code="health-limited-capacity",
        name="Fabric health Limited Capacity",
        cause="the GPU's NVLink fabric works with reduced capacity (links or an NVSwitch lost): jobs "
        "run but NVLink bandwidth is degraded",
        fix="check the links (`nvidia-smi nvlink -s`, `nvidia-smi nvlink -e`) and `dmesg | grep -i "
        "xid`; at the next maintenance, " + _RESET_FABRIC + _HARDWARE,
        layer="fabric",
        aliases=("Summary : Limited Capacity",),
        source=NVML_FABRIC,
    ),
    Entry(
        code="bandwidth-degraded",
        name="Fabric bandwidth Degraded",
        cause="the GPU's NVLink fabric bandwidth is degraded: some of its NVLinks or an NVSwitch "
        "plane are down, so collectives over NVLink run slower",
        fix="find the down links (`nvidia-smi nvlink -s`, `nvidia-smi nvlink -e`, `dmesg | grep -iE "
        "'xid|sxid'`); at the next maintenance, " + _RESET_FABRIC + _HARDWARE,
        layer="fabric",
        aliases=("Bandwidth : Degraded",),
        source=NVML_FABRIC,
    ),
    Entry(
        code="route-unhealthy",
        name="Fabric route unhealthy",
        cause="a route of the GPU through the NVLink fabric is unhealthy: traffic to some peers "
        "fails or stalls (NCCL hangs, Xid 145/74)",
        fix=_RESET_FABRIC + _HARDWARE,
        layer="fabric",
        aliases=("Route Unhealthy : True",),
        source=NVML_FABRIC,
    ),
    Entry(
        code="route-recovery",
        name="Fabric route recovery in progress",
        cause="the NVLink fabric is recovering a route of this GPU after a link fault; traffic may "
        "stall until it finishes",
        fix="wait for it to finish (`nvidia-smi -q | grep -A8 Fabric`); if it does not clear, "
        + _RESET_FABRIC,
        layer="fabric",
        aliases=("Route Recovery in progress : True",),
        source=NVML_FABRIC,
        transient=True,
    ),
    Entry(
        code="access-timeout-recovery",
        name="Fabric access timeout recovery",
        cause="the GPU is recovering from an NVLink access timeout (a peer or the fabric stopped "
        "answering); jobs using the fabric may have failed",
        fix="wait for it to finish; if it recurs, " + _RESET_FABRIC + _HARDWARE,
        layer="fabric",
        aliases=("Access Timeout Recovery : True",),
        source=NVML_FABRIC,
        transient=True,
    ),
    Entry(
        code="incorrect-configuration",
        name="Fabric incorrect configuration",
        cause="the NVLink fabric reports an incorrect configuration for this GPU ('{value}': no "
        "partition, too few NVLinks, incompatible GPU firmware, wrong location, system GUID or "
        "chassis serial): the GPU cannot join its NVLink domain as configured",
        fix="fix what it names: assign the GPU's partition in the NVLink domain (NMX / Fabric "
        "Manager partition), update the GPU firmware to the release the fabric expects, or check "
        "the tray's cabling and location; then " + _RESET_FABRIC,
        layer="fabric",
        aliases=("Incorrect Configuration",),
        source=NVML_FABRIC,
    ),
)

_LOG: tuple[Entry, ...] = (
    Entry(
        code="config-item-invalid",
        name="Fabric Manager configuration item invalid",
        cause="Fabric Manager refused an item of its configuration file (the line names it): a "
        "path it names does not exist or is not writable on this node (FABRIC_NODE_CONFIG_FILE, "
        "the topology files, LOG_FILE_NAME, DATABASE_PATH), or a value this release does not take; "
        "it exits and the GPUs stay out of the fabric (CUDA error 802)",
        fix="on {node}: compare the named item of /usr/share/nvidia/nvswitch/fabricmanager.cfg with "
        "the files of the installed Fabric Manager package (the same version as the driver: "
        "`nv-fabricmanager --version`, `nvidia-smi`); fix the path or value, then `sudo systemctl "
        "restart nvidia-fabricmanager`",
        layer="fabric",
        texts=("fabric manager config file item:",),
        source=GUIDE,
    ),
    Entry(
        code="config-incomplete",
        name="Fabric Manager could not configure the GPUs or NVSwitches",
        cause="Fabric Manager gave up configuring the NVLink fabric: the GPUs' local Fabric Manager "
        "instances (or the NVSwitches) did not report ready before its timeout, most often because "
        "it was started before the driver had finished loading and initialising the GPUs (started "
        "from cloud-init or a script ahead of its unit's order, the driver loaded late), else a GPU "
        "or NVSwitch that does not initialise or a Fabric Manager of another version than the "
        "driver; the GPUs stay out of the fabric (CUDA error 802)",
        fix="on {node}: let systemd start nvidia-fabricmanager in its own order, after the driver "
        "has loaded (not from cloud-init; `sudo systemctl restart nvidia-fabricmanager` once the "
        "driver is up usually completes at once), check its version equals the driver's "
        "(`nv-fabricmanager --version`, `nvidia-smi`); if it still fails, " + _RESET_FABRIC + _HARDWARE,
        layer="fabric",
        texts=(
            "not all local fabric manager instances finished their configuration",
            "fabric manager error handler is called for unhandled config error type",
            "failed to configure all the available GPUs or NVSwitches",
            "failed to configure NVSwitch/GPU global settings",
            "failed to configure NVSwitch settings",
            "failed to configure NVSwitch port",
            "failed to configure GPU settings",
        ),
        source=GUIDE,
    ),
    Entry(
        code="local-instance-lost",
        name="Fabric Manager lost a local instance",
        cause="the global Fabric Manager lost its connection (socket or heartbeat) to a local Fabric "
        "Manager instance: the local instance or its node's driver stopped or restarted, so the "
        "fabric is left unmanaged and new CUDA jobs fail until it is configured again",
        fix=_STATUS + "; " + _RESET_FABRIC,
        layer="fabric",
        texts=(
            "lost socket connection between global and local fabric manager instance",
            "failed heartbeat between global and local fabric manager instance",
        ),
        source=GUIDE,
    ),
    Entry(
        code="fatal-error-reset-required",
        name="NVLink fatal error: reset required",
        cause="an NVSwitch or NVLink fatal error needs a reset: Fabric Manager aborted the CUDA jobs "
        "using it and left the system uninitialised (an NVSwitch reset), or the GPU whose link "
        "failed must be reset (a port reset); new CUDA jobs on it fail until then",
        fix=_RESET_FABRIC + _HARDWARE,
        layer="fabric",
        texts=(
            "Aborting all the CUDA jobs and leaving the system uninitialized",
            "experienced an NVLink fatal error and requires port reset to recover",
        ),
        source=GUIDE,
    ),
    Entry(
        code="topology-mismatch",
        name="NVSwitch count does not match a supported topology",
        cause="Fabric Manager found fewer (or more) NVSwitches than any supported board has and "
        "aborted: an NVSwitch failed, is not enumerated on PCIe, or its driver did not bind, so "
        "the GPUs stay out of the fabric (CUDA error 802)",
        fix="count the switches (`lspci | grep -i nvidia`, `dmesg | grep -i nvswitch`, `nvidia-smi "
        "-q | grep -i nvswitch`); power-cycle {node} (a cold reboot, not a warm one); if a switch "
        "is still missing, open a hardware case with the system vendor",
        layer="fabric",
        texts=("detected number of NVSwitches don't match with any supported system topology",),
    ),
    Entry(
        code="nvswitch-fatal-error",
        name="NVSwitch fatal error logged by Fabric Manager",
        cause="Fabric Manager saw a fatal NVSwitch error (SXid {sxid}): the "
        "NVLink traffic through that switch stopped and jobs using it failed",
        fix="look SXid {sxid} up (`gpuctl explain` on the kernel log's `SXid` lines); "
        + _RESET_FABRIC
        + _HARDWARE,
        layer="fabric",
        aliases=("fatal",),
    ),
    Entry(
        code="nvswitch-non-fatal-error",
        name="NVSwitch non-fatal error logged by Fabric Manager",
        cause="Fabric Manager saw a non-fatal NVSwitch error (SXid {sxid}): "
        "traffic goes on, but repeated errors on one port point at a failing link",
        fix="nothing for one line; if it repeats, check the links (`nvidia-smi nvlink -e`, "
        "`dmesg | grep -i sxid`) and at the next maintenance " + _RESET_FABRIC + _HARDWARE,
        layer="fabric",
        aliases=("non-fatal",),
    ),
    Entry(
        code="multicast-team",
        name="GPU missing from an NVLink multicast team",
        cause="Fabric Manager could not set up an NVLink multicast (NVLS) team because a GPU of the "
        "request is not registered with the fabric (it lost its NVLinks or was reset): NCCL's "
        "NVLS collectives fail on that node",
        fix="check every GPU's fabric state (`nvidia-smi -q | grep -A2 Fabric`); " + _RESET_FABRIC,
        layer="fabric",
        texts=("failed to find the GPU handle",),
    ),
    Entry(
        code="ib-umad-not-loaded",
        name="NVLink 5 start-up without the ib_umad kernel module",
        cause="on an NVLink 5 system (HGX/DGX B200, B300, GB200) Fabric Manager and the NVLink "
        "Subnet Manager (nvlsm) talk to the NVSwitches through InfiniBand management datagrams, "
        "and the kernel module ib_umad that provides them is not loaded, so neither starts and "
        "the GPUs stay out of the fabric (CUDA error 802)",
        fix="on {node}: `sudo modprobe ib_umad`, make it load at boot (`echo ib_umad | sudo tee "
        "/etc/modules-load.d/nvidia-fabricmanager.conf`), then `sudo systemctl restart "
        "nvidia-fabricmanager` and check `nvidia-smi -q | grep -A2 Fabric` says Completed",
        layer="driver",
        texts=(
            "has not been loaded, fabric manager cannot be started",
            "is ib_umad module loaded?",
        ),
    ),
    Entry(
        code="start-script-arguments",
        name="Fabric Manager start script given the old arguments",
        cause="nvidia-fabricmanager-start.sh (the NVLink 5 start script) was called with "
        "nv-fabricmanager's own arguments (a bare config file path) and only printed its usage: "
        "Fabric Manager never started (seen in GPU Operator driver containers starting it for "
        "NVLink 5)",
        fix="start it as its unit does (`nvidia-fabricmanager-start.sh --mode start --fm-config-file "
        "/usr/share/nvidia/nvswitch/fabricmanager.cfg`); with the GPU Operator, move to a driver "
        "image/Operator release that does, or run Fabric Manager on the host "
        "(`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`)",
        layer="packages",
        texts=("Unknown option: /usr/share/nvidia/nvswitch/fabricmanager.cfg",),
    ),
    Entry(
        code="service-failed",
        name="Fabric Manager service failed",
        cause="the nvidia-fabricmanager service exited or failed to start, so the GPUs of this "
        "NVSwitch system do not join the NVLink fabric (CUDA error 802); the journal lines just "
        "before this one say why",
        fix=_START,
        layer="config",
        texts=(
            "Failed to start NVIDIA fabric manager service",
            "nvidia-fabricmanager.service: Control process exited",
            "nvidia-fabricmanager.service: Main process exited",
            "nvidia-fabricmanager.service: Failed with result",
            "Job for nvidia-fabricmanager.service failed",
            'fabricmanager.cfg" failed! Exit code',
        ),
    ),
)

# nvidia-smi -q pads each field name to a column ("State                 : In Progress"): two or
# more blanks before the colon tell its rows from `kubectl describe`'s "Status:  Running".
_ROW = r"(?m)^[ \t]*"
_COLON = r"[ \t]{2,}:[ \t]*"

CATALOGUE = Catalogue(
    id="fabric-manager",
    title="NVIDIA Fabric Manager and the GPUs' NVLink fabric state",
    source=GUIDE,
    version="Fabric Manager user guide (release 2.3, R580); NVML fabric definitions (R580)",
    entries=(*_SMI, *_LOG),
    applies_to=("host", "kernel", "nvidia-smi", "operator-driver", "operand"),
    readers=(
        # nvidia-smi -q's Fabric rows with a fixed bad value: the row is the code
        # ("State : In Progress" once its padding is made one space).
        _ROW
        + r"(?P<code>(?:State"
        + _COLON
        + r"(?:Not Started|In Progress)|Summary"
        + _COLON
        + r"(?:Unhealthy|Limited Capacity)|Bandwidth"
        + _COLON
        + r"Degraded|(?:Route Recovery in progress|Route Unhealthy|Access Timeout Recovery)"
        + _COLON
        + r"True))[ \t]*$",
        # ... and the rows whose bad value is any but the healthy ones (an NVML error string).
        _ROW
        + r"(?P<code>Status|Incorrect Configuration)"
        + _COLON
        + r"(?!Success\b|N/A\b|None\b|Not Supported\b|\[)(?P<value>\S[^\n]*?)[ \t]*$",
        # fabricmanager.log / journal: "detected NVSwitch fatal error 20034 on fid 0 on NVSwitch
        # pci bus id 00000000:86:00.0 physical id 3 port 33" (fid, or NodeId in newer releases).
        r"(?-i:detected NVSwitch )(?P<code>non-fatal|fatal) error (?P<sxid>\d+)"
        r"(?: on \w+ \d+ on NVSwitch pci bus id (?P<switch>[0-9a-fA-F:.]+))?",
    ),
)
