"""The Xid and SXid catalogues: every published code, the readers of each component's line, an SXid
never read as an Xid, and several Xids of one log reported root first (NVIDIA's order: the NVSwitch,
the GPU itself, NVLink, memory, the driver, the application)."""

from __future__ import annotations

import time

from gpuctl.diagnose import diagnose
from gpuctl.diagnose.catalogue import LAYER_RANK
from gpuctl.diagnose.catalogues import sxid, xid
from gpuctl.diagnose.scan import find_all

# Verbatim lines of public threads (the source of each beside it).
SXID_12028 = (  # https://github.com/leptonai/gpud/pull/338
    "kern  :err   : 2025-01-25T10:34:54,859532+00:00 nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028, "
    "Data {0x000001c0, 0x00bd5c8a, 0x00000500, 0x00000064, 0x00000000, 0x40008000, 0x5a001100, "
    "0x00000000, 0x00000000}"
)
XID_79 = "NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus"  # NVIDIA/NVSentinel#155
XID_74 = (  # https://github.com/NVIDIA/NVSentinel/blob/main/docs/designs/022-workflow-nvlink-err.md
    "[449410.332316] NVRM: Xid (PCI:0003:00:00): 74, pid='<unknown>', name=<unknown>, NVLink: fatal "
    "error detected on link 14(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)"
)
XID_145 = (  # https://github.com/leptonai/gpud/pull/1174
    "NVRM: Xid (PCI:0018:01:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 (0x0409a0c2 0x00000008 "
    "0x00000001 0x00000000 0x00100000 0x00000004)"
)
XID_94 = (  # https://github.com/akash-network/support/issues/244
    "[Fri Aug  9 13:32:56 2024] NVRM: Xid (PCI:0000:00:08): 94, pid='<unknown>', name=<unknown>, "
    "Contained: SM (0x1). RST: No, D-RST: No"
)
XID_119 = (  # https://github.com/vllm-project/vllm/issues/40652
    "[Sun Apr 26 23:12:26 2026] NVRM: Xid (PCI:0001:6c:00): 119, pid=10200, name=NvmlTaskRunner, "
    "Timeout after 45s of waiting for RPC response from GPU5 GSP! Expected function 76 "
    "(GSP_RM_CONTROL) sequence 24174 (0x20801322 0x808)."
)
XID_45 = (  # https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1150
    "kernel: NVRM: Xid (PCI:0000:ed:00): 45, pid=1818992, name=python3, Ch 0000000c caused by "
    "previous Xid 145"
)
XID_13 = (  # https://github.com/leptonai/gpud/pull/46
    "[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, "
    "Graphics SM Warp Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter"
)


def test_every_xid_of_the_catalogue_is_an_entry() -> None:
    codes = [int(entry.code) for entry in xid.CATALOGUE.entries]
    assert codes == list(range(1, 163))
    assert len(sxid.CATALOGUE.entries) == len({entry.code for entry in sxid.CATALOGUE.entries}) == 398
    assert {entry.layer for entry in sxid.CATALOGUE.entries} == {"fabric"}


def test_the_xids_the_device_plugin_ignores_are_application_faults() -> None:
    by_code = {entry.code: entry for entry in xid.CATALOGUE.entries}
    for code in xid.DEVICE_PLUGIN_IGNORED_XIDS:
        assert by_code[code].layer == "application", code
        assert "device plugin ignores" in by_code[code].cause, code


def test_an_sxid_is_never_read_as_an_xid() -> None:
    found = find_all(SXID_12028)
    assert found[0].signature_id == "sxid.12028"
    assert not [d for d in found if d.signature_id.startswith("xid.")]
    assert "0000:84:00.0" in found[0].cause
    kernel = diagnose(SXID_12028, "kernel", node="gpu-0")
    assert kernel is not None
    assert kernel.signature_id == "sxid.12028"


def test_an_nvlink_xid_comes_before_the_application_xid_it_caused() -> None:
    # Two verbatim lines of two threads put in one log: the NVLink Xid 145 of leptonai/gpud#1174
    # and the Xid 45 that NVIDIA/open-gpu-kernel-modules#1150 logged "caused by previous Xid 145".
    log = f"{XID_45}\n{XID_145}\n"
    # xid.145 twice: read out of the Xid 45 line ("caused by previous Xid 145") and its own line.
    assert [d.signature_id for d in find_all(log)] == ["xid.145", "xid.145", "xid.45"]
    root = diagnose(log, "kernel", node="gpu-0")
    assert root is not None
    assert root.signature_id == "xid.145"
    # In the order a kernel logs them (the cause first), the root's own line names its GPU.
    root = diagnose(f"{XID_145}\n{XID_45}\n", "kernel", node="gpu-0")
    assert root is not None
    assert root.signature_id == "xid.145"
    assert "0018:01:00" in root.hint  # the GPU's PCI address read from the line, in the commands


