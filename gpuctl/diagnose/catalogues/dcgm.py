"""DCGM return codes: every `dcgmReturn_t` of DCGM's `dcgm_structs.h` (DCGM_ST_OK aside), with the
text `errorString()` gives it (what dcgmi, nv-hostengine's clients and dcgm-exporter print), the
text of DCGM's Python bindings where it differs, `dcgmi diag`'s failed tests, and dcgm-exporter's
warning when it lacks the privilege profiling metrics need.

A line names a code in one of these ways, each read here:

- its symbol (`DCGM_ST_CONNECTION_NOT_VALID`), or the Python bindings' exception class
  (`DCGMError_ConnectionNotValid`);
- its number where DCGM prints one (`DCGM_PROFILING_SR_WATCH_FIELDS failed with -33`,
  `DCGM Error with code -21`);
- its message: a distinctive one anywhere in a line, a short one ("Timeout", "No permission") only
  where DCGM prints a message (after `nv-hostengine:`, `DCGM:`, `fields:`, `metrics:`, `Return:`,
  `Result:`), since other programs print those words too;
- a failed row of `dcgmi diag`'s result table (`| Diagnostic | Fail - All`, `GPU0: Fail`).
"""

from __future__ import annotations

import re

from gpuctl.diagnose.catalogue import Catalogue, Entry

_SOURCE = "https://github.com/NVIDIA/DCGM/blob/master/dcgmlib/dcgm_structs.h"
_STRINGS = "https://github.com/NVIDIA/DCGM/blob/master/dcgmlib/src/dcgm_errors.c"
_EXPORTER = "https://github.com/NVIDIA/dcgm-exporter"

# --- fixes shared by several codes --------------------------------------------------------------
_HOSTENGINE = (
    "check the host engine the client talks to: on {node} `systemctl status nvidia-dcgm` (or "
    "`nv-hostengine` running) and `dcgmi discovery -l`; a dcgm-exporter started with `-r "
    "HOST:5555` (DCGM_REMOTE_HOSTENGINE_INFO) needs nv-hostengine listening there, otherwise drop "
    "`-r` so it runs its own embedded engine; then restart the exporter pod (`kubectl -n "
    "{namespace} delete pod POD`)"
)
_NVML = (
    "run `nvidia-smi` on {node} and in the DCGM/exporter pod (`kubectl -n {namespace} exec POD -- "
    "nvidia-smi`): if the host fails, reinstall/reload the driver (`gpuctl bootstrap --phase host "
    "-i INVENTORY --limit {node}`); if only the pod fails, give it the NVIDIA runtime "
    "(runtimeClassName nvidia)"
)
_RESET = (
    "drain {node} (`kubectl drain {node} --ignore-daemonsets`), reset the GPU (`nvidia-smi -r -i "
    "GPU`) or reboot {node}; if it recurs, run `dcgmi diag -r 3` and replace the GPU it names"
)
_PROFILING = (
    "profiling (DCP) metrics need a data-center GPU, the exporter with CAP_SYS_ADMIN, and no other "
    "profiler on the GPU: drop the DCGM_FI_PROF_* rows from the exporter's metrics CSV on {node}'s "
    "GPUs, or give the exporter `--cap-add SYS_ADMIN`; on MIG GPUs run nv-hostengine separately"
)
# DCGM's profiling on a driver that runs the GSP firmware (NVIDIA/dcgm-exporter issues on A10G
# nodes with the 535 OS driver packages): the GSP's own errors are in the kernel log.
_GSP = (
    "check `dmesg | grep -i gsp` on {node}: with GSP errors there, run the driver without the GSP "
    "firmware (proprietary kernel modules only: `options nvidia NVreg_EnableGpuFirmware=0` in "
    "/etc/modprobe.d/, then reboot) or move to a driver release whose GSP supports DCGM profiling, "
    "or stop collecting DCP metrics on those nodes"
)
_DIAG = (
    "read what `dcgmi diag -r 1 -j` reports per test (and nvvs.log beside it); rerun the diagnostic "
    "once the GPUs are idle (`kubectl drain {node} --ignore-daemonsets`)"
)
_API = (
    "a DCGM client bug or a client built against another DCGM: upgrade the client (dcgm-exporter, "
    "dcgmi) to the DCGM release the host engine runs (`dcgmi -v`), and report it to the client's "
    "project if it persists"
)
_INSTALL = (
    "install DCGM's packages of one release on {node} (`datacenter-gpu-manager-4-core` with its "
    "`-cuda12`/`-cuda13` part, or the exporter image that bundles them), then `systemctl restart "
    "nvidia-dcgm`"
)


def _code(  # noqa: PLR0917 - one positional row per code reads as the table it copies
    number: int,
    name: str,
    message: str,
    layer: str,
    cause: str,
    fix: str,
    *,
    binding: str = "",
    distinctive: bool = True,
    transient: bool = False,
    texts: tuple[str, ...] = (),
) -> Entry:
    """A DCGM_ST_ code as an entry, known by its symbol, number, Python class and messages.

    `distinctive`: the message is DCGM's own wording, safe to look for anywhere in a line;
    otherwise it is read only after a DCGM prefix (see _CONTEXT).
    """
    camel = "".join(part.capitalize() for part in name.split("_"))
    messages = tuple(m for m in (message, binding) if m)
    # A message's final period is not part of what clients print after it ("... on this system"
    # ends a dcgm-exporter line; a binding adds its own punctuation).
    own = tuple(m.rstrip(".") for m in messages if distinctive and len(m) >= 28)
    return Entry(
        code=name,
        name=f"DCGM_ST_{name} ({number})",
        cause=f"DCGM error {number} (DCGM_ST_{name}, {message!r}): {cause}",
        fix=fix,
        layer=layer,
        aliases=(f"DCGM_ST_{name}", str(number), camel, *messages),
        texts=(*own, *texts),
        transient=transient,
    )


