"""Inventories as Ansible reads them (YAML, INI, group_vars), and the gpuctl_* validation."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gpuctl.cli.main import run
from gpuctl.errors import ConfigError
from gpuctl.hosts.inventory import load_inventory, parse_ssh_options
from gpuctl.hosts.settings import validate_inventory

YAML_INVENTORY = """\
all:
  vars:
    ansible_user: admin
  children:
    kube_node:
      hosts:
        worker-[1:3]:
    gpu_nodes:
      hosts:
        worker-1:
          ansible_host: 127.0.0.11
          ansible_port: 2222
        worker-2:
          ansible_host: 127.0.0.12
          ansible_user: other
          ansible_ssh_private_key_file: ~/keys/id_ed25519
      vars:
        ansible_ssh_common_args: "-o UserKnownHostsFile=/etc/gpu/known_hosts -o StrictHostKeyChecking=yes"
        ansible_become: true
"""

INI_INVENTORY = """\
[kube_node]
gpu[01:02].example.com

[gpu_nodes]
gpu[01:02].example.com ansible_user=ops

[gpu_nodes:vars]
ansible_ssh_extra_args='-oUserKnownHostsFile="/a/known /b/known"'
gpuctl_driver_branch=570
gpuctl_cdi_enabled=yes
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_yaml_inventory_hosts_connection_settings_and_groups(tmp_path: Path) -> None:
    inventory = load_inventory(write(tmp_path, "hosts.yml", YAML_INVENTORY))
    assert [host.name for host in inventory.hosts] == ["worker-1", "worker-2"]
    first, second = inventory.hosts
    assert (first.address, first.port, first.user) == ("127.0.0.11", 2222, "admin")
    assert (second.address, second.port, second.user) == ("127.0.0.12", None, "other")
    assert second.key_files == (str(Path("~/keys/id_ed25519").expanduser()),)
    assert first.known_hosts_files == ("/etc/gpu/known_hosts",)
    assert first.strict_host_key_checking is True
    assert first.become is True
    assert first.groups == ("all", "gpu_nodes", "kube_node")
    assert "worker-3" not in [host.name for host in inventory.hosts]


def test_ini_inventory_with_ranges_and_group_vars(tmp_path: Path) -> None:
    inventory = load_inventory(write(tmp_path, "hosts.ini", INI_INVENTORY))
    assert [host.name for host in inventory.hosts] == ["gpu01.example.com", "gpu02.example.com"]
    host = inventory.hosts[0]
    assert host.user == "ops"
    assert host.known_hosts_files == ("/a/known", "/b/known")
    assert host.vars["gpuctl_driver_branch"] == 570
    validate_inventory(inventory)  # INI booleans ("yes") and integers are accepted


def test_group_vars_folder_next_to_the_inventory_is_read(tmp_path: Path) -> None:
    write(tmp_path, "group_vars/all/driver.yml", 'gpuctl_driver_branch: "570"\n')
    write(tmp_path, "host_vars/worker-2.yml", "gpuctl_cdi_enabled: false\n")
    inventory = load_inventory(write(tmp_path, "hosts.yml", YAML_INVENTORY))
    assert {host.vars["gpuctl_driver_branch"] for host in inventory.hosts} == {"570"}
    assert inventory.hosts[1].vars["gpuctl_cdi_enabled"] is False
    assert "gpuctl_cdi_enabled" not in inventory.hosts[0].vars


def test_limit_uses_ansible_patterns(tmp_path: Path) -> None:
    path = write(tmp_path, "hosts.yml", YAML_INVENTORY)
    assert [host.name for host in load_inventory(path, limit="worker-2").hosts] == ["worker-2"]
    with pytest.raises(ConfigError, match="--limit 'nothere' matches no host of group 'gpu_nodes'"):
        load_inventory(path, limit="nothere")


