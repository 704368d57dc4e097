"""gpuctl's host probes captured on real machines (tests/corpus/hosts.yaml): preflight's findings,
the simulated cluster's host-link view and the driver role's facts, from the probes' verbatim output."""

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
from gpuctl.hosts.probe_script import PROBE_SCRIPT, split_sections
from gpuctl.hosts.probes import host_findings, installed_driver_version, sudo_finding
from gpuctl.package_data import default_driver_branch
from gpuctl.sim.server.host_links import parse_probe

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
ITEMS: dict[str, dict[str, Any]] = {
    item["id"]: item for item in yaml.safe_load((CORPUS / "hosts.yaml").read_text(encoding="utf-8"))
}
H200_PREFLIGHT = "linux-nvidia-h200-580.159.04-preflight-probe"
READ_TASKS = Path(__file__).resolve().parents[2] / "playbooks/roles/nvidia_driver/tasks/read.yml"


def _of_kind(kind: str) -> list[dict[str, Any]]:
    return [item for item in ITEMS.values() if item["kind"] == kind]


def _text(item: dict[str, Any]) -> str:
    return (CORPUS / item["file"]).read_text(encoding="utf-8")


def test_every_section_of_the_script_came_back_from_the_h200() -> None:
    sections = split_sections(_text(ITEMS[H200_PREFLIGHT]))
    script_sections = [
        line.split()[1].rstrip(";") for line in PROBE_SCRIPT.splitlines() if line.startswith("s ")
    ]
    assert list(sections) == script_sections
    assert sections["pci"] == "0000:00:06.0 0x10de 0x2335 0x030200"
    assert sections["modules"].split() == ["nvidia_uvm", "nvidia"]
    assert sections["runtimes"] == sections["containerd-config"] == sections["dkms"] == ""


@pytest.mark.parametrize("item", _of_kind("preflight-probe"), ids=lambda item: item["id"])
def test_preflight_findings(item: dict[str, Any]) -> None:
    assert default_driver_branch() == "580"  # the branch the driver finding compares with
    findings = host_findings(item["host"], item["user"], split_sections(_text(item)), {})
    assert {finding.id: [finding.status, finding.message] for finding in findings} == item["expect"][
        "findings"
    ]
    assert len(findings) == len(item["expect"]["findings"])  # one disk finding: / and /var are one disk


def test_root_needs_no_sudo_even_where_sudo_is_not_installed() -> None:
    """The probe ran as root on a host without sudo (`sudo: not found`, exit 127)."""
    sections = split_sections(_text(ITEMS[H200_PREFLIGHT]))
    assert sections["sudo"].splitlines()[-1] == "rc=127"
    assert "sudo: not found" in sections["sudo"]
    finding = sudo_finding(sections["id"], sections["sudo"], "root")
    assert (finding.status, finding.message, finding.hint) == ("pass", "connected as root", "")


def test_the_open_kernel_modules_version_and_nvidia_smis_agree() -> None:
    sections = split_sections(_text(ITEMS[H200_PREFLIGHT]))
    assert sections["driver"].startswith(
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04"
    )
    assert installed_driver_version(sections["driver"], sections["nvidia-smi"]) == (
        "580.159.04",
        "kernel module loaded",
    )
    assert installed_driver_version("", sections["nvidia-smi"]) == ("580.159.04", "nvidia-smi")


@pytest.mark.parametrize("item", _of_kind("host-link-probe"), ids=lambda item: item["id"])
def test_host_link_probe(item: dict[str, Any]) -> None:
    assert asdict(parse_probe(_text(item))) == item["expect"]["truth"]


@pytest.mark.parametrize("item", _of_kind("driver-probe"), ids=lambda item: item["id"])
def test_driver_role_facts_from_its_probe(item: dict[str, Any]) -> None:
    """The driver role's own Jinja (read.yml's "derive driver facts"), evaluated by Ansible's
    templating over the probe's real output, and gpuctl's reading of the nvidia-smi it ran."""
    tasks = yaml.safe_load(READ_TASKS.read_text(encoding="utf-8"))
    task = next(task for task in tasks if task["name"] == "Driver | derive driver facts")
    variables: dict[str, Any] = {
        "gpuctl_driver_probe": {"stdout": _text(item)},
        "gpuctl_fabricmanager": "auto",  # the role's default
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