_CODES: tuple[Entry, ...] = (
    _code(-1, "BADPARAM", "Bad parameter passed to function", "application",
          "the client passed DCGM an invalid argument (a GPU id, group or field that does not exist)",
          _API),
    _code(-3, "GENERIC_ERROR", "Generic unspecified error", "plugin",
          "DCGM failed without naming why; the host engine's log says more",
          "read nv-hostengine's log (`journalctl -u nvidia-dcgm` on {node}, "
          "/var/log/nv-hostengine.log, or the exporter pod's log), then restart the engine "
          "(`systemctl restart nvidia-dcgm` or delete the exporter pod)",
          distinctive=False),
    _code(-4, "MEMORY", "Out of memory error", "plugin",
          "the host engine (or the exporter embedding it) ran out of memory",
          "raise the exporter's memory limit (GPU Operator `dcgmExporter.resources`) or the "
          "node's free memory, then restart it (`kubectl -n {namespace} delete pod POD`)",
          distinctive=False),
    _code(-5, "NOT_CONFIGURED", "Setting not configured", "config",
          "the requested DCGM setting (a policy, a configuration) was never set",
          "set it first (`dcgmi config --set ...` / `dcgmi policy --set ...`), or stop asking for it",
          distinctive=False),
    _code(-6, "NOT_SUPPORTED", "Feature not supported", "config",
          "this GPU, driver or DCGM build does not support the requested feature (e.g. a metric or "
          "a setting consumer GPUs lack)",
          "stop requesting it on {node}'s GPUs (remove the field from the exporter's metrics CSV); "
          "check the GPU model against DCGM's supported list (`dcgmi discovery -l`)",
          distinctive=False),
    _code(-7, "INIT_ERROR", "DCGM initialization error", "toolkit",
          "DCGM could not start: most often its host engine cannot initialise NVML because the "
          "container sees no NVIDIA driver or GPU (not run with the NVIDIA runtime, driver not "
          "loaded, or a device NVML does not support)",
          _NVML, distinctive=False, texts=("DCGM initialization error",)),
    _code(-8, "NVML_ERROR", "NVML error", "driver",
          "an NVML call inside DCGM failed (driver not loaded, driver/library mismatch, GPU fallen "
          "off the bus); nv-hostengine's log names the NVML error",
          _NVML, distinctive=False),
    _code(-9, "PENDING", "Object is in a pending state", "plugin",
          "the DCGM object is still being set up (a pending configuration or watch)",
          "retry after a few seconds; if it stays pending, restart nv-hostengine (`systemctl "
          "restart nvidia-dcgm` on {node}, or delete the exporter pod)",
          transient=True),
    _code(-10, "UNINITIALIZED", "Object is in an undefined state", "plugin",
           "the client used DCGM before initialising it or after its host engine went away",
           _HOSTENGINE),
    _code(-11, "TIMEOUT", "Timeout", "plugin",
          "a DCGM request timed out: the host engine is overloaded, hung, or waiting on a GPU that "
          "does not answer",
          "check the GPUs on {node} (`nvidia-smi`; a hung GPU shows Xid errors in `dmesg`), then "
          "restart nv-hostengine (`systemctl restart nvidia-dcgm`, or delete the exporter pod)",
          distinctive=False, transient=True),
    _code(-12, "VER_MISMATCH", "API version mismatch", "packages",
          "the client and the host engine are different DCGM releases and disagree on a structure "
          "version (e.g. a DCGM 3 client against a DCGM 4 nv-hostengine)",
          "use one DCGM release on {node}: match dcgm-exporter's DCGM version (its image tag, "
          "`<dcgm>-<exporter>`) to the host's nv-hostengine (`dcgmi -v`), or let the exporter embed "
          "its own engine (no `-r`)",
          distinctive=False),
    _code(-13, "UNKNOWN_FIELD", "Unknown field identifier", "config",
          "a field id the host engine does not know: the metrics list names a field newer than this "
          "DCGM",
          "remove the field from the exporter's metrics CSV or upgrade DCGM on {node} to a release "
          "that defines it",
          binding="Unknown field", distinctive=False),
    _code(-14, "NO_DATA", "No data is available", "plugin",
          "DCGM has no sample yet for the field (just started watching, or the GPU does not report it)",
          "wait one update interval and read again; if it stays empty, the GPU does not report that "
          "field: drop it from the metrics CSV",
          distinctive=False, transient=True),
    _code(-15, "STALE_DATA", "Only stale data is available", "plugin",
          "the field's last sample is old: the host engine stopped updating it (watch lost, engine hung)",
          "restart nv-hostengine or the exporter pod on {node} (`kubectl -n {namespace} delete pod POD`)",
          binding="Data is considered stale", distinctive=False, transient=True),
    _code(-16, "NOT_WATCHED", "Field is not being watched", "plugin",
          "the field was read before a watch was set on it (or the watch was dropped when the engine "
          "restarted)",
          "restart the client (exporter pod) so it sets its watches again; with a remote host engine, "
          "restart the exporter whenever nv-hostengine restarts",
          binding="Field is not being updated", distinctive=False),
    _code(-17, "NO_PERMISSION", "No permission", "config",
          "the DCGM operation needs privileges the host engine or client lacks (root, CAP_SYS_ADMIN "
          "for profiling metrics)",
          "run nv-hostengine as root; give dcgm-exporter `--cap-add SYS_ADMIN` (GPU Operator sets it) "
          "for profiling metrics",
          binding="Not permissioned", distinctive=False),
    _code(-18, "GPU_IS_LOST", "GPU is lost", "hardware",
          "a GPU stopped answering (fallen off the bus or crashed); every program using it fails "
          "until a reset or reboot",
          _RESET, binding="GPU is unreachable", distinctive=False),
    _code(-19, "RESET_REQUIRED", "GPU requires reset", "hardware",
          "the GPU is in a state only a reset clears (after an uncorrectable error or a pending "
          "memory repair)",
          _RESET, binding="GPU requires a reset", distinctive=False),
    _code(-20, "FUNCTION_NOT_FOUND", "The requested function was not found", "packages",
          "the DCGM library loaded lacks a function the client (Python or Go bindings) calls: the "
          "library is older than the bindings",
          _INSTALL, binding="Unable to find function", distinctive=False),
    _code(-21, "CONNECTION_NOT_VALID", "Host engine connection invalid/disconnected", "plugin",
          "the client cannot reach nv-hostengine, or lost it: no host engine runs at the address "
          "given (default localhost:5555 or the unix socket), or it was restarted or crashed",
          _HOSTENGINE,
          binding="The connection to the host engine is not valid any longer",
          texts=("unable to establish a connection to the specified host",
                 "Unable to connect to host engine",
                 # dcgm-exporter in remote mode (-r, DCGM_REMOTE_HOSTENGINE_INFO)
                 "Failed to connect to remote hostengine",
                 "Both embedded and remote DCGM failed")),
    _code(-22, "GPU_NOT_SUPPORTED", "This GPU is not supported by DCGM", "config",
          "DCGM does not manage this GPU model (consumer or too old a GPU)",
          "use DCGM only on supported data-center GPUs: keep dcgm-exporter off {node} (GPU Operator "
          "`dcgmExporter.enabled=false` or a node selector), or read basic metrics another way"),
    _code(-23, "GROUP_INCOMPATIBLE", "The GPUs of this group are incompatible with each other for "
          "the requested operation", "config",
          "the GPUs put in one DCGM group differ (models, MIG and non-MIG) where the operation needs "
          "them alike",
          "split the group by GPU model (`dcgmi group -c NAME -a GPU_IDS`) and run the operation per "
          "group", binding="GPUs are incompatible with each other for the requested operation"),
    _code(-24, "MAX_LIMIT", "Max limit reached for the object", "plugin",
          "a DCGM table is full (too many groups, field groups or watches), often left by clients "
          "that exited without cleaning up",
          "restart nv-hostengine on {node} (`systemctl restart nvidia-dcgm`) and the clients using it"),
    _code(-25, "LIBRARY_NOT_FOUND", "DCGM library could not be found", "packages",
          "libdcgm.so (the version the client loads, e.g. libdcgm.so.4) is not installed or not on "
          "the library path", _INSTALL),
    _code(-26, "DUPLICATE_KEY", "Duplicate Key passed to function", "application",
          "the client passed the same key twice (e.g. a group or field-group name already in use)",
          "use a unique name, or delete the stale group first (`dcgmi group -l`, `dcgmi group -d ID`)",
          binding="Duplicate key passed to function"),
    _code(-27, "GPU_IN_SYNC_BOOST_GROUP", "GPU is a part of a Sync Boost Group", "config",
          "the GPU already belongs to a sync-boost group", "remove it from that group first "
          "(`dcgmi config`), or leave it there",
          binding="GPU is already a part of a sync boost group"),
    _code(-28, "GPU_NOT_IN_SYNC_BOOST_GROUP", "GPU is not a part of Sync Boost Group", "config",
          "the GPU is not in the sync-boost group the request names",
          "add it to the group first, or name the right group",
          binding="GPU is not a part of the sync boost group"),
    _code(-29, "REQUIRES_ROOT", "Host engine is running as non-root", "config",
          "the operation (configuration, NVSwitch, diagnostics) needs nv-hostengine running as root",
          "run nv-hostengine as root (the nvidia-dcgm service does; in a pod, run the container as "
          "uid 0)",
          binding="This operation is not supported when the host engine is running as non root"),
    _code(-30, "NVVS_ERROR", "DCGM GPU Diagnostic returned an error", "hardware",
          "the DCGM diagnostic (NVVS) ran and found a failure on a GPU",
          _DIAG + "; replace the GPU if a test fails again",
          binding="DCGM GPU Diagnostic returned an error."),
    _code(-31, "INSUFFICIENT_SIZE", "An input argument is not large enough", "application",
          "the client gave DCGM a buffer too small for the answer", _API),
    _code(-32, "FIELD_UNSUPPORTED_BY_API", "The given field ID is not supported by the API being "
          "called", "application",
          "the field cannot be read through this DCGM call", _API),
    _code(-33, "MODULE_NOT_LOADED", "This request is serviced by a module of DCGM that is not "
          "currently loaded", "plugin",
          "the DCGM module serving the request (profiling, NVSwitch, diagnostics) did not load: for "
          "profiling metrics, the GPU is not a data-center GPU or another nv-hostengine already "
          "holds the GPUs' profiler",
          _PROFILING),
    _code(-34, "IN_USE", "The requested operation could not be completed because the affected "
          "resource is in use", "plugin",
          "another process holds what DCGM needs: a second host engine (an embedded one in "
          "dcgm-exporter beside the node's nv-hostengine), a profiler (Nsight), or a job on the GPU",
          "run one host engine per node: point the exporter at the node's nv-hostengine (`-r "
          "localhost:5555`) or stop the other one; stop profilers, or drain {node} first for a "
          "diagnostic"),
    _code(-35, "GROUP_IS_EMPTY", "The specified group is empty, and this operation is incompatible "
          "with an empty group", "config",
          "the DCGM group has no GPU in it: none were found or the ones named do not exist",
          "check that DCGM sees the GPUs (`dcgmi discovery -l` on {node}); add GPUs to the group"),
    _code(-36, "PROFILING_NOT_SUPPORTED", "Profiling is not supported for this group of GPUs or "
          "GPU", "config",
          "profiling (DCP) metrics are not available on these GPUs (consumer, too old, or vGPU/MIG "
          "without support)", _PROFILING),
    _code(-37, "PROFILING_LIBRARY_ERROR", "The third-party Profiling module returned an "
          "unrecoverable error", "plugin",
          "DCGM's profiling module failed: another profiler or host engine holds the GPU's "
          "performance counters, the container lacks CAP_SYS_ADMIN, or the driver does not "
          "support DCGM's profiling on this GPU (a driver running the GPU's GSP firmware, e.g. the "
          "535 OS packages on A10G cloud nodes, fails it with GSP errors in dmesg)",
          _PROFILING + "; " + _GSP + "; if the GPU also shows ERR! in `nvidia-smi`, reset it "
          "(`nvidia-smi -r -i GPU`)"),
    _code(-38, "PROFILING_MULTI_PASS", "The requested profiling metrics cannot be collected in a "
          "single pass", "config",
          "the profiling metrics requested together need several hardware passes on this GPU",
          "request fewer DCGM_FI_PROF_* metrics together (remove some from the exporter's CSV)"),
    _code(-39, "DIAG_ALREADY_RUNNING", "A diag instance is already running, cannot run a new diag "
          "until the current one finishes", "plugin",
          "another DCGM diagnostic is still running on these GPUs",
          "wait for it (`dcgmi diag` in progress) or stop it, then rerun", transient=True),
    _code(-40, "DIAG_BAD_JSON", "The GPU Diagnostic returned Json that cannot be parsed.", "packages",
          "dcgmi and nvvs disagree on the result format: mixed DCGM packages", _INSTALL),
    _code(-41, "DIAG_BAD_LAUNCH", "Error while launching the GPU Diagnostic.", "packages",
          "the diagnostic (nvvs) could not be started: missing package, wrong path, or no CUDA "
          "for it", _INSTALL + " (with the `-cuda` package matching the driver's CUDA major)"),
    _code(-42, "DIAG_UNUSED", "Unused error code", "plugin",
          "a code DCGM no longer uses (older releases: diagnostic results varying too much)",
          _DIAG, distinctive=False),
    _code(-43, "DIAG_THRESHOLD_EXCEEDED", "A field value met or exceeded the error threshold.",
          "hardware",
          "during the diagnostic a GPU metric (temperature, ECC errors, power) crossed its failure "
          "threshold", _DIAG + "; cool or replace the GPU the failing test names"),
    _code(-44, "INSUFFICIENT_DRIVER_VERSION", "The installed driver version is insufficient for "
          "this API", "driver",
          "the NVIDIA driver on the node is older than this DCGM needs",
          "upgrade the driver on {node} to a branch DCGM supports (`gpuctl bootstrap --phase host -i "
          "INVENTORY --limit {node}`), or use an older DCGM/dcgm-exporter"),
    _code(-45, "INSTANCE_NOT_FOUND", "The specified GPU instance does not exist", "mig",
          "the MIG GPU instance named does not exist (MIG layout changed since the client looked)",
          "list the instances (`nvidia-smi mig -lgi`) and restart the client (exporter pod) after "
          "any MIG reconfiguration"),
    _code(-46, "COMPUTE_INSTANCE_NOT_FOUND", "The specified GPU compute instance does not exist",
          "mig",
          "the MIG compute instance named does not exist (MIG layout changed since the client looked)",
          "list the instances (`nvidia-smi mig -lci`) and restart the client (exporter pod) after "
          "any MIG reconfiguration"),
    _code(-47, "CHILD_NOT_KILLED", "Failed to kill a child process", "plugin",
          "DCGM could not stop one of its child processes (a diagnostic)",
          "restart nv-hostengine on {node}; if a GPU process is stuck, reset the GPU or reboot",
          binding="Couldn't kill a child process within the retries", distinctive=False),
    _code(-48, "3RD_PARTY_LIBRARY_ERROR", "Detected an error in a 3rd-party library", "plugin",
          "a library DCGM uses (CUDA, NVML, NSCQ for NVSwitches) failed",
          "read nv-hostengine's log for the library; on NVSwitch systems install libnvidia-nscq of "
          "exactly the driver's version"),
    _code(-49, "INSUFFICIENT_RESOURCES", "Not enough resources available", "plugin",
          "DCGM lacks the resources (memory, GPU resources) for the request",
          "free the GPUs (drain {node}) or the node's memory, then retry", distinctive=False),
    _code(-50, "PLUGIN_EXCEPTION", "Exception thrown from a diagnostic plugin", "plugin",
          "a diagnostic plugin crashed",
          _DIAG + "; upgrade DCGM if the same plugin fails on healthy GPUs"),
    _code(-51, "NVVS_ISOLATE_ERROR", "The diagnostic returned an error that indicates the need to "
          "drain the GPU", "hardware",
          "the diagnostic found a failure serious enough that the GPU must be taken out of service",
          "drain {node} (`kubectl drain {node} --ignore-daemonsets`), reset the GPU (`nvidia-smi -r "
          "-i GPU`), rerun `dcgmi diag -r 3`; if it fails again, replace the GPU",
          binding="The diagnostic returned an error that indicates the need for isolation"),
    _code(-52, "NVVS_BINARY_NOT_FOUND", "The NVVS binary was not found in the specified location",
          "packages",
          "the diagnostic binary nvvs is not installed where DCGM looks", _INSTALL),
    _code(-53, "NVVS_KILLED", "The DCGM diagnostic was killed by a signal", "plugin",
          "the diagnostic process was killed (out of memory, a timeout, or an operator)",
          _DIAG, binding="The NVVS process was killed by a signal"),
    _code(-54, "PAUSED", "The hostengine and all modules are paused", "plugin",
          "the host engine was paused (`dcgmi set --pause`, e.g. during a GPU reset or driver "
          "upgrade) and does not collect", "resume it: `dcgmi set --resume` on {node}",
          transient=True),
    _code(-55, "ALREADY_INITIALIZED", "The object has already been initialized", "application",
          "the client initialised DCGM twice", _API,
          binding="The object is already initialized", distinctive=False),
    _code(-56, "NVML_NOT_LOADED", "Cannot perform the requested operation because NVML doesn't "
          "exist on this system.", "driver",
          "DCGM found no NVML (libnvidia-ml.so): no NVIDIA driver where DCGM runs, or the container "
          "was not given the driver's libraries", _NVML,
          binding="NVML couldn't be loaded on this system"),
    _code(-57, "NVML_DRIVER_TIMEOUT", "Cannot perform the requested operation because an NVML "
          "driver timeout error was detected", "driver",
          "NVML calls time out: the driver is hung on a GPU",
          "check `nvidia-smi` and `dmesg | grep -i xid` on {node}; drain it and reset the GPU "
          "(`nvidia-smi -r -i GPU`) or reboot, then restart nv-hostengine",
          binding="NVML driver timeout error was detected"),
    _code(-58, "NVVS_NO_AVAILABLE_TEST", "Requested tests were not found among possible test "
          "choices.", "config",
          "the diagnostic was asked for a test this DCGM or GPU does not have",
          "list the tests (`dcgmi diag --help`, `-r 1|2|3|4` levels) and name one that exists",
          binding="The NVVS returns no available tests (NVVS_ST_TEST_NOT_FOUND)"),
    _code(-59, "MNDIAG_CONNECTION_NOT_AVAILABLE", "No connection is currently authorized for "
          "multi-node diagnostic", "config",
          "the multi-node diagnostic has no authorised connection to the other hosts",
          "authorise the head node's connection on each host (DCGM multi-node diagnostic set-up), "
          "then rerun `dcgmi mndiag`"),
    _code(-60, "MNDIAG_CONNECTION_UNAUTHORIZED", "The connection is not authorized for multi-node "
          "diagnostic", "config",
          "this connection may not run multi-node diagnostic operations",
          "run the multi-node diagnostic from the authorised head node",
          binding="The connection is not authorized for multi-node diagnostic operations"),
    _code(-61, "REMOTE_SSH_CONNECTION_FAILED", "An SSH connection to a remote hostengine failed",
          "network",
          "DCGM could not open its SSH tunnel to a remote host engine (multi-node diagnostic)",
          "check SSH from the head node to each host (`ssh HOST true`), keys and host keys"),
    _code(-62, "CHILD_SPAWN_FAILED", "A child process could not be spawned", "plugin",
          "DCGM could not start a child process (a diagnostic, an SSH tunnel)",
          "check the host engine's limits and free memory on {node}; restart nv-hostengine",
          distinctive=False),
    _code(-63, "FILE_IO_ERROR", "A file operation failed", "plugin",
          "DCGM could not read or write a file it needs (logs, diagnostic output)",
          "check the disk and permissions of /var/log and DCGM's directories on {node}",
          distinctive=False),
    _code(-64, "CHILD_SIGNAL_RECEIVED", "A child process received a signal", "plugin",
          "a DCGM child process (diagnostic) was signalled and stopped", _DIAG, distinctive=False),
    _code(-65, "CALLER_ALREADY_STOPPED", "The caller is already stopped", "application",
          "the client asked to stop something already stopped", _API, distinctive=False),
    _code(-66, "DIAG_STOPPED", "The DCGM Diagnostic was stopped", "plugin",
          "the diagnostic was stopped before it finished (`dcgmi diag --stop`, or the engine stopped)",
          _DIAG),
    _code(-67, "GPUS_DETACHED", "Cannot perform the requested operation because the GPUs are "
          "detached", "plugin",
          "DCGM detached from the GPUs (for a GPU reset or driver reload) and has not attached again",
          "once the reset is done, attach again (`dcgmi set --resume` / restart nv-hostengine on {node})",
          transient=True),
)  # fmt: skip