def test_kubespray_inventory_without_gpu_nodes_is_refused_with_a_hint(tmp_path: Path) -> None:
    path = write(tmp_path, "hosts.yml", "all:\n  children:\n    kube_node:\n      hosts:\n        w1:\n")
    with pytest.raises(ConfigError) as caught:
        load_inventory(path)
    assert "no group 'gpu_nodes'" in caught.value.message
    assert "kube_node" in caught.value.hint


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        (
            "gpuctl_driver_branch",
            '"latest"',
            "gpuctl_driver_branch: must be digits like \"550\", got 'latest'",
        ),
        ("gpuctl_driver_branch", "5500", "must be three digits"),
        ("gpuctl_container_runtime", "podman", "must be one of '', 'containerd', 'docker', 'crio'"),
        ("gpuctl_driver_source", "ppa", "must be one of 'cuda_repo', 'distribution'"),
        ("gpuctl_toolkit_version", "latest", "must look like '1.17.8-1'"),
        ("gpuctl_cuda_repo_url", "ftp://mirror/cuda", "must be an http://, https:// or file:// URL"),
        ("gpuctl_cdi_enabled", "maybe", "must be true or false"),
        ("gpuctl_reboot_serial", "0", "must be a positive number"),
        ("gpuctl_driver_version", '"535.1.2"', "is not on driver branch '550'"),
    ],
)
def test_invalid_setting_names_file_and_key(tmp_path: Path, key: str, value: str, expected: str) -> None:
    write(tmp_path, "group_vars/all/settings.yml", f"{key}: {value}\ngpuctl_driver_branch_unused: 1\n")
    if key == "gpuctl_driver_version":
        write(tmp_path, "group_vars/all/driver.yml", 'gpuctl_driver_branch: "550"\n')
    inventory = load_inventory(write(tmp_path, "hosts.yml", YAML_INVENTORY))
    with pytest.raises(ConfigError) as caught:
        validate_inventory(inventory)
    assert caught.value.message.startswith(f"{tmp_path / 'group_vars/all/settings.yml'}: {key}: ")
    assert expected in caught.value.message
    assert "gpuctl preflight" in caught.value.hint


def test_every_invalid_setting_is_reported_at_once(tmp_path: Path) -> None:
    write(tmp_path, "group_vars/all/driver.yml", "gpuctl_driver_branch: latest\ngpuctl_cdi_enabled: maybe\n")
    write(tmp_path, "group_vars/gpu_nodes.yml", "gpuctl_reboot_serial: 0\n")
    inventory = load_inventory(write(tmp_path, "hosts.yml", YAML_INVENTORY))  # two hosts, same values
    with pytest.raises(ConfigError) as caught:
        validate_inventory(inventory)
    message = caught.value.message
    assert message.startswith(f"{inventory.path}: 3 invalid gpuctl settings: ")
    found = message.split(": 3 invalid gpuctl settings: ", 1)[1].split("; ")
    driver, gpu_nodes = tmp_path / "group_vars/all/driver.yml", tmp_path / "group_vars/gpu_nodes.yml"
    assert found == [
        f"{driver}: gpuctl_cdi_enabled: must be true or false, got 'maybe'",
        f"{driver}: gpuctl_driver_branch: must be digits like \"550\", got 'latest'",
        f"{gpu_nodes}: gpuctl_reboot_serial: must be a positive number of hosts rebooted at a time, got 0",
    ]
    for key in ("gpuctl_cdi_enabled", "gpuctl_driver_branch", "gpuctl_reboot_serial"):
        assert key in caught.value.hint


def test_every_invalid_setting_through_the_cli_exits_2_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(
        tmp_path, "group_vars/all/driver.yml", "gpuctl_driver_source: ppa\ngpuctl_toolkit_version: latest\n"
    )
    path = write(tmp_path, "hosts.yml", YAML_INVENTORY)  # its hosts do not exist: none may be contacted
    for command in (["preflight"], ["bootstrap", "--phase", "host"]):
        assert run([*command, "--inventory", str(path)]) == 2
        captured = capsys.readouterr()
        error, hint = captured.err.splitlines()
        assert error.startswith(f"error: {path}: 2 invalid gpuctl settings: ")
        assert "gpuctl_driver_source: must be one of" in error
        assert "gpuctl_toolkit_version: must look like" in error
        assert hint.startswith("hint: fix gpuctl_driver_source, gpuctl_toolkit_version ")
        assert captured.out == ""


def test_a_boolean_set_in_the_inventory_file_is_traced_to_it(tmp_path: Path) -> None:
    text = YAML_INVENTORY + "        gpuctl_nvidia_runtime_default: 3\n"
    path = write(tmp_path, "hosts.yml", text)
    with pytest.raises(ConfigError, match=r"hosts.yml: gpuctl_nvidia_runtime_default: must be true or false"):
        validate_inventory(load_inventory(path))


def test_unknown_setting_is_a_warning_with_a_suggestion(tmp_path: Path) -> None:
    write(tmp_path, "group_vars/all/driver.yml", 'gpuctl_driver_brnach: "550"\n')
    inventory = load_inventory(write(tmp_path, "hosts.yml", YAML_INVENTORY))
    known = frozenset({"gpuctl_driver_branch"})
    (warning,) = validate_inventory(inventory, known)
    assert "gpuctl_driver_brnach: unknown gpuctl setting" in warning
    assert "did you mean gpuctl_driver_branch?" in warning


