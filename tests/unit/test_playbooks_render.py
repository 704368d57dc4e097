"""Rendered-config tests for the container_runtime role.

The role runs for real (ansible-playbook, local connection) with every file path pointed into a
temporary directory; the files it writes are parsed (tomllib, json) and, for containerd 1.x, read
back by the real `containerd config dump` when a containerd binary is installed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.hosts import _containerd_release as containerd_release
from tests.local_ansible import run_playbook

# tomllib is in the standard library from Python 3.11 on.
tomllib = pytest.importorskip("tomllib")

REPO = Path(__file__).resolve().parents[2]
ROLES = REPO / "playbooks" / "roles"
NVIDIA_RUNTIME = "/usr/bin/nvidia-container-runtime"
CONTAINERD = shutil.which("containerd")

# Debian 12's containerd package ships this /etc/containerd/config.toml.
DEBIAN_CONFIG = """version = 2
[plugins]
  [plugins."io.containerd.grpc.v1.cri"]
    [plugins."io.containerd.grpc.v1.cri".cni]
      bin_dir = "/usr/lib/cni"
      conf_dir = "/etc/cni/net.d"
  [plugins."io.containerd.internal.v1.opt"]
    path = "/var/lib/containerd/opt"
"""

PLAY = """- name: Render the container runtime configuration
  hosts: localhost
  connection: local
  gather_facts: false
  roles:
    - role: container_runtime
"""

# A user's own drop-in: containerd 1.x replaces the whole CRI section with it (runc's cgroups too).
USER_DROPIN = """version = 2
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  SystemdCgroup = true
"""
# The role, then what its probe request asks the host probe for, and the base dump the role read
# itself (containerd_base.yml), kept in files.
KEEP_BASE_PLAY = (
    PLAY
    + """  post_tasks:
    - name: Keep the base request and the role's base dump
      ansible.builtin.copy:
        content: "{{ item.content }}"
        dest: "{{ item.dest }}"
        mode: "0644"
      loop:
        - {content: "{{ gpuctl_runtime_probe_request | to_json }}", dest: "{{ keep_dir }}/request.json"}
        - {content: "{{ gpuctl_containerd_base_dump.stdout }}", dest: "{{ keep_dir }}/base.txt"}