_DIAG_ENTRIES: tuple[Entry, ...] = (
    Entry(
        code="diag-fail",
        name="dcgmi diag test failed",
        cause="a GPU failed a test of the DCGM diagnostic (`dcgmi diag`: the row names the test, "
        "the Warning rows under it the error and the GPU): a hardware, memory, PCIe/NVLink or "
        "driver fault on that GPU",
        fix=_DIAG + "; for the GPU it names: drain {node}, reset the GPU (`nvidia-smi -r -i GPU`) "
        "and rerun `dcgmi diag -r 3`; if it fails again, replace the GPU",
        layer="hardware",
        aliases=("Fail",),
        source="https://github.com/NVIDIA/DCGM/blob/master/dcgmi/Diag.cpp",
    ),
)

# The Warning rows of `dcgmi diag`: DCGM_FR_* messages of dcgm_errors.h (the families dcgmi prints
# on one line of its table). They say why the test above them failed, so each is its own entry.
_FR = "https://github.com/NVIDIA/DCGM/blob/72fa3feaa67d716a75323a8f47c34ff3ee73f824/dcgmlib/dcgm_errors.h"
_DIAG_GPU = (
    "drain {node} (`kubectl drain {node} --ignore-daemonsets`), reset the GPU the warning names "
    "(`nvidia-smi -r -i GPU`) and rerun `dcgmi diag -r 3`; if it fails again, replace the GPU"
)

