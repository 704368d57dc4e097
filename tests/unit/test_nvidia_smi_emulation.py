"""The sim's nvidia-smi says it the real way: its output has the shape of real captures.

The emulated default table and `-L` are read with the parsers built from real output
(gpuctl.nvidia_smi_parse) and compared line by line with a capture of the same driver family:
the same rules, the same column layout, the same header and MIG row. Where a real machine ran
the same commands (an H200, driver 580.159.04: -L, the queries, `-f FILE`, a GPU it does not
have, a field it does not know), the emulation prints the same bytes with the same exit code.
The injected failures' device plugin log lines and runtime messages are recognised by the
diagnosis table.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gpuctl import nvidia_smi
from gpuctl.core.verify.pod_manifest import POD_VERIFY_ARGS, TERMINATION_LOG
from gpuctl.diagnose.scan import find_all
from gpuctl.nvidia_smi_parse import parse_listing, parse_table
from gpuctl.sim.runtime import containers, sandbox, termination
from gpuctl.sim.scenario import NodeSpec

CAPTURES = Path(__file__).parents[1] / "corpus" / "nvidia-smi"

# capture (Linux, one GPU) → (the GPU's full name as -L prints it, its memory in MiB)
TABLES = {
    "linux-nvidia-h100-80gb-hbm3-590.48.01": ("NVIDIA H100 80GB HBM3", 81559),
    "linux-nvidia-h100-80gb-hbm3-580.159.04": ("NVIDIA H100 80GB HBM3", 81559),
    "linux-nvidia-h200-590.48.01": ("NVIDIA H200", 143771),
    "linux-nvidia-h200-580.159.04": ("NVIDIA H200", 143771),
    "linux-nvidia-l40s-595.80": ("NVIDIA L40S", 46068),
    "linux-nvidia-geforce-rtx-2080-super-595.71.05": ("NVIDIA GeForce RTX 2080 SUPER", 8192),
    "linux-nvidia-geforce-rtx-4080-super-595.71.05": ("NVIDIA GeForce RTX 4080 SUPER", 16376),
    "linux-nvidia-geforce-rtx-2080-super-610.57.04": ("NVIDIA GeForce RTX 2080 SUPER", 8192),
}


def _driver(capture: str) -> str:
    return capture.rsplit("-", 1)[1]


def _emulated_table(capture: str, count: int = 1) -> str:
    name, memory = TABLES[capture]
    gpus = nvidia_smi.fake_gpus("node", count, name.replace(" ", "-"), memory, _driver(capture))
    text, code = nvidia_smi.run_nvidia_smi([], gpus)
    assert code == 0
    return text


def _layout(line: str) -> list[int]:
    """Where a line's column separators stand."""
    return [column for column, char in enumerate(line) if char in "|+"]


def _gpu_section(text: str) -> list[str]:
    """From the time stamp to the end of the GPU table (the processes differ between machines)."""
    return text.split("\n\n", 1)[0].splitlines()


@pytest.mark.parametrize("capture", sorted(TABLES))
def test_default_table_has_the_real_layout_line_by_line(capture: str) -> None:
    real = _gpu_section((CAPTURES / f"{capture}.table.txt").read_text())
    emulated = _gpu_section(_emulated_table(capture))
    assert len(emulated) == len(real)
    for number, (ours, theirs) in enumerate(zip(emulated, real, strict=True)):
        assert len(ours) == len(theirs), (number, ours, theirs)
        assert _layout(ours) == _layout(theirs), (number, ours, theirs)
        if theirs.startswith(("+", "|=")) or number in (2, 4, 5, 6):  # rules, banner, header rows
            assert ours == theirs, number
    assert emulated[0][:3] in {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}  # ctime, like nvidia-smi


@pytest.mark.parametrize("capture", sorted(TABLES))
def test_emulated_table_parses_like_the_real_one(capture: str) -> None:
    real = parse_table((CAPTURES / f"{capture}.table.txt").read_text())
    emulated = parse_table(_emulated_table(capture))
    assert (emulated.driver_version, emulated.cuda_version) == (real.driver_version, real.cuda_version)
    assert [gpu.name for gpu in emulated.gpus] == [gpu.name for gpu in real.gpus]  # cut the same way
    assert [gpu.memory_total_mib for gpu in emulated.gpus] == [gpu.memory_total_mib for gpu in real.gpus]
    assert emulated.gpus[0].mig_mode in ("Disabled", "Enabled", "N/A")
    assert emulated.mig_devices == 0


def test_processes_section_matches_a_capture_without_processes() -> None:
    capture = "linux-nvidia-h100-80gb-hbm3-590.48.01"
    real = (CAPTURES / f"{capture}.table.txt").read_text().split("\n\n", 1)[1]
    assert _emulated_table(capture).split("\n\n", 1)[1] == real


