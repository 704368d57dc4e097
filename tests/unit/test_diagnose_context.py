"""What the text around a line changes: a container's prompt, a warning before the failure."""

from __future__ import annotations

from pathlib import Path

from gpuctl.diagnose.catalogue import LAYER_RANK
from gpuctl.diagnose.container_context import inside_container
from gpuctl.diagnose.scan import find_all

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
SMI_FAILED = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that "
    "the latest NVIDIA driver is installed and running."
)


def test_on_a_host_the_driver_is_not_loaded() -> None:
    assert [d.signature_id for d in find_all(SMI_FAILED)] == ["smi.driver-not-loaded"]


def test_in_a_container_the_runtime_gave_it_no_gpu() -> None:
    for before in (
        "root@24c96d985c30:/# nvidia-smi",
        "$ docker run -it cuda-image bash",
        "$ kubectl exec pod -- nvidia-smi",
    ):
        found = find_all(f"{before}\n{SMI_FAILED}")
        assert found[0].signature_id == "smi.driver-not-injected", before
        assert "runtimeClassName: nvidia" in found[0].hint
        assert found[0].category == "runtime"


def test_a_host_prompt_is_not_a_container() -> None:
    assert not inside_container("user@gpu-node-01:~$ nvidia-smi")
    assert not inside_container("root@deadbeefcafe01:~# nvidia-smi")  # 14 hex digits: a host name


def test_a_warning_the_run_goes_on_after_never_leads_a_failure() -> None:
    capture = CORPUS / "workloads" / "all-reduce-perf-rtx-5090-2gpus-nccl-debug-info-cuda-failure.txt"
    found = find_all(capture.read_text(encoding="utf-8"))
    ids = [d.signature_id for d in found]
    assert ids[0] == "nccl.cuda-failure"
    assert "nccl.graph-search-fallback" in ids
    assert ids.index("nccl.graph-search-fallback") > ids.index("nccl.unhandled-cuda-error")
    assert "nccl.proxy" not in ids  # "[Proxy Service] Device 0 CPU core 149" is a healthy INFO line
    assert LAYER_RANK["advisory"] > LAYER_RANK["application"]


def test_a_dcgm_start_up_failure_names_the_engine_and_its_code() -> None:
    found = [d.signature_id for d in find_all("CacheManager Init Failed. Error: -17")]
    assert found == ["dcgm.hostengine-start", "dcgm.no-permission"]


def test_a_bridge_interface_explains_the_connect_failure_after_it() -> None:
    text = (
        "node1:12:12 [0] NCCL INFO Bootstrap : Using docker0:172.17.0.1<0>\n"
        "node1:12:30 [0] NCCL WARN Net : Connect to 172.17.0.1<41235> failed : Connection refused"
    )
    assert [d.signature_id for d in find_all(text)] == ["nccl.socket-interface-bridge", "nccl.socket-connect"]
    assert find_all("node1:12:12 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.5<0>") == []


def test_a_dcgm_message_is_found_without_its_final_period() -> None:
    # dcgm_errors.c ends DCGM_ST_NVML_NOT_LOADED's message with a period; dcgm-exporter prints it
    # inside its own sentence, without one.
    line = (
        "Error getting devices count: Cannot perform the requested operation because NVML "
        "doesn't exist on this system"
    )
    assert [d.signature_id for d in find_all(line)] == ["dcgm.nvml-not-loaded"]
