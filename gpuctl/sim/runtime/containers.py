"""What a simulated container does: its log, exit code and run time, decided by its argv and the
node's host state. nvidia-smi prints what the node's GPUs would print."""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from gpuctl import nvidia_smi
from gpuctl.nccl_tests import ALL_REDUCE_BINARY
from gpuctl.sim.runtime import workloads
from gpuctl.sim.scenario import NodeSpec

Obj = dict[str, Any]
FOREVER = float("inf")

EXEC_NOT_FOUND = (
    "failed to create containerd task: failed to create shim task: OCI runtime create failed: "
    "runc create failed: unable to start container process: error during container init: "
    'exec: "{binary}": executable file not found in $PATH: unknown'
)
# What the NVIDIA container runtime's prestart hook prints when it cannot initialise NVML for a
# container that asks for GPUs (legacy mode; lines as in NVIDIA's issue threads): the container
# never starts, so the failure is a StartError, not nvidia-smi output.
HOOK_FAILED = (
    "failed to create containerd task: failed to create shim task: OCI runtime create failed: "
    "runc create failed: unable to start container process: error during container init: "
    "error running prestart hook #0: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
    "nvidia-container-cli: initialization error: nvml error: {nvml_error}: unknown"
)
_SHELL_SYNTAX = re.compile(r"[;&|<>$`(){}\n*?]")
_REFERENCE = re.compile(
    r"^[a-z0-9]+([._-][a-z0-9]+)*(:\d+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*(:[\w][\w.-]{0,127})?(@sha256:[a-f0-9]{64})?$"
)


class RunningCommand(Protocol):
    """A container's command running for real (on the host behind a node), outside the engine:
    the kubelet reads its output while it runs and learns of its end through `when_done`."""

    def output(self) -> str:
        """What it printed so far (stdout and stderr, as a container log interleaves them)."""
        ...

    def when_done(self, callback: Callable[[Outcome], None]) -> None:
        """Call `callback` with its log and exit code once it ended (at once if it has), from
        whichever thread saw the end: the callback only hands the outcome to the engine."""
        ...

    def stop(self, grace_seconds: float) -> None:
        """Stop it where it runs (SIGTERM, SIGKILL after the grace); returns at once."""
        ...


@dataclass(frozen=True)
class Outcome:
    log: str = ""
    exit_code: int = 0
    run_seconds: float = 0.0  # FOREVER: runs until deleted
    start_error: str = ""  # a runtime error before the process starts (exit 128, StartError)
    file_path: str = ""  # a file the process wrote its output to instead (see termination.py)
    file_text: str = ""
    running: RunningCommand | None = None  # still running for real; its end decides the rest


def argv_of(container: Obj) -> list[str]:
    return [str(part) for part in (container.get("command") or []) + (container.get("args") or [])]


def is_device_plugin_image(image: str) -> bool:
    return "k8s-device-plugin" in image or "nvidia/gpu-operator" in image


# The daemons NVIDIA's plugin image ships besides the plugin; they run until stopped.
PLUGIN_IMAGE_DAEMONS = frozenset({"mps-control-daemon", "gpu-feature-discovery", "config-manager"})


def is_device_plugin_container(container: Obj) -> bool:
    """The plugin process itself: the plugin image's entrypoint (NVIDIA's static manifest) or
    `nvidia-device-plugin` named as the command (the Helm chart); not the image's other daemons."""
    if not is_device_plugin_image(container.get("image", "")):
        return False
    argv = argv_of(container)
    return not argv or os.path.basename(argv[0]) == "nvidia-device-plugin"


def normalized_image(image: str) -> str:
    """containerd's fully qualified reference: docker.io/library/name:latest."""
    name = image
    first = name.split("/", 1)[0]
    if "/" not in name:
        name = f"docker.io/library/{name}"
    elif "." not in first and ":" not in first and first != "localhost":
        name = f"docker.io/{name}"
    last = name.rsplit("/", 1)[-1]
    if ":" not in last and "@" not in last:
        name += ":latest"
    return name


