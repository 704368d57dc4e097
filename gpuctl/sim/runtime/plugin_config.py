"""The device plugin's configuration as NVIDIA's plugin v0.20 reads it at start-up.

`--config-file`/`CONFIG_FILE` names a file; the sim finds the volume mounted over it and reads the
ConfigMap key behind it (the node label `nvidia.com/device-plugin.config` picks another key of
the same ConfigMap, as the chart's config-manager does). `--mig-strategy`/`MIG_STRATEGY` win over
the file's `flags.migStrategy`, as command line and environment do in the real plugin.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuctl.sim.runtime.objects import GPU

if TYPE_CHECKING:
    from gpuctl.sim.runtime.store import Store

Obj = dict[str, Any]
CONFIG_LABEL = "nvidia.com/device-plugin.config"
MIG_STRATEGIES = ("none", "single", "mixed")


@dataclass(frozen=True)
class PluginConfig:
    """What the running plugin serves: MIG strategy and the sharing of `nvidia.com/gpu`."""

    mig_strategy: str = "none"
    sharing: str = "none"  # none | time-slicing | mps
    replicas: int = 1
    rename: str = ""  # the advertised name of shared GPUs when renamed (nvidia.com/gpu.shared)
    fail_requests_greater_than_one: bool = False
    error: str = ""  # why the plugin exits at start-up (after "error starting plugins: "), or ""

    @property
    def shared(self) -> bool:
        return self.sharing != "none" and self.replicas > 1

    @property
    def shared_resource(self) -> str:
        return self.rename if self.shared and self.rename else GPU


def _arg_or_env(container: Obj, flag: str, env_name: str) -> str | None:
    argv = [str(part) for part in (container.get("command") or []) + (container.get("args") or [])]
    for index, part in enumerate(argv):
        if part == f"--{flag}" and index + 1 < len(argv):
            return argv[index + 1]
        if part.startswith(f"--{flag}="):
            return part.split("=", 1)[1]
    for entry in container.get("env") or []:
        if entry.get("name") == env_name and "value" in entry:
            return str(entry["value"])
    return None


def _config_text(store: Store, pod: Obj, container: Obj, path: str, node_labels: dict[str, str]) -> str:
    """The file's text, or raises FileNotFoundError as the real open(2) would fail."""
    volumes = {volume.get("name"): volume for volume in pod["spec"].get("volumes") or []}
    for mount in container.get("volumeMounts") or []:
        mount_path = str(mount.get("mountPath", "")).rstrip("/")
        if not path.startswith(mount_path + "/"):
            continue
        source = (volumes.get(mount.get("name")) or {}).get("configMap")
        if not source:
            continue
        config_map = store.get("configmaps", pod["metadata"]["namespace"], source.get("name", ""))
        data = (config_map or {}).get("data") or {}
        key = posixpath.relpath(path, mount_path)
        chosen = node_labels.get(CONFIG_LABEL)
        if chosen:
            if chosen not in data:
                raise LookupError(f"specified config {chosen} does not exist")
            key = chosen
        if key in data:
            return str(data[key])
    raise FileNotFoundError(f"open {path}: no such file or directory")


def _sharing(parsed: Obj) -> tuple[str, Obj]:
    sharing = parsed.get("sharing") or {}
    for key, name in (("timeSlicing", "time-slicing"), ("mps", "mps")):
        section = sharing.get(key) or {}
        if section.get("resources"):
            return name, section
    return "none", {}


def _from_file(text: str) -> PluginConfig:
    import yaml

    parsed = yaml.safe_load(text) or {}
    if not isinstance(parsed, dict):
        raise ValueError("unmarshal error: config is not a mapping")
    if parsed.get("version") != "v1":
        raise ValueError(f"unknown version: {parsed.get('version')}")
    mig_strategy = str((parsed.get("flags") or {}).get("migStrategy") or "none")
    sharing, section = _sharing(parsed)
    if sharing == "none":
        return PluginConfig(mig_strategy=mig_strategy)
    resource = next((r for r in section["resources"] if r.get("name") == GPU), None)
    replicas = int((resource or {}).get("replicas") or 1)
    # v0.20 honours only the default rename (`renameByDefault`): NAME.shared.
    rename = f"{GPU}.shared" if section.get("renameByDefault") else ""
    refuse = section.get("failRequestsGreaterThanOne")
    return PluginConfig(
        mig_strategy=mig_strategy,
        sharing=sharing,
        replicas=replicas,
        rename=rename,
        # MPS refuses requests above one unless told otherwise (config.go defaults it to true).
        fail_requests_greater_than_one=bool(refuse) if refuse is not None else sharing == "mps",
    )


def read_plugin_config(store: Store, pod: Obj, container: Obj, node: Obj | None) -> PluginConfig:
    """The plugin container's configuration, with `error` set when the real plugin would exit."""
    labels = dict(((node or {}).get("metadata") or {}).get("labels") or {})
    config = PluginConfig()
    path = _arg_or_env(container, "config-file", "CONFIG_FILE")
    if path:
        try:
            config = _from_file(_config_text(store, pod, container, path, labels))
        except LookupError as error:
            return PluginConfig(error=str(error))
        except (OSError, ValueError) as error:
            reason = (
                "error opening config file" if isinstance(error, OSError) else "error parsing config file"
            )
            return PluginConfig(
                error=f"unable to load config: unable to finalize config: unable to parse config file: "
                f"{reason}: {error}"
            )
    strategy = _arg_or_env(container, "mig-strategy", "MIG_STRATEGY") or config.mig_strategy
    if strategy not in MIG_STRATEGIES:
        return PluginConfig(error=f"unable to validate flags: unknown MIG strategy: {strategy}")
    if config.sharing == "mps" and strategy == "mixed":
        return PluginConfig(
            error="unable to validate flags: using --mig-strategy=mixed is not supported with MPS"
        )
    return PluginConfig(**{**config.__dict__, "mig_strategy": strategy})
