"""The host probe's RDMA section and preflight's RDMA findings (gpuctl.hosts.rdma).

The probe's own readers run here against a sysfs-shaped tree and a real process: the port files
hold what the kernel prints in them (drivers/infiniband/core/sysfs.c, state_show, phys_state_show,
rate_show, link_layer_show: "4: ACTIVE", "5: LinkUp", "400 Gb/sec (4X NDR)", "InfiniBand";
https://github.com/torvalds/linux/blob/v6.8/drivers/infiniband/core/sysfs.c), and the locked-memory
limit is read from the /proc/PID/limits the kernel writes for a process started with that limit.
The module and limit lines are machine output copied from the public threads cited beside them.
"""

from __future__ import annotations

import resource
import shutil
import subprocess
from pathlib import Path

from gpuctl.hosts.findings import Finding
from gpuctl.hosts.host_state import parse_host_state
from gpuctl.hosts.probes import host_findings
from gpuctl.hosts.rdma import RdmaState, memlock_bytes, module_names, parse_rdma, rdma_findings
from gpuctl.hosts.settings import CHECKS
from tests.polling import wait_until
from tests.probe_captures import HOST_PROBE

# `lsmod | grep peermem` on a RoCE host (https://github.com/NVIDIA/nccl/issues/1537).
LSMOD_PEERMEM = "nvidia_peermem         12288  0"
# `ulimit -a` in a container under containerd's LimitMEMLOCK=64M
# (https://github.com/gardenlinux/gardenlinux/pull/170).
ULIMIT_A_MEMLOCK = "max locked memory       (kbytes, -l) 65536"
# /proc/driver/nvidia/version of the open and the proprietary kernel modules (as test_probes_parse.py).
OPEN_MODULE = (
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  "
    "(dvs-builder@U16-I3-B03-4-3)  Thu Jan 23 23:56:23 UTC 2025"
)
PROPRIETARY_MODULE = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024"
UNLIMITED = "unlimited"


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def ib_tree(root: Path, ports: dict[str, tuple[str, str]]) -> Path:
    """/sys/class/infiniband: device -> (state, phys_state) of its port 1, at NDR over InfiniBand."""
    for device, (state, phys_state) in ports.items():
        port = root / device / "ports" / "1"
        write(port / "state", state)
        write(port / "phys_state", phys_state)
        write(port / "rate", "400 Gb/sec (4X NDR)")
        write(port / "link_layer", "InfiniBand")
    return root


def pci_tree(root: Path, functions: dict[str, tuple[str, str, str]]) -> Path:
    for slot, (vendor, device, class_code) in functions.items():
        write(root / slot / "vendor", vendor)
        write(root / slot / "device", device)
        write(root / slot / "class", class_code)
    return root


def section(tmp_path: Path, ports: dict[str, tuple[str, str]], **changes: object) -> dict[str, object]:
    """The probe's `rdma` section read by its own readers from trees under tmp_path."""
    pci = pci_tree(
        tmp_path / "pci",
        {
            "0000:18:00.0": ("0x10de", "0x2330", "0x030200"),  # an H100: not a NIC
            "0000:1a:00.0": ("0x15b3", "0x1021", "0x020700"),  # ConnectX-7, InfiniBand
            "0000:3c:00.0": ("0x15b3", "0x1021", "0x020700"),
        },
    )
    found: dict[str, object] = {
        "nics": HOST_PROBE.rdma_nics(str(pci)),
        "devices": HOST_PROBE.rdma_devices(str(ib_tree(tmp_path / "ib", ports))),
        "dev": ["rdma_cm", "umad0", "umad1", "uverbs0", "uverbs1"],
        "modules": [],
        "ulimit_l": UNLIMITED,
        "runtime_memlock": {},
        "kernel_config": ["CONFIG_DMA_SHARED_BUFFER=y"],
    }
    return {**found, **changes}


HEALTHY = {"mlx5_0": ("4: ACTIVE", "5: LinkUp"), "mlx5_1": ("4: ACTIVE", "5: LinkUp")}


def findings_of(
    rdma: RdmaState, fabric: str = "auto", driver: str = OPEN_MODULE, kernel: str = "6.8.0-90-generic"
) -> dict[str, Finding]:
    found = rdma_findings("gpu-node-3", rdma, {"gpuctl_fabric": fabric}, kernel=kernel, driver_proc=driver)
    return {finding.id: finding for finding in found}


def test_the_probe_finds_the_rdma_nics_and_reads_each_port(tmp_path: Path) -> None:
    rdma = parse_rdma(section(tmp_path, HEALTHY))
    assert [nic["slot"] for nic in rdma.nics] == ["0000:1a:00.0", "0000:3c:00.0"]
    assert [(p.device, p.port, p.active, p.rate) for p in rdma.ports] == [
        ("mlx5_0", "1", True, "400 Gb/sec (4X NDR)"),
        ("mlx5_1", "1", True, "400 Gb/sec (4X NDR)"),
    ]
    assert rdma.verbs == ("uverbs0", "uverbs1")


