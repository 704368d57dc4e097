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


def _nvidia_smi_args(argv: list[str]) -> list[str] | None:
    """nvidia-smi's arguments when the container runs nvidia-smi (directly or as `sh -c` of one
    simple command), else None."""
    if argv and os.path.basename(argv[0]) in ("sh", "bash", "ash", "dash") and len(argv) >= 3:
        try:
            argv = shlex.split(argv[2])
        except ValueError:
            return None
    if argv and os.path.basename(argv[0]) == "nvidia-smi":
        return argv[1:]
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
    plain = containers.run_argv(argv, spec, indices, default_run)
    args = _nvidia_smi_args(argv)
    if args is None or plain.start_error or plain.exit_code != 0 or spec.nvidia_smi is not None:
        return plain
    text, code = nvidia_smi.run_nvidia_smi(args, mig_gpus(spec, devices))
    return replace(plain, log=text, exit_code=code)