_DIAG_WARNINGS: tuple[Entry, ...] = (
    Entry(
        code="diag-nvlink-down",
        name="dcgmi diag: NvLink link down",
        cause="DCGM (the diagnostic's PCIe/NVLink test, or its NVLink health watch) found NVLink "
        "links of the GPU down (DCGM_FR_NVLINK_DOWN). On a GPU without NVLink (a PCIe card, an "
        "A100/H100 PCIe without a bridge) every link reads down and the failure is a known DCGM "
        "false positive (NVIDIA/DCGM#49: DCGM checks NVLink state on every GPU), not a fault; on an "
        "NVLink or NVSwitch system the link did not train (NVLink bridge or baseboard fault, Fabric "
        "Manager not running)",
        fix="check whether the GPU has NVLink at all: on {node} `nvidia-smi nvlink -s` and `nvidia-smi "
        "topo -m` (PCIe-only GPUs show no NV# links): if it has none, the GPU is not at fault: "
        "do not reset or replace it; ignore the warning, leave NVLink out of DCGM's health watches "
        "on such nodes (`dcgmi health -s` without `n`) and upgrade DCGM (`dcgmi -v`) once a release "
        "fixes the check; if it has NVLink: `systemctl status "
        "nvidia-fabricmanager` on NVSwitch systems, reseat the bridge, then " + _DIAG_GPU,
        layer="fabric",
        aliases=("is currently down",),
        source=_FR,
    ),
    Entry(
        code="diag-nvlink-errors",
        name="dcgmi diag: NVLink errors or links missing",
        cause="the diagnostic counted NVLink errors above its limit, found fewer NVLinks up than the "
        "GPU or NVSwitch should have, a NVSwitch port down, NVSwitch fatal errors (SXid) or a Fabric "
        "Manager training error (DCGM_FR_NVLINK_*, DCGM_FR_NVSWITCH_*): an NVLink, NVSwitch or "
        "fabric fault on the node",
        fix="on {node}: `nvidia-smi nvlink -s` and `nvidia-smi nvlink -e` (error counters), "
        "`systemctl status nvidia-fabricmanager` and `dmesg | grep -i -e sxid -e xid`; then " + _DIAG_GPU,
        layer="fabric",
        aliases=("NvLink port",),
        texts=(
            "NvLinks are up out of the expected",
            "NvLink errors on GPU",
            "NvLink errors found occuring per second on GPU",
            "Detected fatal errors on NvSwitch",
            "Detected nonfatal errors on NvSwitch",
            "Detected fatal NvSwitch SXID",
            "exceeds minimum threshold on GPU",
        ),
        source=_FR,
    ),
    Entry(
        code="diag-memory-errors",
        name="dcgmi diag: GPU memory errors",
        cause="the diagnostic found uncorrectable memory errors on the GPU (double-bit ECC errors, "
        "faulty memory elements, retired pages or row remapping failed or pending: "
        "DCGM_FR_VOLATILE_DBE_DETECTED, DCGM_FR_FAULTY_MEMORY, DCGM_FR_*ROW_REMAP*, "
        "DCGM_FR_*RETIRE*)",
        fix="on {node}: `nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT -i GPU`; a pending remap "
        "or retirement takes effect at the next GPU reset: " + _DIAG_GPU,
        layer="memory",
        texts=(
            "volatile double-bit ECC error(s)",
            "faulty memory elements on GPU",
            "row remapping failed",
            "row remappings are pending",
            "rows were remapped",
            "exceeded uncorrectable row remap limit",
            "retired pages have been detected",
            "A pending retired page has been detected",
            "Pending page retirements together with a DBE",
            "retired pages due to DBEs",
            "NaN-value memory elements on GPU",
        ),
        source=_FR,
    ),
    Entry(
        code="diag-thermal-power",
        name="dcgmi diag: thermal or power limit",
        cause="the GPU was throttled during the diagnostic by a thermal or power violation (clocks "
        "event), or exceeded the maximum temperature (DCGM_FR_CLOCKS_EVENT_*, "
        "DCGM_FR_THERMAL_VIOLATIONS, DCGM_FR_TEMP_VIOLATION): cooling, airflow or power delivery, "
        "not the GPU's logic",
        fix="on {node}: `nvidia-smi -q -d TEMPERATURE,POWER,PERFORMANCE -i GPU` (clock event "
        "reasons); check fans, airflow and the power supply and cabling, then rerun `dcgmi diag -r 3`",
        layer="hardware",
        texts=(
            "clocks event due to thermal violation",
            "clocks event due to power violation",
            "There were thermal violations totaling",
            "exceeded user-specified maximum allowed temperature",
        ),
        source=_FR,
    ),
    Entry(
        code="diag-pcie",
        name="dcgmi diag: PCIe link degraded",
        cause="the GPU's PCIe link runs below the expected generation or width, or replays PCIe "
        "transfers too often (DCGM_FR_PCIE_GENERATION, DCGM_FR_PCIE_WIDTH, DCGM_FR_PCI_REPLAY_RATE): "
        "a riser, slot, cable or BIOS setting, or the GPU's connector",
        fix="on {node}: `nvidia-smi -q -d PCIE -i GPU` (link generation and width, current vs max, "
        "replay counter) and `sudo lspci -vv -s BUS | grep -i lnk`; check the BIOS PCIe settings and "
        "reseat the GPU or its riser, then rerun `dcgmi diag -r 3`",
        layer="hardware",
        texts=(
            "PCIe replays per minute for GPU",
            "host-side PCIe replay violation",
            "which is below the minimum allowed link generation",
        ),
        source=_FR,
    ),
    Entry(
        code="diag-environment",
        name="dcgmi diag: environment not ready for the test",
        cause="the diagnostic found the node's set-up unfit for the test rather than a GPU fault "
        "(persistence mode off, processes with graphics contexts on the GPU, a CUDA environment "
        "variable that limits performance, a driver on DCGM's denylist)",
        fix="on {node}: `sudo nvidia-smi -pm 1`, stop the processes `nvidia-smi` lists on the GPUs "
        "(drain the node), unset the CUDA variable the warning names, or install a driver DCGM "
        "supports; then rerun `dcgmi diag`",
        layer="config",
        texts=(
            "processes with graphics contexts open",
            "Found CUDA performance-limiting environment variable",
            "Found driver on the denylist",
        ),
        source=_FR,
    ),
)