def test_eight_gpus_have_three_rows_each_and_full_names() -> None:
    text = _emulated_table("linux-nvidia-h100-80gb-hbm3-590.48.01", count=8)
    report = parse_table(text)
    assert [gpu.index for gpu in report.gpus] == list(range(8))
    assert {gpu.name for gpu in report.gpus} == {"NVIDIA H100 80GB HBM3"}
    assert {gpu.mig_mode for gpu in report.gpus} == {"Disabled"}
    assert len({gpu.pci_bus_id for gpu in report.gpus}) == 8
    rule = "+-----------------------------------------+------------------------+----------------------+"
    assert _gpu_section(text).count(rule) == 1 + 8  # under the banner, then after each GPU's rows


@pytest.mark.parametrize(
    "capture",
    [
        "linux-nvidia-h100-80gb-hbm3-590.48.01",
        "linux-nvidia-geforce-rtx-2080-super-610.57.04",
        "linux-nvidia-h200-580.159.04",
        "linux-nvidia-h100-80gb-hbm3-580.159.04",
    ],
)
def test_list_output_has_the_real_shape(capture: str) -> None:
    name, memory = TABLES[capture]
    real_text = (CAPTURES / f"{capture}.list.txt").read_text()
    gpus = nvidia_smi.fake_gpus("node", 1, name.replace(" ", "-"), memory, _driver(capture))
    text, code = nvidia_smi.run_nvidia_smi(["-L"], gpus)
    assert code == 0
    assert [gpu.name for gpu in parse_listing(text).gpus] == [
        gpu.name for gpu in parse_listing(real_text).gpus
    ]
    real_line, line = real_text.splitlines()[0], text.splitlines()[0]
    assert line.split("(UUID: GPU-")[0] == real_line.split("(UUID: GPU-")[0]
    assert len(line) == len(real_line)  # a GPU- UUID of the same length


@pytest.mark.parametrize(
    ("driver", "cuda"), [("550.90.07", "12.4"), ("580.65.06", "13.0"), ("590.48.01", "13.1"),
                         ("591.86", "13.1"), ("595.80", "13.2"), ("610.57.04", "13.3")],
)  # fmt: skip
def test_cuda_version_per_driver_branch(driver: str, cuda: str) -> None:
    assert nvidia_smi.cuda_version_for(driver) == cuda
    gpus = nvidia_smi.fake_gpus("node", 1, "NVIDIA-H100-80GB-HBM3", 81559, driver)
    assert parse_table(nvidia_smi.run_nvidia_smi([], gpus)[0]).cuda_version == cuda


# The same commands as on a real H200 (driver 580.159.04, one GPU, MIG off), run by the emulation
# on a GPU given that machine's identity: the output must be the capture's, byte for byte.
H200 = "linux-nvidia-h200-580.159.04"
H200_UUID = "GPU-1b11370e-064c-64d9-859e-5b243ba48c00"
VERIFY = list(nvidia_smi.VERIFY_ARGS[1:])
REAL_RUNS = {  # capture → (nvidia-smi's arguments, its exit code there)
    "list.txt": (["-L"], 0),
    "query-verify.txt": (VERIFY, 0),
    "query-header.txt": (["--query-gpu=" + ",".join(nvidia_smi.VERIFY_QUERY_FIELDS), "--format=csv"], 0),
    "query-host.txt": (["--query-gpu=name,memory.total,driver_version", "--format=csv,noheader,nounits"], 0),
    "query-driver.txt": (["--query-gpu=driver_version", "--format=csv,noheader"], 0),
    "query-mig-mode.txt": (["--query-gpu=mig.mode.current,mig.mode.pending", "--format=csv,noheader"], 0),
    "no-devices.txt": (["-i", "7", *VERIFY], 6),  # GPU 7 of a one-GPU host
    "invalid-field.txt": (["--query-gpu=no.such.field", "--format=csv,noheader"], 2),
}


def _real_h200(capture: str) -> str:
    return (CAPTURES / f"{H200}.{capture}").read_text(encoding="utf-8")


def _h200_gpus() -> list[nvidia_smi.Gpu]:
    (gpu,) = nvidia_smi.fake_gpus("h200", 1, "NVIDIA-H200", 143771, "580.159.04")
    return [replace(gpu, uuid=H200_UUID, pci_bus_id="00000000:00:06.0")]


@pytest.mark.parametrize("capture", sorted(REAL_RUNS))
def test_the_emulation_prints_what_the_real_h200_printed(capture: str) -> None:
    args, code = REAL_RUNS[capture]
    assert nvidia_smi.run_nvidia_smi(args, _h200_gpus()) == (_real_h200(capture), code)


