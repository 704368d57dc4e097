"""The third-party components gpuctl installs, at the versions it pins (`gpuctl version --components`).

Every pin has one home: the Kubernetes side in gpuctl/defaults.py, the host side in the Ansible role
defaults (the playbooks use them without gpuctl). This module only reads them, so what it prints is
what bootstrap and render use.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuctl import __version__, defaults
from gpuctl.errors import ExitCode
from gpuctl.package_data import default_driver_branch, default_toolkit_version

_DEFAULTS_FILE = "gpuctl/defaults.py"
_ROLE_DEFAULTS = "playbooks/roles/{role}/defaults/main.yml"


@dataclass(frozen=True)
class Component:
    """One pinned component: what it is, its version, and where the pin lives."""

    name: str
    version: str
    artifact: str  # the image, chart or packages the version applies to
    layer: str  # host | cluster | proof
    pinned_in: str  # the file that holds the pin (the one place to bump it)
    setting: str  # the constant or role variable in that file
    override: str  # how a user picks another version without editing gpuctl, or ""
    used_by: str


@dataclass(frozen=True)
class ComponentsResult:
    gpuctl_version: str
    components: tuple[Component, ...]
    with_components: bool = True
    exit_code: ExitCode = ExitCode.OK


def _role_file(role: str) -> str:
    return _ROLE_DEFAULTS.format(role=role)


def _host_components() -> list[Component]:
    toolkit = default_toolkit_version()
    return [
        Component(
            name="nvidia-driver",
            version=f"{default_driver_branch()} (branch)",
            artifact="nvidia-open / cuda-drivers from NVIDIA's CUDA repository",
            layer="host",
            pinned_in=_role_file(defaults.DRIVER_ROLE),
            setting=defaults.DRIVER_BRANCH_KEY,
            override=f"inventory: {defaults.DRIVER_BRANCH_KEY}, gpuctl_driver_version",
            used_by="bootstrap --phase host, preflight",
        ),
        Component(
            name="nvidia-container-toolkit",
            version=toolkit,
            artifact="nvidia-container-toolkit, nvidia-container-toolkit-base, libnvidia-container-tools, "
            "libnvidia-container1",
            layer="host",
            pinned_in=_role_file(defaults.TOOLKIT_ROLE),
            setting=defaults.TOOLKIT_VERSION_KEY,
            override=f"inventory: {defaults.TOOLKIT_VERSION_KEY}",
            used_by="bootstrap --phase host",
        ),
    ]


def _cluster_components() -> list[Component]:
    return [
        Component(
            name="k8s-device-plugin",
            version=defaults.DEVICE_PLUGIN_VERSION,
            artifact=defaults.DEVICE_PLUGIN_IMAGE,
            layer="cluster",
            pinned_in=_DEFAULTS_FILE,
            setting="DEVICE_PLUGIN_VERSION",
            override="render --image",
            used_by="render, bootstrap --stack device-plugin (also GFD and the MPS control daemon image)",
        ),
        Component(
            name="gpu-operator",
            version=defaults.OPERATOR_CHART_VERSION,
            artifact=f"{defaults.OPERATOR_CHART} ({defaults.OPERATOR_CHART_REPO})",
            layer="cluster",
            pinned_in=_DEFAULTS_FILE,
            setting="OPERATOR_CHART_VERSION",
            override="",
            used_by="render/bootstrap --stack operator",
        ),
        Component(
            name="dra-driver-nvidia-gpu",
            version=defaults.DRA_DRIVER_CHART_VERSION,
            artifact=defaults.DRA_DRIVER_CHART,
            layer="cluster",
            pinned_in=_DEFAULTS_FILE,
            setting="DRA_DRIVER_CHART_VERSION",
            override="",
            used_by="render/bootstrap --stack dra",
        ),
        Component(
            name="verify-image",
            version=defaults.VERIFY_IMAGE.rsplit(":", 1)[1],
            artifact=defaults.VERIFY_IMAGE,
            layer="proof",
            pinned_in=_DEFAULTS_FILE,
            setting="VERIFY_IMAGE",
            override="verify --image",
            used_by="verify, bootstrap --phase verify",
        ),
        _workload_image("cuda-sample-image", "CUDA_SAMPLE_IMAGE", "cuda"),
        _workload_image("nccl-tests-image", "NCCL_TESTS_IMAGE", "nccl"),
    ]


def _workload_image(name: str, setting: str, level: str) -> Component:
    """The image of the proof level `level` (`verify --level LEVEL`, overridden by --LEVEL-image)."""
    image: str = getattr(defaults, setting)
    return Component(
        name=name,
        version=image.rsplit(":", 1)[1],
        artifact=image,
        layer="proof",
        pinned_in=_DEFAULTS_FILE,
        setting=setting,
        override=f"verify --{level}-image",
        used_by=f"verify --level {level}, bootstrap --phase verify --level {level}",
    )


def components(*, with_components: bool = True) -> ComponentsResult:
    """gpuctl's version and, with `with_components`, every pinned component (host layer first)."""
    pinned = tuple(_host_components() + _cluster_components()) if with_components else ()
    return ComponentsResult(__version__, pinned, with_components)