_EXPORTER_ENTRIES: tuple[Entry, ...] = (
    Entry(
        code="exporter-no-sys-admin",
        name="dcgm-exporter without CAP_SYS_ADMIN",
        cause="dcgm-exporter is asked for profiling (DCGM_FI_PROF_*) metrics but runs without "
        "CAP_SYS_ADMIN, so those metrics stay empty",
        fix="give the exporter container `securityContext.capabilities.add: [SYS_ADMIN]` (docker: "
        "`--cap-add SYS_ADMIN`), or remove the DCGM_FI_PROF_* rows from its metrics CSV",
        layer="config",
        texts=("dcgm-exporter doesn't have sufficient privileges to expose profiling metrics",),
        source=_EXPORTER,
    ),
    Entry(
        code="exporter-pod-resources",
        name="dcgm-exporter cannot reach the kubelet's pod-resources socket",
        cause="dcgm-exporter's Kubernetes mode maps each GPU to the pod using it through the "
        "kubelet's pod-resources API and cannot reach it: the socket it mounts "
        "(/var/lib/kubelet/pod-resources/kubelet.sock) is not where this kubelet keeps it (a "
        "kubelet --root-dir such as /opt/kubelet, MicroK8s, k0s), SELinux or permissions refuse "
        "the socket, or the kubelet does not serve that API version; the metrics lose their pod, "
        "namespace and container labels",
        fix="on {node}: `ls -l <kubelet root-dir>/pod-resources/kubelet.sock` (`ps -o args= -C "
        "kubelet | tr ' ' '\\n' | grep root-dir`); point the exporter's hostPath at it (the Helm "
        "chart's `kubeletPath`, e.g. /opt/kubelet/pod-resources) or bind-mount it onto "
        "/var/lib/kubelet/pod-resources; on SELinux hosts run the exporter privileged; then "
        "restart the exporter pod",
        layer="config",
        aliases=("failure connecting to",),
        texts=("failure getting pod resources",),
        source=_EXPORTER + "/blob/d5e5f510a1b6b393f39a43293ccd9dc985defc79/internal/pkg/"
        "transformation/kubernetes.go",
    ),
    Entry(
        code="exporter-metrics-file",
        name="dcgm-exporter cannot read its metrics file",
        cause="dcgm-exporter could not read the CSV that lists the metrics to collect (its `-f` "
        "file, DCGM_EXPORTER_COLLECTORS): a line of it is not `field, type, help` (`record on line "
        "N: wrong number of fields`: a field without its type or help, a stray comma), or the "
        "ConfigMap with a custom metrics file is missing, mounted at another path, or names a key "
        "that is not in it (the GPU Operator's `dcgmExporter.config.name`, the Helm chart's "
        "`arguments`), so the exporter exits",
        fix="`kubectl -n NAMESPACE get configmap` for the metrics ConfigMap and compare its key with "
        "the path in the exporter's args (`kubectl -n NAMESPACE get ds nvidia-dcgm-exporter -o yaml "
        "| grep -A3 -e args -e DCGM_EXPORTER_COLLECTORS`); give every line of the CSV its three "
        "fields (`DCGM_FI_DEV_GPU_UTIL, gauge, GPU utilization (in %).`), create the ConfigMap or "
        "point `-f` at a file of the image (/etc/dcgm-exporter/default-counters.csv), then restart "
        "the exporter",
        layer="config",
        texts=("Could not read metrics file",),
        source=_EXPORTER,
    ),
    Entry(
        code="profiling-module-failed",
        name="DCGM profiling module failed to load",
        cause="the host engine's profiling module (DCP metrics, DCGM_FI_PROF_*) did not initialize, so "
        "the profiling fields cannot be watched: the GPU does not support DCGM profiling (not a "
        "data-center GPU, or a MIG or vGPU set-up that hides the profiler), another profiler or "
        "nv-hostengine holds the GPU's performance counters (a second DCGM, Nsight Compute, a "
        "dcgm-exporter with an embedded engine beside the node's nvidia-dcgm), the engine lacks "
        "CAP_SYS_ADMIN, or the driver runs the GPU's GSP firmware and its profiling fails (GSP "
        "errors in dmesg)",
        fix="on {node}: `dcgmi profile -l` shows whether the GPU supports profiling; run one host "
        "engine per node (point dcgm-exporter at the node's with DCGM_REMOTE_HOSTENGINE_INFO, or "
        "stop the other), give the exporter CAP_SYS_ADMIN, or drop the DCGM_FI_PROF_* rows from "
        "its metrics CSV on GPUs without profiling; " + _GSP + "; then restart the exporter",
        layer="plugin",
        texts=(
            "DcgmModuleProfiling failed to initialize",
            "Profiling API panic - DCP metrics disabled",
        ),
        source=_EXPORTER,
    ),
)

