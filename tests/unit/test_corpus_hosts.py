"""gpuctl's host probes captured on real machines (tests/corpus/hosts.yaml): preflight's findings
and the simulated cluster's host-link view, from the probes' verbatim output."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import yaml

from gpuctl.hosts.probe_script import PROBE_SCRIPT, split_sections
from gpuctl.hosts.probes import host_findings, installed_driver_version, sudo_finding
from gpuctl.package_data import default_driver_branch
from gpuctl.sim.server.host_links import parse_probe

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
ITEMS: dict[str, dict[str, Any]] = {
    item["id"]: item for item in yaml.safe_load((CORPUS / "hosts.yaml").read_text(encoding="utf-8"))
}
H200_PREFLIGHT = "linux-nvidia-h200-580.159.04-preflight-probe"
H200_HOST_LINK = "linux-nvidia-h200-580.159.04-host-link-probe"


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


def test_preflight_findings_on_the_h200() -> None:
    item = ITEMS[H200_PREFLIGHT]
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


def test_host_link_probe_of_the_h200() -> None:
    item = ITEMS[H200_HOST_LINK]
    assert asdict(parse_probe(_text(item))) == item["expect"]["truth"]