"""
)
HOST_PROBE = ROLES / "gpuctl_probe" / "files" / "host_probe.py"

pytestmark = [
    pytest.mark.playbook,  # a real ansible-playbook: a run of its own (.ci/run-tests.sh)
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="the role writes files owned by root: run as root"),
]
needs_containerd = pytest.mark.skipif(CONTAINERD is None, reason="no containerd binary installed")


def run_role(
    tmp_path: Path, *, check: bool = False, play: str = PLAY, containerd: Path | None = None, **extra: object
) -> tuple[int, str]:
    """Runs the container_runtime role locally, with `containerd` (a binary) first in PATH when
    given; returns (exit code, output)."""
    playbook = tmp_path / "play.yml"
    playbook.write_text(play)
    variables = {
        "gpuctl_runtime_restart": False,
        "gpuctl_containerd_config_path": str(tmp_path / "containerd" / "config.toml"),
        "gpuctl_containerd_dropin_dir": str(tmp_path / "containerd" / "conf.d"),
        "gpuctl_crio_dropin_dir": str(tmp_path / "crio" / "crio.conf.d"),
        "gpuctl_docker_daemon_json": str(tmp_path / "docker" / "daemon.json"),
        "gpuctl_kubelet_config_path": str(tmp_path / "kubelet" / "config.yaml"),
        **extra,
    }
    args = ["-e", json.dumps(variables), *(["--check", "--diff"] if check else [])]
    env = {**os.environ, "ANSIBLE_ROLES_PATH": str(ROLES)}
    if containerd is not None:
        env["PATH"] = f"{containerd.parent}{os.pathsep}{env['PATH']}"
    result = run_playbook(playbook, *args, env=env)
    return result.returncode, result.stdout + result.stderr


def changed_count(output: str) -> int:
    match = re.search(r"localhost\s*:\s*ok=\d+\s+changed=(\d+)", output)
    assert match, output
    return int(match.group(1))


def containerd_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "containerd"
    directory.mkdir(exist_ok=True)
    return directory


def runtimes_v2(config: dict[str, object]) -> dict[str, dict[str, object]]:
    cri = config["plugins"]["io.containerd.grpc.v1.cri"]  # type: ignore[index]
    return cri["containerd"]["runtimes"]  # type: ignore[no-any-return]


@needs_containerd
def test_containerd_v2_keeps_debian_config_and_adds_nvidia(tmp_path: Path) -> None:
    config_path = containerd_dir(tmp_path) / "config.toml"
    config_path.write_text(DEBIAN_CONFIG)

    rc, output = run_role(tmp_path, gpuctl_container_runtime="containerd")

    assert rc == 0, output
    config = tomllib.loads(config_path.read_text())
    assert config["imports"] == [f"{tmp_path}/containerd/conf.d/*.toml"]
    assert config["plugins"]["io.containerd.internal.v1.opt"]["path"] == "/var/lib/containerd/opt"
    dropin = tomllib.loads((tmp_path / "containerd/conf.d/99-nvidia.toml").read_text())
    runtimes = runtimes_v2(dropin)
    assert set(runtimes) == {"runc", "nvidia"}
    assert runtimes["nvidia"]["options"]["BinaryName"] == NVIDIA_RUNTIME  # type: ignore[index]
    cri = dropin["plugins"]["io.containerd.grpc.v1.cri"]
    assert cri["containerd"]["default_runtime_name"] == "nvidia"
    assert cri["cni"]["bin_dir"] == "/usr/lib/cni"


@needs_containerd
def test_containerd_v2_dump_shows_runc_nvidia_and_kept_settings(tmp_path: Path) -> None:
    config_path = containerd_dir(tmp_path) / "config.toml"
    config_path.write_text(DEBIAN_CONFIG)
    rc, output = run_role(tmp_path, gpuctl_container_runtime="containerd")
    assert rc == 0, output

    dump = subprocess.run(
        [str(CONTAINERD), "--config", str(config_path), "config", "dump"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout

    merged = tomllib.loads(dump)
    runtimes = runtimes_v2(merged)
    assert {"runc", "nvidia"} <= set(runtimes)
    cri = merged["plugins"]["io.containerd.grpc.v1.cri"]
    assert cri["containerd"]["default_runtime_name"] == "nvidia"
    assert cri["cni"]["bin_dir"] == "/usr/lib/cni"


@needs_containerd
def test_containerd_v2_second_run_changes_nothing(tmp_path: Path) -> None:
    (containerd_dir(tmp_path) / "config.toml").write_text(DEBIAN_CONFIG)
    assert run_role(tmp_path, gpuctl_container_runtime="containerd")[0] == 0

    rc, output = run_role(tmp_path, gpuctl_container_runtime="containerd")

    assert rc == 0, output
    assert changed_count(output) == 0


@needs_containerd
def test_containerd_v2_without_config_creates_minimal_one(tmp_path: Path) -> None:
    rc, output = run_role(
        tmp_path, gpuctl_container_runtime="containerd", gpuctl_nvidia_runtime_default=False
    )

    assert rc == 0, output
    config = tomllib.loads((tmp_path / "containerd/config.toml").read_text())
    assert config == {"version": 2, "imports": [f"{tmp_path}/containerd/conf.d/*.toml"]}
    dropin = tomllib.loads((tmp_path / "containerd/conf.d/99-nvidia.toml").read_text())
    cri = dropin["plugins"]["io.containerd.grpc.v1.cri"]
    assert cri["containerd"]["default_runtime_name"] == "runc"
    assert set(runtimes_v2(dropin)) == {"runc", "nvidia"}


@needs_containerd
@pytest.mark.parametrize("user_dropin", [False, True], ids=["alone", "with-a-user-drop-in"])
def test_the_host_probe_dumps_containerd_1x_base_as_the_role_does(tmp_path: Path, user_dropin: bool) -> None:
    """The role's converged gate reads containerd 1.x's configuration without gpuctl's drop-in through
    the host probe, from config.toml as it is on the host; the role dumps it from the config.toml it
    writes. Once the role has written config.toml, the two dumps must be the same."""
    directory = containerd_dir(tmp_path)
    (directory / "config.toml").write_text(DEBIAN_CONFIG)
    if user_dropin:
        (directory / "conf.d").mkdir()
        (directory / "conf.d" / "10-user.toml").write_text(USER_DROPIN)
    keep = tmp_path / "kept"
    keep.mkdir()

    rc, output = run_role(
        tmp_path, play=KEEP_BASE_PLAY, gpuctl_container_runtime="containerd", keep_dir=str(keep)
    )
    assert rc == 0, output
    request = (keep / "request.json").read_text()
    probe = subprocess.run(
        [sys.executable, str(HOST_PROBE), request], capture_output=True, text=True, check=True
    )

    base = json.loads(probe.stdout)["containerd_bases"]["base"]
    assert base["rc"] == 0, base
    assert read_dump(base["stdout"]) == read_dump((keep / "base.txt").read_text())
    assert ("SystemdCgroup = true" in base["stdout"]) is user_dropin


def read_dump(text: str) -> dict[str, object]:
    """A `containerd config dump`, parsed, its `imports` (the files it read, /dev/stdin among them)
    sorted: containerd lists them in no fixed order from one run to the next."""
    dump: dict[str, object] = tomllib.loads(text)
    imports = dump.get("imports", [])
    assert isinstance(imports, list)
    dump["imports"] = sorted(imports)
    return dump


def test_containerd_v1_config_is_refused_with_a_hint(tmp_path: Path) -> None:
    (containerd_dir(tmp_path) / "config.toml").write_text('[plugins.cri]\n  sandbox_image = "x"\n')

    rc, output = run_role(tmp_path, gpuctl_container_runtime="containerd", gpuctl_containerd_config_version=2)

    assert rc != 0
    assert f"{tmp_path}/containerd/config.toml has no `version = 2` or `version = 3` line" in output
    assert "containerd config migrate" in output


# --- The drop-in's config version is config.toml's (containerd 2.x is fetched from Debian's archive).
# A user's config.toml of each version, with settings of its own that must survive the drop-in.
ROOT_V2 = """version = 2
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "local.registry/pause:3.10"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
    SystemdCgroup = true