def image_problem(image: str, pull_failures: tuple[str, ...]) -> tuple[str, str] | None:
    """(waiting reason, message) when the image cannot be pulled, else None."""
    if not _REFERENCE.match(image):
        return (
            "InvalidImageName",
            f'Failed to apply default image tag "{image}": couldn\'t parse image name "{image}": '
            "invalid reference format",
        )
    if any(fnmatch.fnmatchcase(image, pattern) for pattern in pull_failures):
        full = normalized_image(image)
        return (
            "ErrImagePull",
            f'rpc error: code = NotFound desc = failed to pull and unpack image "{full}": '
            f'failed to resolve reference "{full}": {full}: not found',
        )
    return None


def visible_gpus(spec: NodeSpec, indices: list[int]) -> list[nvidia_smi.Gpu]:
    """The node's GPUs the container was given, renumbered from 0 as nvidia-smi shows them."""
    identity = (spec.name, spec.gpus, spec.gpu_product, spec.gpu_memory_mib, spec.driver_version)
    return list(_visible_gpus(identity, tuple(indices)))


# The pods of a node (a verify run after another, time-sliced replicas) are given the same GPUs:
# their UUIDs (a SHA-1 each) are worked out once per node, not once per pod.
@functools.lru_cache(maxsize=16_384)
def _visible_gpus(
    identity: tuple[str, int, str, int, str], indices: tuple[int, ...]
) -> tuple[nvidia_smi.Gpu, ...]:
    gpus = nvidia_smi.fake_gpus(*identity)
    if indices == tuple(range(len(gpus))):  # all of them, in order (a verification pod's)
        return tuple(gpus)
    return tuple(
        replace(gpus[index], index=position) for position, index in enumerate(indices) if index < len(gpus)
    )


def _hook_failure(spec: NodeSpec) -> Outcome | None:
    """The NVIDIA runtime's prestart hook failing for a container given GPUs, or None."""
    if spec.driver == "mismatch":
        return Outcome(
            exit_code=128, start_error=HOOK_FAILED.format(nvml_error="driver/library version mismatch")
        )
    if spec.driver == "missing":
        return Outcome(exit_code=128, start_error=HOOK_FAILED.format(nvml_error="driver not loaded"))
    return None


def _nvidia_smi(args: list[str], spec: NodeSpec, indices: list[int]) -> Outcome:
    if spec.nvidia_smi is not None:
        return Outcome(log=spec.nvidia_smi.stdout, exit_code=spec.nvidia_smi.exit_code)
    if not indices or spec.toolkit != "configured":
        # Without GPUs the nvidia runtime injects nothing: CUDA base images ship no nvidia-smi.
        return Outcome(exit_code=128, start_error=EXEC_NOT_FOUND.format(binary="nvidia-smi"))
    failure = _hook_failure(spec)
    if failure is not None:
        return failure
    text, code = nvidia_smi.run_nvidia_smi(args, visible_gpus(spec, indices))
    return Outcome(log=text, exit_code=code)


def _workload(spec: NodeSpec, indices: list[int], program: Callable[[], tuple[str, int]]) -> Outcome:
    """A deeper proof level's program (workloads.py), once the runtime has started it."""
    failure = _hook_failure(spec) if indices and spec.toolkit == "configured" else None
    if failure is not None:
        return failure
    text, code = program()
    return Outcome(log=text, exit_code=code)


def _sleep_seconds(argument: str) -> float:
    if argument in ("infinity", "inf"):
        return FOREVER
    try:
        return max(0.0, float(argument.rstrip("s")))
    except ValueError:
        return 0.0