def test_templated_values_are_left_to_the_playbook(tmp_path: Path) -> None:
    write(tmp_path, "group_vars/all/driver.yml", 'gpuctl_driver_branch: "{{ my_branch }}"\n')
    validate_inventory(load_inventory(write(tmp_path, "hosts.yml", YAML_INVENTORY)))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            "-o UserKnownHostsFile=/k -o StrictHostKeyChecking=no",
            {"userknownhostsfile": "/k", "stricthostkeychecking": "no"},
        ),
        ("-oProxyCommand='ssh -W %h:%p bastion'", {"proxycommand": "ssh -W %h:%p bastion"}),
        ('-o "UserKnownHostsFile /a /b" -o UserKnownHostsFile=/ignored', {"userknownhostsfile": "/a /b"}),
        ("-C -o", {}),
    ],
)
def test_parse_ssh_options(args: str, expected: dict[str, str]) -> None:
    assert parse_ssh_options(args) == expected


# Through the real entry point: exit 2, one line naming the file, never a traceback.
@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("hosts.yml", "all:\n  hosts:\n    a: [\n", "cannot parse inventory"),
        ("hosts.ini", "[gpu_nodes\nnode1\n", "cannot parse inventory"),
        ("hosts.yml", "all:\n  hosts:\n    a:\n", "no group 'gpu_nodes'"),
        ("hosts.yml", "- gpu_nodes\n- node1\n", "top level must be a mapping of groups (like `all:`"),
        (
            "hosts.yaml",
            "gpu_nodes\n",
            "must be a mapping of groups (like `all:` or `gpu_nodes:`), got a string",
        ),
        ("hosts.yml", "[gpu_nodes, node1]\n", "top level must be a mapping of groups"),
    ],
)
def test_bad_inventories_exit_2_without_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, expected: str
) -> None:
    path = write(tmp_path, name, text)
    for command in (["preflight"], ["bootstrap", "--phase", "host"]):
        assert run([*command, "--inventory", str(path)]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err
        first = err.splitlines()[0]
        assert first.startswith(f"error: {path}") or first.startswith(f"error: {path.resolve()}")
        assert expected in first
        assert "Tagged" not in err  # never an Ansible class name


def test_missing_inventory_and_invalid_setting_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["preflight", "--inventory", str(tmp_path / "nope.yml")]) == 2
    assert "nope.yml: inventory not found" in capsys.readouterr().err
    write(tmp_path, "group_vars/all/driver.yml", "gpuctl_driver_branch: latest\n")
    path = write(tmp_path, "hosts.yml", YAML_INVENTORY)
    assert run(["bootstrap", "--phase", "host", "--inventory", str(path)]) == 2
    err = capsys.readouterr().err
    assert "group_vars/all/driver.yml: gpuctl_driver_branch: must be digits" in err
    assert "Traceback" not in err


def test_cluster_phase_needs_a_kubeconfig_and_phase_is_required(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.kubeconfig"
    assert run(["bootstrap", "--phase", "cluster", "--kubeconfig", str(missing)]) == 2
    assert str(missing) in capsys.readouterr().err
    assert run(["bootstrap", "--inventory", "x.yml"]) == 2  # --phase is required


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("[all]\n\n[gpu_nodes\nnode1\n", 3, "'[gpu_nodes': a section header without its closing ']'"),
        ("[gpu_nodes]\nnode1 ansible_port\n", 2, "Expected key=value host variable assignment"),
        ("[gpu_nodes:vars]\nfoo\n", 2, "'foo': Expected key=value, got: foo"),
        ("[gpu_nodes]\nn1\n[gpu_nodes:children]\n# kids\nmissing\n", 5, "includes undefined group 'missing'"),
        ("[gpu_nodes]\nnode[1:]\n", 2, "host range must specify end value"),
    ],
)
def test_a_malformed_ini_inventory_names_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, line: int, reason: str
) -> None:
    path = write(tmp_path, "hosts.ini", text)
    assert run(["preflight", "--inventory", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"error: {path.resolve()}:{line}: cannot parse inventory line ")
    assert reason in err[0]
    assert "values to unpack" not in err[0]
    assert err[1].startswith("hint: an INI line is a section `[group]`")
    assert len(err) == 2
