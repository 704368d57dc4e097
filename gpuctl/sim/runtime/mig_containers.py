"""Containers given MIG devices: nvidia-smi lists the MIG devices the plugin allocated under their
parent GPUs (`-L`), and its queries show the parent GPUs with MIG mode enabled."""

from __future__ import annotations

import os
import shlex
from dataclasses import replace

from gpuctl import nvidia_smi
from gpuctl.sim.runtime import containers
from gpuctl.sim.runtime.sharing import Device
from gpuctl.sim.scenario import NodeSpec


def _nvidia_smi_calls(argv: list[str]) -> list[list[str]] | None:
    """nvidia-smi's arguments per call when the container runs nvidia-smi (directly, or as `sh -c`
    of simple nvidia-smi commands joined by &&), else None."""
    calls = [argv]
    if argv and os.path.basename(argv[0]) in ("sh", "bash", "ash", "dash") and len(argv) >= 3:
        try:
            calls = [shlex.split(part) for part in argv[2].split("&&")]
        except ValueError:
            return None
    if all(call and os.path.basename(call[0]) == "nvidia-smi" for call in calls):
        return [call[1:] for call in calls]
    return None


def mig_gpus(spec: NodeSpec, devices: list[Device]) -> list[nvidia_smi.Gpu]:
    """The parent GPUs of the allocated devices, renumbered from 0, each with its MIG devices."""
    physical = nvidia_smi.fake_gpus(
        spec.name, spec.gpus, spec.gpu_product, spec.gpu_memory_mib, spec.driver_version
    )
    parents = list(dict.fromkeys(device.gpu for device in devices))
    gpus = []
    for position, parent in enumerate(parents):
        migs = sorted({(d.mig, d.profile) for d in devices if d.gpu == parent and d.mig >= 0})
        listed = tuple(
            nvidia_smi.MigDevice(number, profile, nvidia_smi.mig_uuid(spec.name, parent, mig))
            for number, (mig, profile) in enumerate(migs)
        )
        gpus.append(replace(physical[parent], index=position, mig_devices=listed))
    return gpus


def run_argv(
    argv: list[str], spec: NodeSpec, devices: list[Device], default_run: float
) -> containers.Outcome:
    indices = list(dict.fromkeys(device.gpu for device in devices))
    calls = _nvidia_smi_calls(argv)
    plain = containers.run_argv(["nvidia-smi"] if calls else argv, spec, indices, default_run)
    if calls is None or plain.start_error or plain.exit_code != 0 or spec.nvidia_smi is not None:
        return plain
    log, code = "", 0
    for args in calls:  # `a && b`: b runs only when a succeeded
        text, code = nvidia_smi.run_nvidia_smi(args, mig_gpus(spec, devices))
        log += text
        if code != 0:
            break
    return replace(plain, log=log, exit_code=code)