@pytest.mark.parametrize("capture", ["list.txt", "query-verify.txt", "query-host.txt"])
def test_the_emulation_prints_what_the_real_h100_printed(capture: str) -> None:
    """The same machine type with an H100 80GB HBM3 in it (driver 580.159.04)."""
    (gpu,) = nvidia_smi.fake_gpus("h100", 1, "NVIDIA-H100-80GB-HBM3", 81559, "580.159.04")
    gpu = replace(gpu, uuid="GPU-e753301f-2534-a622-087a-08511ef7046d", pci_bus_id="00000000:00:06.0")
    args, code = REAL_RUNS[capture]
    real = (CAPTURES / f"linux-nvidia-h100-80gb-hbm3-580.159.04.{capture}").read_text(encoding="utf-8")
    assert nvidia_smi.run_nvidia_smi(args, [gpu]) == (real, code)


def test_an_output_file_gets_the_answer_and_stdout_stays_empty() -> None:
    """`-f FILE`, as the verification pod runs it: nothing on stdout, the CSV in the file."""
    args = [*VERIFY, "-f", TERMINATION_LOG]
    assert nvidia_smi.run_nvidia_smi(args, _h200_gpus()) == ("", 0)
    assert nvidia_smi.run_with_file(args, _h200_gpus()) == nvidia_smi.SmiRun(
        "", 0, TERMINATION_LOG, _real_h200("query-verify-f.txt")
    )
    assert nvidia_smi.run_with_file([*VERIFY, f"--filename={TERMINATION_LOG}"], _h200_gpus()).stdout == ""
    # An error is no query output: it stays on stdout and no file is written.
    failed = nvidia_smi.run_with_file(["-i", "7", *args], _h200_gpus())
    assert failed == nvidia_smi.SmiRun(_real_h200("no-devices.txt"), 6)
    # `-f` without its file is a usage error, as any other option without its value.
    assert nvidia_smi.run_nvidia_smi([*VERIFY, "-f"], _h200_gpus())[1] == 2


def test_the_sim_pods_termination_message_has_the_real_shape() -> None:
    """The sim kubelet runs the verification pod's command on a node like that H200: its log is
    empty and its termination message is the real file, but for the simulated GPU's identity."""
    spec = NodeSpec(
        "h200", gpus=1, gpu_product="NVIDIA-H200", gpu_memory_mib=143771, driver_version="580.159.04"
    )
    outcome = termination.run_redirected(
        lambda argv: containers.run_argv(argv, spec, [0], 0.0), list(POD_VERIFY_ARGS)
    )
    assert (outcome.log, outcome.exit_code, outcome.file_path) == ("", 0, TERMINATION_LOG)
    container = {"name": "nvidia-smi", "terminationMessagePath": TERMINATION_LOG}
    message = termination.message(container, outcome, outcome.log)
    (gpu,) = containers.visible_gpus(spec, [0])
    real = (
        _real_h200("query-verify-f.txt")
        .replace(H200_UUID, gpu.uuid)
        .replace("00000000:00:06.0", gpu.pci_bus_id)
    )
    assert message == real


def _smi(spec: NodeSpec) -> str:
    outcome = containers.run_argv(["nvidia-smi"], spec, [0], 0.0)
    return outcome.start_error or outcome.log


INJECTED = {
    "toolkit missing: plugin log": (
        containers.device_plugin_log(NodeSpec("n", gpus=8, toolkit="missing")),
        {"plugin.nvml-library-missing", "plugin.incompatible-strategy", "plugin.no-devices"},
    ),
    "driver missing: plugin log": (
        containers.device_plugin_log(NodeSpec("n", gpus=8, driver="missing")),
        {"plugin.nvml-library-missing", "plugin.incompatible-strategy", "plugin.no-devices"},
    ),
    "unhealthy GPUs: plugin log": (
        containers.device_plugin_log(NodeSpec("n", gpus=8, unhealthy_gpus=2)),
        {"xid.79", "plugin.xid"},
    ),
    "driver mismatch: start hook": (
        _smi(NodeSpec("n", gpus=8, driver="mismatch")),
        {"runtime.driver-mismatch"},
    ),
    "driver missing: start hook": (
        _smi(NodeSpec("n", gpus=8, driver="missing")),
        {"runtime.driver-not-loaded"},
    ),
    "toolkit unconfigured: start error": (
        _smi(NodeSpec("n", gpus=8, toolkit="unconfigured")),
        {"smi.not-found"},
    ),
    "no nvidia runtime: sandbox event": (
        sandbox.NO_RUNTIME.format(handler="nvidia"),
        {"runtime.no-nvidia-runtime"},
    ),
}


@pytest.mark.parametrize("failure", sorted(INJECTED))
def test_each_injected_failure_is_recognised_by_the_diagnosis_table(failure: str) -> None:
    text, expected = INJECTED[failure]
    assert {diagnosis.signature_id for diagnosis in find_all(text)} == expected


def test_a_healthy_plugin_log_has_no_diagnosis() -> None:
    assert find_all(containers.device_plugin_log(NodeSpec("n", gpus=8))) == []