def _gpu_program(argv: list[str], spec: NodeSpec, indices: list[int]) -> Callable[[], Outcome] | None:
    """nvidia-smi, all_reduce_perf, the CUDA check's script or the NCCL level's (`sh -c`), when
    `argv` runs one."""
    binary = os.path.basename(argv[0])
    if binary == "nvidia-smi":
        return functools.partial(_nvidia_smi, argv[1:], spec, indices)
    if binary == ALL_REDUCE_BINARY:
        return functools.partial(
            _workload,
            spec,
            indices,
            functools.partial(workloads.all_reduce, spec, visible_gpus(spec, indices)),
        )
    if binary == "sh" and len(argv) >= 3 and workloads.is_all_reduce_script(argv[2]):
        # the NCCL level's script: `nvidia-smi nvlink -s`, then the all-reduce (an override replaces both)
        return functools.partial(
            _workload,
            spec,
            indices,
            functools.partial(workloads.nvlink_and_all_reduce, spec, visible_gpus(spec, indices), indices),
        )
    if binary == "sh" and len(argv) >= 3 and workloads.is_cuda_check(argv[2]):
        return functools.partial(
            _workload, spec, indices, functools.partial(workloads.cuda_check, spec, indices)
        )
    return None


def run_argv(argv: list[str], spec: NodeSpec, indices: list[int], default_run: float) -> Outcome:
    if not argv:
        return Outcome(run_seconds=FOREVER)  # the image's entrypoint: a long-running service
    binary = os.path.basename(argv[0])
    if binary in PLUGIN_IMAGE_DAEMONS and argv[1:2] != ["mount-shm"]:  # mount-shm: an init step
        return Outcome(run_seconds=FOREVER)
    program = _gpu_program(argv, spec, indices)
    if program is not None:
        return replace(program(), run_seconds=default_run)
    if binary == "sleep":
        return Outcome(run_seconds=_sleep_seconds(argv[1]) if len(argv) > 1 else 0.0)
    if binary in ("sh", "bash", "ash", "dash") and len(argv) >= 3 and argv[1] in ("-c", "-ec", "-xc"):
        script = argv[2].strip()
        simple_script = not _SHELL_SYNTAX.search(script)
        return run_argv(shlex.split(script) if simple_script else ["true"], spec, indices, default_run)
    simple = {
        "true": Outcome(),
        "false": Outcome(exit_code=1),
        "echo": Outcome(log=" ".join(argv[1:]) + "\n"),
    }
    return replace(simple.get(binary, Outcome()), run_seconds=default_run)


# -- the NVIDIA device plugin (k8s-device-plugin v0.17) -----------------------------------------


def _klog(severity: str, source: str, message: str) -> str:
    now = datetime.now(tz=UTC)
    stamp = now.strftime("%m%d %H:%M:%S.") + f"{now.microsecond:06d}"
    return f"{severity}{stamp}       1 {source}] {message}\n"


_PLUGIN_CONFIG = """Running with config:
{
  "version": "v1",
  "flags": {
    "migStrategy": "none",
    "failOnInitError": false,
    "mpsRoot": "",
    "nvidiaDriverRoot": "/",
    "nvidiaDevRoot": "/",
    "gdsEnabled": false,
    "mofedEnabled": false,
    "useNodeFeatureAPI": null,
    "deviceDiscoveryStrategy": "auto",
    "plugin": {
      "passDeviceSpecs": false,
      "deviceListStrategy": [
        "envvar"
      ],
      "deviceIDStrategy": "uuid",
      "cdiAnnotationPrefix": "cdi.k8s.io/",
      "nvidiaCTKPath": "/usr/bin/nvidia-ctk",
      "containerDriverRoot": "/driver-root"
    }
  },
  "resources": {
    "gpus": [
      {
        "pattern": "*",
        "name": "nvidia.com/gpu"
      }
    ]
  },
  "sharing": {
    "timeSlicing": {}
  },
  "imex": {}
}"""