def test_a_healthy_rdma_host_passes(tmp_path: Path) -> None:
    rdma = parse_rdma(section(tmp_path, HEALTHY, modules=[LSMOD_PEERMEM]))
    by_id = findings_of(rdma)
    assert {key: f.status for key, f in by_id.items()} == {
        "rdma-devices": "pass",
        "gpudirect-rdma": "pass",
        "memlock": "pass",
    }
    assert by_id["rdma-devices"].message == (
        "2 RDMA port(s) active (400 Gb/sec (4X NDR)), 2 verbs device(s) in /dev/infiniband"
    )
    assert by_id["gpudirect-rdma"].message.startswith("nvidia_peermem loaded")


def test_a_host_without_an_rdma_nic_is_not_checked(tmp_path: Path) -> None:
    rdma = parse_rdma({**section(tmp_path, {}), "nics": []})
    assert findings_of(rdma) == {}
    assert findings_of(rdma, fabric="none") == {}


def test_no_rdma_device_fails_where_the_inventory_names_the_fabric(tmp_path: Path) -> None:
    rdma = parse_rdma(section(tmp_path, {}, dev=None))
    declared = findings_of(rdma, fabric="ib")["rdma-devices"]
    assert declared.status == "fail"
    assert declared.message == (
        "gpuctl_fabric is ib but no RDMA device in /sys/class/infiniband: NCCL falls back to TCP sockets"
    )
    assert declared.hint.startswith("on gpu-node-3: load the RDMA drivers")
    detected = findings_of(rdma)["rdma-devices"]
    assert (detected.status, detected.message.split(" but ")[0]) == (
        "warn",
        "2 RDMA-capable NIC function(s) on the PCI bus (NVIDIA/Mellanox)",
    )
    # the inventory says RDMA, the host has no NIC at all: still checked, still a failure
    assert findings_of(parse_rdma({"nics": [], "devices": {}}), fabric="efa")["rdma-devices"].status == "fail"


def test_a_port_down_is_named(tmp_path: Path) -> None:
    rdma = parse_rdma(section(tmp_path, {**HEALTHY, "mlx5_1": ("1: DOWN", "3: Disabled")}))
    finding = findings_of(rdma, fabric="ib")["rdma-devices"]
    assert (finding.status, finding.message) == (
        "fail",
        "1 of 2 RDMA port(s) active; down: mlx5_1 port 1: DOWN, Disabled",
    )


def test_no_verbs_device_means_no_process_can_open_them(tmp_path: Path) -> None:
    rdma = parse_rdma(section(tmp_path, HEALTHY, dev=["umad0"]))
    finding = findings_of(rdma)["rdma-devices"]
    assert finding.message == "2 RDMA device(s) but no /dev/infiniband/uverbs*: no process can open them"
    assert "modprobe ib_uverbs" in finding.hint


def test_gpudirect_rdma_by_peer_memory_or_dmabuf(tmp_path: Path) -> None:
    rdma = parse_rdma(section(tmp_path, HEALTHY))
    dmabuf = findings_of(rdma)["gpudirect-rdma"]
    assert (dmabuf.status, dmabuf.message) == (
        "pass",
        "DMA-BUF: kernel 6.8.0-90-generic, open kernel modules (no nvidia-peermem needed)",
    )
    proprietary = findings_of(rdma, driver=PROPRIETARY_MODULE)["gpudirect-rdma"]
    assert proprietary.status == "warn"
    assert "the proprietary kernel modules (DMA-BUF needs the open ones)" in proprietary.message
    assert proprietary.hint.startswith("on gpu-node-3: `modprobe nvidia-peermem`")
    old_kernel = findings_of(rdma, kernel="5.4.0-216-generic")["gpudirect-rdma"]
    assert "kernel 5.4.0-216-generic (DMA-BUF needs 5.12 or later)" in old_kernel.message
    assert module_names([LSMOD_PEERMEM, "Module                  Size  Used by"]) == {"nvidia_peermem"}


def test_the_locked_memory_limit_of_the_container_runtime(tmp_path: Path) -> None:
    """A real process started with an 8 MiB limit (systemd's default for containerd), found by its
    name as the probe finds containerd, dockerd or crio, its /proc/PID/limits read by the probe."""
    daemon = tmp_path / "memlockdaemon"
    shutil.copy(shutil.which("sleep") or "/bin/sleep", daemon)
    limit = 8 * 2**20
    soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    resource.setrlimit(resource.RLIMIT_MEMLOCK, (limit, hard))  # the child inherits it
    try:
        process = subprocess.Popen([str(daemon), "30"])
    finally:
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (soft, hard))
    try:
        # Popen returns once the child has exec'd; its /proc name can still lag on a loaded machine.
        found = wait_until(
            lambda: HOST_PROBE.runtime_memlock(names=("memlockdaemon",)), "the daemon listed in /proc"
        )
    finally:
        process.kill()
        process.wait()
    assert memlock_bytes(found["memlockdaemon"]) == limit
    rdma = parse_rdma(section(tmp_path, HEALTHY, runtime_memlock={"containerd": found["memlockdaemon"]}))
    finding = findings_of(rdma)["memlock"]
    assert finding.status == "warn"
    assert finding.message.startswith(
        "locked memory is limited (containerd (its containers inherit it): 8 MiB)"
    )
    assert "containerd.service.d/memlock.conf" in finding.hint
    assert "LimitMEMLOCK=infinity" in finding.hint