"""
ROOT_V3 = """version = 3
[plugins."io.containerd.cri.v1.images".pinned_images]
  sandbox = "local.registry/pause:3.10"
[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
  SystemdCgroup = true
"""
DEFAULT_SANDBOX = "registry.k8s.io/pause"


@pytest.fixture(scope="module")
def containerd2() -> Path:
    binary = containerd_release.containerd2()
    assert containerd_release.major_version(binary) >= 2
    return binary


def config_dump(containerd: Path | str, config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(containerd), "--config", str(config), "config", "dump"],
        capture_output=True,
        text=True,
        check=False,
    )


def cri_of_containerd2(dump: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(runtime plugin's `containerd` table, images plugin) of a containerd 2.x dump."""
    plugins = tomllib.loads(dump)["plugins"]
    return plugins["io.containerd.cri.v1.runtime"]["containerd"], plugins["io.containerd.cri.v1.images"]


def assert_dump_keeps_root_and_adds_nvidia(containerd: Path, config: Path) -> None:
    dumped = config_dump(containerd, config)
    assert dumped.returncode == 0, dumped.stderr
    assert "Ignoring unknown key" not in dumped.stderr
    runtime, images = cri_of_containerd2(dumped.stdout)
    assert runtime["default_runtime_name"] == "nvidia"
    assert runtime["runtimes"]["nvidia"]["options"]["BinaryName"] == NVIDIA_RUNTIME
    assert runtime["runtimes"]["nvidia"]["options"]["SystemdCgroup"] is True
    assert runtime["runtimes"]["runc"]["options"]["SystemdCgroup"] is True
    assert images["pinned_images"]["sandbox"] == "local.registry/pause:3.10"


@pytest.mark.parametrize(("root", "version", "table"), [
    (ROOT_V3, 3, "io.containerd.cri.v1.runtime"),
    (ROOT_V2, 2, "io.containerd.grpc.v1.cri"),
], ids=["version-3-root", "version-2-root"])  # fmt: skip
def test_containerd_2_dropin_takes_the_version_of_config_toml(
    tmp_path: Path, containerd2: Path, root: str, version: int, table: str
) -> None:
    config_path = containerd_dir(tmp_path) / "config.toml"
    config_path.write_text(root)

    rc, output = run_role(tmp_path, containerd=containerd2, gpuctl_container_runtime="containerd")

    assert rc == 0, output
    dropin = tomllib.loads((tmp_path / "containerd/conf.d/99-nvidia.toml").read_text())
    assert dropin["version"] == version
    # containerd 2.x merges imported files key by key: the drop-in adds nvidia and nothing else.
    assert set(dropin["plugins"][table]["containerd"]["runtimes"]) == {"nvidia"}
    assert tomllib.loads(config_path.read_text())["version"] == version
    assert_dump_keeps_root_and_adds_nvidia(containerd2, config_path)
    rc, output = run_role(tmp_path, containerd=containerd2, gpuctl_container_runtime="containerd")
    assert rc == 0, output
    assert changed_count(output) == 0


def test_a_dropin_of_a_higher_version_than_config_toml_breaks_containerd(
    tmp_path: Path, containerd2: Path
) -> None:
    """The premise of the version rule, with the real binaries: gpuctl's version 3 drop-in (what it
    wrote for every containerd 2.x before) beside a version 2 config.toml. containerd 2.x merges it
    before migrating config.toml, so config.toml's own settings are dropped as unknown keys; containerd
    1.x does not read it at all, so the nvidia runtime is missing."""
    v3_host = tmp_path / "v3"
    v3_host.mkdir()
    (containerd_dir(v3_host) / "config.toml").write_text(ROOT_V3)
    rc, output = run_role(v3_host, containerd=containerd2, gpuctl_container_runtime="containerd")
    assert rc == 0, output
    dropins = containerd_dir(tmp_path) / "conf.d"
    dropins.mkdir()
    shutil.copy(v3_host / "containerd/conf.d/99-nvidia.toml", dropins / "99-nvidia.toml")
    config_path = tmp_path / "containerd" / "config.toml"
    config_path.write_text(ROOT_V2.replace("version = 2\n", f'version = 2\nimports = ["{dropins}/*.toml"]\n'))

    dumped = config_dump(containerd2, config_path)

    assert "Ignoring unknown key" in dumped.stderr
    if dumped.returncode == 0:  # releases that refuse such a drop-in exit non-zero instead
        runtime, images = cri_of_containerd2(dumped.stdout)
        assert images["pinned_images"]["sandbox"].startswith(DEFAULT_SANDBOX)
        assert runtime["runtimes"]["runc"]["options"]["SystemdCgroup"] is False
    if CONTAINERD is not None and containerd_release.major_version(Path(CONTAINERD)) < 2:
        dumped = config_dump(CONTAINERD, config_path)
        assert "runtimes.nvidia]" not in dumped.stdout


def test_containerd_2_without_config_creates_version_3(tmp_path: Path, containerd2: Path) -> None:
    rc, output = run_role(tmp_path, containerd=containerd2, gpuctl_container_runtime="containerd")

    assert rc == 0, output
    config = tomllib.loads((tmp_path / "containerd/config.toml").read_text())
    assert config == {"version": 3, "imports": [f"{tmp_path}/containerd/conf.d/*.toml"]}
    assert tomllib.loads((tmp_path / "containerd/conf.d/99-nvidia.toml").read_text())["version"] == 3
    dumped = config_dump(containerd2, tmp_path / "containerd/config.toml")
    assert dumped.returncode == 0, dumped.stderr
    assert cri_of_containerd2(dumped.stdout)[0]["default_runtime_name"] == "nvidia"


def test_a_version_setting_other_than_config_toml_is_refused(tmp_path: Path, containerd2: Path) -> None:
    (containerd_dir(tmp_path) / "config.toml").write_text(ROOT_V2)

    rc, output = run_role(
        tmp_path,
        containerd=containerd2,
        gpuctl_container_runtime="containerd",
        gpuctl_containerd_config_version=3,
    )

    assert rc != 0
    assert (
        f"{tmp_path}/containerd/config.toml says version = 2 but gpuctl_containerd_config_version=3" in output
    )
    assert not (tmp_path / "containerd/conf.d/99-nvidia.toml").exists()


@needs_containerd
def test_a_version_3_config_toml_is_refused_on_containerd_1(tmp_path: Path) -> None:
    (containerd_dir(tmp_path) / "config.toml").write_text(ROOT_V3)

    rc, output = run_role(tmp_path, gpuctl_container_runtime="containerd")

    assert rc != 0
    assert f"{tmp_path}/containerd/config.toml says version = 3, which containerd 1.x does not read" in output


def test_crio_dropin(tmp_path: Path) -> None:
    rc, output = run_role(tmp_path, gpuctl_container_runtime="crio")

    assert rc == 0, output
    # The file `nvidia-ctk runtime configure --runtime=crio` writes (toolkit 1.18 and later).
    dropin = tomllib.loads((tmp_path / "crio/crio.conf.d/99-nvidia.toml").read_text())
    assert dropin["crio"]["runtime"]["default_runtime"] == "nvidia"
    assert dropin["crio"]["runtime"]["runtimes"]["nvidia"] == {
        "runtime_path": NVIDIA_RUNTIME,
        "runtime_type": "oci",
    }


def test_crio_dropin_without_default_runtime(tmp_path: Path) -> None:
    rc, output = run_role(tmp_path, gpuctl_container_runtime="crio", gpuctl_nvidia_runtime_default=False)

    assert rc == 0, output
    dropin = tomllib.loads((tmp_path / "crio/crio.conf.d/99-nvidia.toml").read_text())
    assert "default_runtime" not in dropin["crio"]["runtime"]


def test_crio_dropin_of_earlier_releases_is_replaced_and_others_kept(tmp_path: Path) -> None:
    dropins = tmp_path / "crio" / "crio.conf.d"
    dropins.mkdir(parents=True)
    (dropins / "99-nvidia.conf").write_text(
        '# Ansible managed (role container_runtime)\n[crio.runtime.runtimes.nvidia]\nruntime_type = "oci"\n'
    )
    (dropins / "10-site.conf").write_text('[crio.runtime]\nlog_level = "info"\n')

    rc, output = run_role(tmp_path, gpuctl_container_runtime="crio")
    assert rc == 0, output
    assert sorted(path.name for path in dropins.iterdir()) == ["10-site.conf", "99-nvidia.toml"]
    rc, output = run_role(tmp_path, gpuctl_container_runtime="crio")
    assert rc == 0, output
    assert changed_count(output) == 0

    # Someone else's 99-nvidia.conf is not gpuctl's to remove.
    (dropins / "99-nvidia.conf").write_text('[crio.runtime]\nlog_level = "debug"\n')
    rc, output = run_role(tmp_path, gpuctl_container_runtime="crio")
    assert rc == 0, output
    assert (dropins / "99-nvidia.conf").exists()


def test_k3s_gets_nvidia_as_its_default_runtime_in_a_config_dropin(tmp_path: Path) -> None:
    """k3s is detected by its files (here a file of the test's, as the role's detection list allows)."""
    k3s = tmp_path / "k3s"
    k3s.write_text("")
    detected_as_k3s = [{"path": str(k3s), "runtime": "containerd", "flavour": "k3s"}]
    k3s_dir = str(tmp_path / "k3s.d")

    rc, output = run_role(tmp_path, gpuctl_runtime_probes=detected_as_k3s, gpuctl_k3s_config_dir=k3s_dir)

    assert rc == 0, output
    assert "default-runtime: nvidia" in (tmp_path / "k3s.d" / "99-gpuctl-nvidia.yaml").read_text()
    rc, output = run_role(tmp_path, gpuctl_runtime_probes=detected_as_k3s, gpuctl_k3s_config_dir=k3s_dir)
    assert rc == 0, output
    assert changed_count(output) == 0
    assert "already has the nvidia runtime as configured" in output


def test_docker_daemon_json_is_merged_not_overwritten(tmp_path: Path) -> None:
    daemon_json = tmp_path / "docker" / "daemon.json"
    daemon_json.parent.mkdir()
    existing = {
        "log-driver": "json-file",
        "log-opts": {"max-size": "10m"},
        "runtimes": {"runsc": {"path": "/usr/bin/runsc"}},
    }
    daemon_json.write_text(json.dumps(existing))

    rc, output = run_role(tmp_path, gpuctl_container_runtime="docker")

    assert rc == 0, output
    merged = json.loads(daemon_json.read_text())
    assert merged["log-driver"] == "json-file"
    assert merged["log-opts"] == {"max-size": "10m"}
    assert merged["runtimes"]["runsc"] == {"path": "/usr/bin/runsc"}
    assert merged["runtimes"]["nvidia"] == {"path": NVIDIA_RUNTIME, "args": []}
    assert merged["default-runtime"] == "nvidia"


def test_docker_second_run_changes_nothing(tmp_path: Path) -> None:
    assert run_role(tmp_path, gpuctl_container_runtime="docker")[0] == 0

    rc, output = run_role(tmp_path, gpuctl_container_runtime="docker")

    assert rc == 0, output
    assert changed_count(output) == 0


def test_check_mode_writes_nothing(tmp_path: Path) -> None:
    rc, output = run_role(tmp_path, check=True, gpuctl_container_runtime="docker")

    assert rc == 0, output
    assert changed_count(output) > 0
    assert not (tmp_path / "docker").exists()


def test_unknown_runtime_is_rejected_naming_the_variable(tmp_path: Path) -> None:
    rc, output = run_role(tmp_path, gpuctl_container_runtime="podman")

    assert rc != 0
    assert "gpuctl_container_runtime=podman" in output
    assert "Traceback" not in output