def device_plugin_log(spec: NodeSpec) -> str:
    """The plugin's startup log for this host state, with the real messages of v0.17."""
    lines = [
        _klog(
            "I",
            "main.go:235",
            '"Starting NVIDIA Device Plugin" version=<\n\t3c378193\n\tcommit: '
            "3c378193fcebf6e955f0d65bd6f2aeed099ad8ea\n >",
        ),
        _klog("I", "main.go:238", "Starting FS watcher for /var/lib/kubelet/device-plugins"),
        _klog("I", "main.go:245", "Starting OS watcher."),
        _klog("I", "main.go:260", "Starting Plugins."),
        _klog("I", "main.go:317", "Loading configuration."),
        _klog("I", "main.go:342", "Updating config with default resource matching patterns."),
        _klog("I", "main.go:353", "\n" + _PLUGIN_CONFIG),
        _klog("I", "main.go:356", "Retrieving plugins."),
    ]
    if not spec.host_can_advertise:
        return "".join(lines + _no_nvml_lines(spec))
    lines += [
        _klog("I", "factory.go:104", "Detected NVML platform: found NVML library"),
        _klog("I", "factory.go:104", "Detected non-Tegra platform: /sys/devices/soc0/family file not found"),
        _klog("I", "server.go:195", "Starting GRPC server for 'nvidia.com/gpu'"),
        _klog(
            "I",
            "server.go:139",
            "Starting to serve 'nvidia.com/gpu' on /var/lib/kubelet/device-plugins/nvidia-gpu.sock",
        ),
        _klog("I", "server.go:146", "Registered device plugin for 'nvidia.com/gpu' with Kubelet"),
    ]
    gpus = nvidia_smi.fake_gpus(
        spec.name, spec.gpus, spec.gpu_product, spec.gpu_memory_mib, spec.driver_version
    )
    for gpu in gpus[spec.gpus - spec.unhealthy_gpus :]:
        lines.append(
            _klog(
                "I",
                "health.go:159",
                f"XidCriticalError: Xid=79 on Device={gpu.uuid}; marking device as unhealthy.",
            )
        )
        lines.append(_klog("I", "server.go:276", f"'nvidia.com/gpu' device marked unhealthy: {gpu.uuid}"))
    return "".join(lines)


class PluginLog:
    """A running device plugin's log: written once per host state, so later reads see the same
    lines; when the host's state changes under it (a host-backed node), what the plugin prints
    then is appended, as a real log grows."""

    def __init__(self, state: Callable[[], NodeSpec]) -> None:
        self._state = state
        self._spec: NodeSpec | None = None
        self._text = ""

    def __call__(self) -> str:
        spec = self._state()
        if spec != self._spec:
            self._text += device_plugin_log(spec)
            self._spec = spec
        return self._text


def _no_nvml_lines(spec: NodeSpec) -> list[str]:
    if spec.gpus > 0 and spec.driver != "missing" and spec.toolkit == "configured":
        return []
    return [
        _klog("W", "factory.go:88", "Failed to initialize NVML: could not load NVML library."),
        _klog("E", "factory.go:112", "Incompatible strategy detected auto"),
        _klog(
            "E", "factory.go:113", "If this is a GPU node, did you configure the NVIDIA Container Toolkit?"
        ),
        _klog(
            "E",
            "factory.go:114",
            "You can check the prerequisites at: https://github.com/NVIDIA/k8s-device-plugin#prerequisites",
        ),
        _klog(
            "E",
            "factory.go:115",
            "You can learn how to set the runtime at: https://github.com/NVIDIA/k8s-device-plugin#quick-start",
        ),
        _klog(
            "E",
            "factory.go:116",
            "If this is not a GPU node, you should set up a toleration or nodeSelector "
            "to only deploy this plugin on GPU nodes",
        ),
        _klog("I", "main.go:381", "No devices found. Waiting indefinitely."),
    ]


def started_at() -> float:
    return time.time()