# The host engine's own start-up failures (nv-hostengine, or the engine dcgm-exporter embeds): the
# line says the engine did not come up, and the number it carries (a dcgmReturn_t, read by the
# readers) says why. Texts from DcgmHostEngineHandler.cpp (`CacheManager Init Failed. Error: `,
# `Cannot initialize the hostengine: `) and hostengine/src/main.cpp (`Failed to start DCGM
# Server: `, `Failed to start host engine server`).
_HOSTENGINE_START: tuple[Entry, ...] = (
    Entry(
        code="hostengine-start",
        name="DCGM host engine failed to start",
        cause="DCGM's host engine (nv-hostengine, or the one dcgm-exporter embeds) did not start: in a "
        "pod it most often sees no whole GPU (not run with the NVIDIA runtime or runtimeClassName "
        "nvidia, driver not loaded, only some MIG instances visible: the engine needs every GPU "
        "whole) or lacks a privilege (SYS_ADMIN for profiling metrics); the number on the line is "
        "the dcgmReturn_t that says which",
        fix="run the engine by hand with its log on the console (`kubectl -n {namespace} exec POD -- "
        "nv-hostengine -n -f - --log-level debug`; on a host `nv-hostengine -n -f - --log-level "
        "debug`) and `nvidia-smi` in the same pod; with MIG, run nv-hostengine on the node (or a "
        "privileged pod) and the exporter with `-r HOST:5555`; give the pod the NVIDIA runtime "
        "(runtimeClassName nvidia) and `capabilities.add: [SYS_ADMIN]`",
        layer="toolkit",
        texts=(
            "CacheManager Init Failed",
            "Failed to start DCGM Server",
            "Cannot initialize the hostengine",
            "DcgmHostEngineHandler::Init failed",
            "Failed to start host engine server",
        ),
        source="https://github.com/NVIDIA/DCGM/blob/master/dcgmlib/src/DcgmHostEngineHandler.cpp",
    ),
)

