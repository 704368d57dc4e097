"""The host phase reboots no node of a live cluster undrained: against the simulated cluster, which
inventory hosts are held (by name, gpuctl_node_name or address), what `gpuctl bootstrap --phase host`
says before it runs and hands ansible-playbook, and the driver role's real reboot tasks on this
machine (check mode) skipping the reboot of a held host and reporting it with the drain command."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.core.bootstrap import run_host_bootstrap
from gpuctl.core.bootstrap.reboots import HELD_HOSTS_VAR, host_reboot_plan

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

REBOOT_GUARD = Path(__file__).resolve().parents[1] / "hosts" / "playbooks" / "reboot_guard.yml"
SCENARIO = {"nodes": [{"name": "gpu-{i}", "count": 3, "gpus": 8}, {"name": "cpu-0"}]}


def closed_port() -> int:
    """A loopback port nothing listens on: SSH to it is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def write_inventory(path: Path, hosts: dict[str, dict[str, Any]], **group_vars: Any) -> Path:
    group = {"hosts": hosts, "vars": group_vars}
    path.write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": group}}}, sort_keys=False))
    return path


def node_addresses(cluster: Any) -> dict[str, str]:
    from gpuctl.kube.nodes import list_nodes

    return {node.name: node.addresses[0] for node in list_nodes(cluster.api_client())}


def mixed_inventory(tmp_path: Path, cluster: Any) -> Path:
    """gpu-0 by name, rack-b by gpu-1's address, bench-c by gpuctl_node_name, spare by nothing."""
    port = closed_port()
    unreachable = {"ansible_host": "127.0.0.1", "ansible_port": port}
    hosts = {
        "gpu-0": unreachable,
        "rack-b": {"ansible_host": node_addresses(cluster)["gpu-1"], "ansible_port": port},
        "bench-c": {**unreachable, "gpuctl_node_name": "gpu-2"},
        "spare": unreachable,
    }
    return write_inventory(tmp_path / "hosts.yml", hosts)


def test_hosts_that_are_nodes_of_the_cluster_are_held(sim: Any, tmp_path: Path) -> None:
    cluster = sim(SCENARIO)
    plan = host_reboot_plan(cluster.api_client(), mixed_inventory(tmp_path, cluster))
    assert plan.cluster == cluster.url
    assert dict(plan.nodes) == {"gpu-0": "gpu-0", "rack-b": "gpu-1", "bench-c": "gpu-2"}
    assert plan.held == ("gpu-0", "rack-b", "bench-c")
    assert plan.extra_args() == ("-e", json.dumps({HELD_HOSTS_VAR: ["gpu-0", "rack-b", "bench-c"]}))
    assert plan.hint("spare", "hosts.yml") == ""
    assert plan.hint("rack-b", "my hosts.yml") == (
        f"not rebooted: rack-b is node gpu-1 of the cluster at {cluster.url}; drain it "
        "(`kubectl drain gpu-1 --ignore-daemonsets`), then "
        "`gpuctl bootstrap --phase host -i 'my hosts.yml' --limit rack-b --reboot`, "
        "then `kubectl uncordon gpu-1`"
    )


def test_reboot_holds_nothing_and_says_which_nodes_it_will_reboot(sim: Any, tmp_path: Path) -> None:
    cluster = sim(SCENARIO)
    plan = host_reboot_plan(cluster.api_client(), mixed_inventory(tmp_path, cluster), reboot=True)
    assert (plan.held, plan.extra_args()) == ((), ())
    assert plan.notices()[1] == (
        f"will reboot rack-b (node gpu-1 of the cluster at {cluster.url}) if its NVIDIA driver needs a "
        "reboot to load, because --reboot was given: drain it first "
        "(`kubectl drain gpu-1 --ignore-daemonsets`)"
    )


def test_a_cluster_that_cannot_be_asked_holds_every_host(sim: Any, tmp_path: Path) -> None:
    cluster = sim(SCENARIO)
    inventory = mixed_inventory(tmp_path, cluster)
    client = cluster.api_client()
    cluster.server.stop()
    plan = host_reboot_plan(client, inventory)
    assert plan.held == ("gpu-0", "rack-b", "bench-c", "spare")
    assert "cannot reach the cluster" in plan.unknown
    (notice,) = plan.notices()
    assert notice.startswith("not rebooting any host: cannot tell which are nodes of a cluster (cannot reach")


