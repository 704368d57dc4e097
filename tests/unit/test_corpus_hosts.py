"""gpuctl's host probes captured on real machines (tests/corpus/hosts.yaml), read by the one parser
(gpuctl.hosts.host_state): preflight's findings, the simulated cluster's host-link view and the
driver role's facts. The captures are of the shell probes gpuctl had before its one host probe;
tests/probe_captures.py carries their texts into the probe's JSON document."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from gpuctl.hosts.driver_state import nvidia_smi_state
from gpuctl.hosts.host_state import parse_host_state, parse_probe_output
from gpuctl.hosts.probes import host_findings, installed_driver_version, sudo_finding
from gpuctl.package_data import default_driver_branch
from gpuctl.sim.server.host_links import parse_probe
from tests.probe_captures import driver_probe_document, host_link_document, preflight_document

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
ITEMS: dict[str, dict[str, Any]] = {
    item["id"]: item for item in yaml.safe_load((CORPUS / "hosts.yaml").read_text(encoding="utf-8"))
}
H200_PREFLIGHT = "linux-nvidia-h200-580.159.04-preflight-probe"
READ_TASKS = Path(__file__).resolve().parents[2] / "playbooks/roles/nvidia_driver/tasks/read.yml"
# The probe role's variables (the OS matrix, the NVL rack GPU ids), which the driver role reads too.
PROBE_VARS = Path(__file__).resolve().parents[2] / "playbooks/roles/gpuctl_probe/vars/main.yml"


def _of_kind(kind: str) -> list[dict[str, Any]]:
    return [item for item in ITEMS.values() if item["kind"] == kind]


def _text(item: dict[str, Any]) -> str:
    return (CORPUS / item["file"]).read_text(encoding="utf-8")


def _machine_document(preflight_id: str) -> dict[str, Any]:
    """Everything one machine's captures say: preflight's probe, and the host-link probe's
    `nvidia-smi -L` and --query-gpu (the commands the one probe runs for nvidia-smi)."""
    link = ITEMS[preflight_id.replace("-preflight-probe", "-host-link-probe")]
    return {**preflight_document(_text(ITEMS[preflight_id])), **host_link_document(_text(link))}


@pytest.mark.parametrize("item", _of_kind("preflight-probe"), ids=lambda item: item["id"])
def test_preflight_findings(item: dict[str, Any]) -> None:
    assert default_driver_branch() == "580"  # the branch the driver finding compares with
    state = parse_host_state(_machine_document(item["id"]))
    findings = host_findings(item["host"], item["user"], state, {})
    assert {finding.id: [finding.status, finding.message] for finding in findings} == item["expect"][
        "findings"
    ]
    assert len(findings) == len(item["expect"]["findings"])  # one disk finding: / and /var are one disk


def test_the_document_reads_back_through_the_probes_own_output_line() -> None:
    """parse_probe_output reads the last line of the probe's stdout (the roles' raw task sees the same)."""
    document = _machine_document(H200_PREFLIGHT)
    state = parse_probe_output("a motd line\n" + json.dumps({"files": {}, "host": document}) + "\n")
    assert state == parse_host_state(document)
    assert [device.device for device in state.gpus] == ["0x2335"]
    assert state.modules == {"nvidia_uvm", "nvidia"}
    assert (state.secure_boot, state.runtimes, state.dkms) == ("bios", {}, None)


def test_root_needs_no_sudo_even_where_sudo_is_not_installed() -> None:
    """The probe ran as root on a host without sudo (`sudo: not found`, exit 127)."""
    state = parse_host_state(_machine_document(H200_PREFLIGHT))
    finding = sudo_finding(state.uid, state.sudo, "root")
    assert (finding.status, finding.message, finding.hint) == ("pass", "connected as root", "")


def test_the_open_kernel_modules_version_and_nvidia_smis_agree() -> None:
    state = parse_host_state(_machine_document(H200_PREFLIGHT))
    assert state.driver_proc.startswith("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04")
    assert installed_driver_version(state) == ("580.159.04", "kernel module loaded")
    without_proc = parse_host_state({**_machine_document(H200_PREFLIGHT), "driver": ""})
    assert installed_driver_version(without_proc) == ("580.159.04", "nvidia-smi")


@pytest.mark.parametrize("item", _of_kind("host-link-probe"), ids=lambda item: item["id"])
def test_host_link_probe(item: dict[str, Any]) -> None:
    output = json.dumps({"host": host_link_document(_text(item))})
    assert asdict(parse_probe(output)) == item["expect"]["truth"]


@pytest.mark.parametrize("item", _of_kind("driver-probe"), ids=lambda item: item["id"])
def test_driver_role_facts_from_its_probe(item: dict[str, Any]) -> None:
    """The driver role's own Jinja (read.yml's "derive driver facts"), evaluated by Ansible's
    templating over the probe's real output, and gpuctl's reading of the nvidia-smi it ran."""
    tasks = yaml.safe_load(READ_TASKS.read_text(encoding="utf-8"))
    task = next(task for task in tasks if task["name"] == "Driver | derive driver facts")
    variables: dict[str, Any] = {
        "gpuctl_driver_probe": {"stdout": json.dumps(driver_probe_document(json.loads(_text(item))))},
        "gpuctl_fabricmanager": "auto",  # the role's default
        **yaml.safe_load(PROBE_VARS.read_text(encoding="utf-8")),
        **{name: trust_as_template(value) for name, value in task["vars"].items()},
    }
    templar = Templar(loader=DataLoader(), variables=variables)
    facts = {
        name: templar.template(trust_as_template(value))
        for name, value in task["ansible.builtin.set_fact"].items()
        if name in item["expect"]["facts"]
    }
    assert facts == item["expect"]["facts"]
    smi = json.loads(_text(item))["commands"]["nvidia_smi"]
    state = nvidia_smi_state(None if smi["rc"] == -1 else smi["rc"], smi["stdout"] + smi["stderr"])
    assert [state.state, state.message] == item["expect"]["driver"]