# Where DCGM prints a return code's message: after these, a short message is DCGM's.
_PREFIX = r"(?-i:nv-hostengine:|DCGM:|fields:|metrics:|Return:|Return :|Result:|to host engine\.)"


def _alternatives(entries: tuple[Entry, ...]) -> str:
    messages = {m for e in entries for m in e.aliases if " " in m}
    ordered = sorted(messages, key=lambda message: (-len(message), message))
    return "|".join(r"\s+".join(re.escape(word) for word in m.split(" ")) for m in ordered)


CATALOGUE = Catalogue(
    id="dcgm",
    title="DCGM return codes (dcgmReturn_t) and dcgm-exporter start-up errors",
    source=_SOURCE,
    version="DCGM 4.6.0 (dcgm_structs.h, dcgm_errors.c errorString); dcgm-exporter 4.x",
    entries=(*_CODES, *_DIAG_ENTRIES, *_DIAG_WARNINGS, *_EXPORTER_ENTRIES, *_HOSTENGINE_START),
    applies_to=("operand", "host"),
    readers=(
        # `DCGM_ST_IN_USE`, `DCGMError_ProfilingLibraryError`, `DCGM Error with code -21`,
        # `DCGM_PROFILING_SR_WATCH_FIELDS failed with -33`. The case-sensitive literal start lets
        # the regex engine skip to each "DCGM" instead of trying every place in the text.
        r"(?-i:DCGM)(?:_ST_(?!OK\b)|Error_|(?: Error with code |_[A-Z_]+ failed with )(?=-\d))"
        r"(?P<code>-\d+|\w+)",
        # The host engine's start-up failures with the code that stopped it: `CacheManager Init
        # Failed. Error: -17`, `Err: Failed to start DCGM Server: -7`.
        r"(?:(?-i:CacheManager) Init Failed\. Error|Failed to start DCGM Server): (?P<code>-\d+)",
        _PREFIX + r"\s*(?P<code>" + _alternatives(_CODES) + r"|Timeout)(?![\w/-])",
        # dcgmi diag's result table: "| Diagnostic                | Fail - All" (DCGM 3),
        # "|                           | Fail - GPU: 0", and "GPU0: Fail" (DCGM 4).
        r"(?-i:\| )(?P<test>[A-Za-z][\w /+.-]*?) +\| (?P<code>Fail)\b",
        r"(?-i:\| )(?P<code>Fail) - GPU: (?P<gpu>\d+)",
        r"(?-i:GPU)(?P<gpu>\d+): (?P<code>Fail)\b",
        # dcgmi diag's Warning rows: "GPU 0's NvLink link 0 is currently down" (DCGM_FR_NVLINK_DOWN),
        # "NvSwitch physical ID 0's NvLink port 3 is currently down." (DCGM_FR_NVSWITCH_DOWN)
        r"(?-i:NvLink link) \d+ (?P<code>is currently down)",
        # dcgm-exporter's pod mapper: `failure connecting to '/var/lib/kubelet/pod-resources/
        # kubelet.sock'` (older releases without the quotes)
        r"(?P<code>(?-i:failure connecting to)) '?[^'\s;]{0,200}/kubelet\.sock",
        r"(?P<code>(?-i:NvLink port)) \d+ is currently down",
    ),
    unknown=Entry(
        code="?",
        name="DCGM return code not in this catalogue",
        cause="DCGM returned {code}, a code newer than this catalogue (DCGM 4.6)",
        fix="look the code up in dcgm_structs.h of the DCGM release on {node} (`dcgmi -v`) and read "
        "nv-hostengine's log (`journalctl -u nvidia-dcgm`)",
        layer="plugin",
        source=_STRINGS,
    ),
)