def test_the_xid_a_line_names_as_its_cause_is_reported_first() -> None:
    # Only the Xid 45 line of NVIDIA/open-gpu-kernel-modules#1150: the NVLink Xid 145 it names
    # ("caused by previous Xid 145") is the cause, even without the Xid 145's own line.
    found = find_all(XID_45)
    assert [d.signature_id for d in found] == ["xid.145", "xid.45"]
    root = diagnose(XID_45, "kernel", node="gpu-0")
    assert root is not None
    assert root.signature_id == "xid.145"


def test_xid_74_comes_before_the_application_xids_of_the_same_log() -> None:
    # Verbatim lines of three sources in one log: the Xid 74 NVIDIA's NVSentinel quotes, then the
    # application Xids 13 (leptonai/gpud#46) and 45 (open-gpu-kernel-modules#1150) after it.
    log = f"{XID_13}\n{XID_74}\n{XID_45}\n"
    # The Xid 45 line names its cause, Xid 145 (NVLink): after the fatal NVLink Xid 74, before the
    # application Xids.
    assert [d.signature_id for d in find_all(log)] == ["xid.74", "xid.145", "xid.13", "xid.45"]
    root = diagnose(log, "kernel", node="gpu-0")
    assert root is not None
    assert root.signature_id == "xid.74"


def test_a_log_of_every_layer_is_reported_in_nvidias_order() -> None:
    # Verbatim lines of six threads in one log, the application's first: the switch, the lost GPU,
    # NVLink, memory, GSP firmware, then the application.
    log = "\n".join((XID_13, XID_119, XID_94, XID_145, XID_79, SXID_12028))
    found = [d.signature_id for d in find_all(log)]
    # Xid 119's line also carries the driver's GSP RPC timeout (the nvrm catalogue): same layer
    assert found == [
        "sxid.12028", "gpu.fallen-off-bus", "xid.145", "xid.94", "xid.119", "nvrm.gsp-rpc-timeout", "xid.13"
    ]  # fmt: skip
    ranks = [
        LAYER_RANK[layer] for layer in ("fabric", "hardware", "nvlink", "memory", "driver", "application")
    ]
    assert ranks == sorted(ranks)
    root = diagnose(log, "kernel", node="gpu-0")
    assert root is not None
    assert root.signature_id == "sxid.12028"


def test_an_xid_without_its_words_is_still_read() -> None:
    found = diagnose("NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>", "kernel", node="n")
    assert found is not None
    assert found.signature_id == "xid.79"
    assert "nvidia-smi" in found.hint
    assert "{node}" not in found.hint


def test_the_device_plugin_and_dra_lines_name_the_xid() -> None:
    # The formats of k8s-device-plugin internal/rm/health.go and k8s-dra-driver-gpu
    # cmd/gpu-kubelet-plugin/device_health.go.
    plugin = "I0312 health.go:159] XidCriticalError: Xid=48 on Device=GPU-0f1e; marking device as unhealthy."
    dra = (
        "I0312 device_health.go:170] Sending unhealthy notification for device GPU-0f1e due to event "
        "type: 8 and event data: 95"
    )
    event = (
        "I0312 device_health.go:160] Processing event {Device:{Handle:0x7f0c2c000b60} EventType:8 "
        "EventData:79 GpuInstanceId:4294967295 ComputeInstanceId:4294967295}"
    )
    for text, code in ((plugin, "48"), (dra, "95"), (event, "79")):
        found = diagnose(text, "plugin-log", node="gpu-0")
        assert found is not None
        assert found.signature_id == f"xid.{code}"
        assert "GPU-0f1e" in found.hint or code == "79"


def test_xid_154_names_the_action_the_gpu_needs() -> None:
    # The line of NVIDIA NVSentinel's syslog parser tests.
    line = (
        "NVRM: Xid (PCI:0008:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 "
        "(GPU Reset Required)"
    )
    found = find_all(line)
    assert [d.signature_id for d in found] == ["xid.154"]
    assert "needs: GPU Reset Required" in found[0].cause
    assert "nvidia-smi -r -i 0008:01:00" in found[0].hint


def test_an_xid_no_catalogue_lists_is_named_unknown_with_its_number() -> None:
    found = find_all("NVRM: Xid (PCI:0000:3b:00): 240, pid=1, name=python3, something new")
    assert [d.signature_id for d in found] == ["xid.unknown"]
    assert "Xid 240" in found[0].cause


def test_reading_a_healthy_log_costs_little() -> None:
    healthy = "\n".join(
        f"[{n}.000000] NVRM: GPU at PCI:0000:{n % 256:02x}:00: GPU-efbdfde9 Board Serial {n}"
        for n in range(200)
    )
    times = []  # the best of 20 reads, so a busy machine does not fail the test
    for _ in range(20):
        start = time.perf_counter()
        assert not xid.CATALOGUE.find(healthy)
        assert not sxid.CATALOGUE.find(healthy)
        times.append(time.perf_counter() - start)
    assert min(times) < 0.001