def test_the_locked_memory_limit_as_ulimit_prints_it(tmp_path: Path) -> None:
    assert memlock_bytes(ULIMIT_A_MEMLOCK) == 64 * 2**20
    assert memlock_bytes("8192") == 8 * 2**20
    assert memlock_bytes(UNLIMITED) is None
    limited = findings_of(parse_rdma(section(tmp_path, HEALTHY, ulimit_l=ULIMIT_A_MEMLOCK)))["memlock"]
    assert limited.message.startswith("locked memory is limited (`ulimit -l` of the login: 64 MiB)")
    assert "/etc/security/limits.conf" in limited.hint


def test_the_probe_section_runs_here_and_preflight_reads_it() -> None:
    """This machine's own answer: whatever RDMA it has, parsed, and no finding made for a host
    without an RDMA NIC (the sim's and CI's hosts have none)."""
    answer = HOST_PROBE.host_state(["rdma", "kernel"])
    state = parse_host_state(answer)
    assert state.rdma.ulimit_l
    findings = host_findings("here", "root", state, {})
    if not state.rdma.nics:
        assert not {f.id for f in findings} & {"rdma-devices", "gpudirect-rdma", "memlock"}


def test_the_fabric_setting_is_validated() -> None:
    check = CHECKS["gpuctl_fabric"]
    assert check("ib") == ""
    assert check("infiniband") == "must be one of 'auto', 'ib', 'roce', 'efa', 'none', got 'infiniband'"


# --- each GPU's PCIe link (the probe's `gpu_links`) -------------------------------------------------
# The kernel's link attributes as NCCL's topology dump carries them from sysfs (max_link_speed,
# max_link_width) on a host of 8 RTX 4090s (https://github.com/NVIDIA/nccl/issues/814):
# link_speed="16.0 GT/s PCIe" link_width="16".
SPEED, WIDTH = "16.0 GT/s PCIe", "16"


def gpu_tree(root: Path, widths: dict[str, str]) -> Path:
    """GPUs on a sysfs-shaped PCI bus, each at the given current width of an x16 link."""
    for slot, width in widths.items():
        for name, value in {
            "vendor": "0x10de", "device": "0x26b9", "class": "0x030200", "current_link_speed": SPEED,
            "max_link_speed": SPEED, "current_link_width": width, "max_link_width": WIDTH,
        }.items():  # fmt: skip
            write(root / slot / name, value)
    write(root / "0000:1a:00.0" / "vendor", "0x15b3")  # a NIC: not a GPU, not read
    return root


def test_a_gpu_link_narrower_than_its_maximum_is_named(tmp_path: Path) -> None:
    tree = gpu_tree(tmp_path, {"0000:3b:00.0": WIDTH, "0000:5e:00.0": "8"})
    state = parse_host_state({"gpu_links": HOST_PROBE.gpu_links(str(tree))})
    assert [(link.slot, link.speed, link.width) for link in state.gpu_links] == [
        ("0000:3b:00.0", SPEED, WIDTH),
        ("0000:5e:00.0", SPEED, "8"),
    ]
    finding = next(f for f in host_findings("gpu-node-3", "root", state, {}) if f.id == "gpu-pcie-link")
    assert (finding.status, finding.message) == (
        "warn",
        "1 of 2 GPU(s) trained a narrower PCIe link than they can run: 0000:5e:00.0 at x8 of x16",
    )
    assert finding.hint.startswith(
        "on gpu-node-3: `sudo lspci -vv -s 0000:5e:00.0 | grep -e LnkCap -e LnkSta`"
    )


def test_full_width_passes_and_an_unreadable_link_makes_no_finding(tmp_path: Path) -> None:
    whole = parse_host_state(
        {"gpu_links": HOST_PROBE.gpu_links(str(gpu_tree(tmp_path / "a", {"0000:3b:00.0": WIDTH})))}
    )
    (finding,) = [f for f in host_findings("h", "root", whole, {}) if f.id == "gpu-pcie-link"]
    assert (finding.status, finding.message) == ("pass", "1 GPU(s) at their full PCIe link width (x16)")
    bare = tmp_path / "b" / "0000:3b:00.0"
    for name, value in {"vendor": "0x10de", "device": "0x2330", "class": "0x030200"}.items():
        write(bare / name, value)  # an emulated bus without link attributes
    state = parse_host_state({"gpu_links": HOST_PROBE.gpu_links(str(bare.parent))})
    assert "gpu-pcie-link" not in {f.id for f in host_findings("h", "root", state, {})}