def test_without_a_kubeconfig_the_inventory_policy_decides_alone(sim: Any, tmp_path: Path) -> None:
    plan = host_reboot_plan(None, mixed_inventory(tmp_path, sim(SCENARIO)))
    assert (plan.held, plan.notices(), plan.extra_args()) == ((), (), ())


def kept_command(stderr: str) -> dict[str, Any]:
    """ansible-runner's record of the command, from the kept artifacts the run names on stderr."""
    (line,) = [line for line in stderr.splitlines() if "kept in" in line]
    assert "the ansible-playbook command line and its environment: only PATH, HOME" in line
    (command,) = Path(line.split()[-1]).rglob("artifacts/*/command")
    recorded: dict[str, Any] = json.loads(command.read_text())
    return recorded


def test_bootstrap_says_before_the_run_which_hosts_it_will_not_reboot_and_holds_them(
    sim: Any, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    cluster = sim(SCENARIO)
    inventory = mixed_inventory(tmp_path, cluster)
    args = ["bootstrap", "--phase", "host", "-i", inventory, "--kubeconfig", cluster.kubeconfig]

    held = cli([*args, "--keep-artifacts", "-o", "json"])
    assert held.exit_code == 3, held.output  # every host unreachable: nothing ran on any of them
    assert held.stderr.splitlines()[0] == (
        "not rebooting gpu-0 (node gpu-0), rack-b (node gpu-1), bench-c (node gpu-2): nodes of the "
        f"cluster at {cluster.url} reboot only drained; a reboot the driver needs is reported "
        "instead (--reboot allows it)"
    )
    command = kept_command(held.stderr)["command"]
    assert command[command.index("-e") + 1] == json.dumps({HELD_HOSTS_VAR: ["gpu-0", "rack-b", "bench-c"]})

    allowed = cli([*args, "--reboot", "--keep-artifacts", "-o", "json"])
    assert allowed.exit_code == 3, allowed.output
    assert allowed.stderr.startswith("will reboot gpu-0 (node gpu-0 of the cluster at")
    assert not any(HELD_HOSTS_VAR in word for word in kept_command(allowed.stderr)["command"])


def run_reboot_tasks(tmp_path: Path, plan: Any, name: str) -> tuple[Any, list[dict[str, Any]]]:
    """The driver role's reboot tasks on this machine in check mode, as a host whose driver was just
    installed (tests/hosts/playbooks/reboot_guard.yml); its result and ansible-runner's events."""
    host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory = write_inventory(
        tmp_path / f"{name}.yml", {"controller": host}, gpuctl_reboot_policy="if_needed"
    )
    result = run_host_bootstrap(
        inventory_path=inventory,
        playbook=REBOOT_GUARD,
        check=True,
        keep_artifacts=True,
        extra_args=("-e", f"gpuctl_driver_reboot_marker={tmp_path / name}-marker"),
        reboot_plan=plan,
    )
    assert result.ok, result
    assert result.artifacts_dir is not None
    events = [json.loads(path.read_text()) for path in Path(result.artifacts_dir).rglob("job_events/*.json")]
    return result, events


def reboot_include(events: list[dict[str, Any]]) -> str:
    """What happened to the role's `Driver | reboot now` include: runner_on_ok (included) or skipped."""
    (outcome,) = [
        event["event"]
        for event in events
        if event.get("event_data", {}).get("task") == "Driver | reboot now"
        and event["event"] in ("runner_on_ok", "runner_on_skipped")
    ]
    return str(outcome)


def test_the_driver_role_skips_the_reboot_of_a_held_node_and_reports_how_to_do_it(
    sim: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    cluster = sim({"nodes": [{"name": "controller", "gpus": 8}]})
    inventory = write_inventory(tmp_path / "plan.yml", {"controller": {"ansible_connection": "local"}})
    plan = host_reboot_plan(cluster.api_client(), inventory)
    assert plan.held == ("controller",)

    held, events = run_reboot_tasks(tmp_path, plan, "held")
    (host,) = held.hosts
    assert host.driver is not None
    assert host.driver.reboot_required
    assert "drain it (`kubectl drain controller --ignore-daemonsets`)" in host.driver.hint
    assert "--limit controller --reboot`" in host.driver.hint
    assert reboot_include(events) == "runner_on_skipped"

    free, events = run_reboot_tasks(tmp_path, None, "free")  # no cluster: the policy alone
    (host,) = free.hosts
    assert host.driver is not None
    assert (host.driver.reboot_required, host.driver.hint) == (True, "")
    assert reboot_include(events) == "runner_on_ok"
