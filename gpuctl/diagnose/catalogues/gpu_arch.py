"""GPU architecture requirements of the CUDA frameworks: the checks vLLM, PyTorch, Triton,
FlashAttention, xformers, bitsandbytes, cuDNN, TensorRT and TensorFlow make of the GPU's compute
capability, with the messages they print when the node's GPU is older (or newer) than the workload
was built for.

None of these is a fault of the node or of the program's code: the workload asks for a GPU
architecture the node does not have (bfloat16 needs Ampere, FP8 needs Ada or Hopper, Triton needs
Volta), or the framework build in the image carries no kernels for the GPU (a PyTorch wheel without
Blackwell's sm_120, a TensorRT release that dropped Pascal). So the fixes are the framework's own
fallback (`--dtype half`, another attention implementation, no torch.compile), a build for the GPU,
or scheduling the pod onto nodes whose GPU has the architecture: GPU Feature Discovery labels every
GPU node with `nvidia.com/gpu.product`, `nvidia.com/gpu.family`, `nvidia.com/gpu.compute.major` and
`nvidia.com/gpu.compute.minor`, which a nodeAffinity can select (`operator: Gt` compares numbers).

CUDA's own errors for a missing architecture are the CUDA catalogue's: 209 (`no kernel image is
available for execution on the device`) and 98 (`invalid device function`).

Sources: each entry cites the file that prints its message.
"""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue, Entry

_GFD = "https://github.com/NVIDIA/k8s-device-plugin/blob/main/docs/gpu-feature-discovery/README.md"
_VLLM = "https://github.com/vllm-project/vllm/blob/main/vllm"
_TORCH = "https://github.com/pytorch/pytorch/blob/main/torch"

_LABELS = (
    "`kubectl get nodes -L nvidia.com/gpu.product -L nvidia.com/gpu.compute.major -L "
    "nvidia.com/gpu.compute.minor` shows each node's GPU and compute capability"
)


def _schedule(major_above: int | None, example: str) -> str:
    """The scheduling half of a fix: a nodeAffinity on GPU Feature Discovery's labels."""
    select = (
        f'a nodeAffinity `key: nvidia.com/gpu.compute.major, operator: Gt, values: ["{major_above}"]` '
        "(or a nodeSelector on `nvidia.com/gpu.product`)"
        if major_above is not None
        else "a nodeSelector or nodeAffinity on `nvidia.com/gpu.product` or `nvidia.com/gpu.family`"
    )
    return f"or run the pod on nodes whose GPU has it ({example}): {_LABELS}; select them with {select}"


ENTRIES = (
    Entry(
        "bf16-unsupported",
        "bfloat16 on a GPU older than Ampere",
        "the workload runs in bfloat16 (vLLM's `--dtype auto` takes it from a model whose config says "
        "bfloat16), which needs a GPU of compute capability 8.0 or newer (Ampere); the node's GPU is "
        "older (V100 is 7.0, T4 and RTX 20xx are 7.5)",
        "run in float16 instead: vLLM `--dtype half` (`LLM(..., dtype='half')`), Transformers "
        "`torch_dtype=torch.float16`; " + _schedule(7, "A100, A10, L4, L40S, H100"),
        "config",
        texts=(
            "Bfloat16 is only supported on GPUs with compute capability of at least 8.0",
            # xformers' reason for its operators.
            "bf16 is only supported on A100+ GPUs",
        ),
        source=f"{_VLLM}/platforms/cuda.py",
    ),
    Entry(
        "quantization-unsupported",
        "quantization method needs a newer GPU",
        "the model's quantization method needs a newer GPU than the node's (vLLM; Transformers for "
        "FP8 checkpoints): vLLM prints the minimum "
        "and the GPU's compute capability as one number (FP8 and ModelOpt need 89 = Ada/Hopper, AWQ "
        "75, GPTQ-Marlin 80; V100 is 70, T4 75, A100 80, A10 86)",
        "serve a checkpoint this GPU supports (the unquantized model in `--dtype half`, or another "
        "quantization, e.g. AWQ/GPTQ instead of FP8 on Ampere); " + _schedule(None, "L4, L40S, H100 for FP8"),
        "config",
        texts=(
            "is not supported for the current GPU. Minimum capability",
            "FP8 quantized models is only supported on GPUs with compute capability",
        ),
        source=f"{_VLLM}/config/vllm.py",
    ),
    Entry(
        "fp8-unsupported",
        "FP8 kernels on a GPU older than Ada",
        "a Triton kernel uses FP8 e4m3 (`fp8e4nv`), which Triton compiles only for compute "
        "capability 8.9 or newer (Ada, Hopper, Blackwell): an FP8 model or vLLM's "
        "`--kv-cache-dtype fp8` on an Ampere or older GPU",
        "drop FP8 on this GPU (vLLM `--kv-cache-dtype auto`, or `fp8_e5m2` on Ampere; a BF16/FP16 or "
        "AWQ/GPTQ checkpoint instead of FP8); " + _schedule(None, "compute capability 8.9+: L4, L40S, H100"),
        "config",
        texts=("not supported in this architecture. The supported fp8 dtypes are",),
        source="https://github.com/triton-lang/triton/blob/main/third_party/nvidia/backend/compiler.py",
    ),
    Entry(
        "flash-attention-unsupported",
        "FlashAttention needs a newer GPU",
        "FlashAttention's kernels need compute capability 8.0 or newer (Ampere; FlashAttention 3 needs "
        "Hopper 9.0) and the node's GPU is older (V100, T4, RTX 20xx), or the model was loaded with "
        "`attn_implementation='flash_attention_2'` on it",
        "use an attention implementation this GPU runs: Transformers `attn_implementation='sdpa'` (or "
        "'eager'), vLLM's default backend for the GPU (older vLLM: `VLLM_ATTENTION_BACKEND=XFORMERS`); "
        + _schedule(7, "A100, L40S, H100"),
        "config",
        texts=(
            "FlashAttention only supports Ampere GPUs or newer",
            "FA3 is only supported on devices with compute capability",
        ),
        source="https://github.com/Dao-AILab/flash-attention/blob/main/csrc/flash_attn/flash_api.cpp",
    ),
    Entry(
        "xformers-unsupported",
        "xformers has no attention kernel for this GPU",
        "xformers found no memory-efficient attention kernel it can run: each operator lists why, "
        "mostly the compute capability it requires against the GPU's ('too old': Volta or Turing for "
        "the FlashAttention kernels; 'too new': Blackwell 12.0 with an xformers build that predates "
        "it), or 'operator wasn't built' / 'xFormers wasn't build with CUDA support' for an xformers "
        "wheel that does not match the installed PyTorch",
        "disable or uninstall xformers and use PyTorch's scaled_dot_product_attention (ComfyUI "
        "`--disable-xformers`, diffusers without `enable_xformers_memory_efficient_attention()`), or "
        "install the xformers build made for the installed PyTorch and CUDA (`python -m xformers.info` "
        "lists what it was built for); " + _schedule(7, "A100, L40S, H100"),
        "config",
        texts=(
            "No operator found for `memory_efficient_attention",
            "but your GPU has capability",
        ),
        source="https://github.com/facebookresearch/xformers/blob/main/xformers/ops/fmha/common.py",
    ),
    Entry(
        "bitsandbytes-slow-int8",
        "bitsandbytes int8 matmul without int8 tensor cores",
        "bitsandbytes found a GPU below compute capability 7.5, which has no int8 tensor cores "
        "(cuBLASLt int8), so its 8-bit matmul (LLM.int8, `load_in_8bit`) runs a slow fallback that "
        "some versions fail on; a warning, so an error printed with it names the failure",
        "load the model in 4-bit (`load_in_4bit`, as the warning suggests) or float16 on this GPU; "
        + _schedule(None, "compute capability 7.5+: T4, A10, L4, A100"),
        "advisory",
        texts=("Only slow 8-bit matmul is supported for your GPU",),
        source="https://github.com/bitsandbytes-foundation/bitsandbytes/blob/main/bitsandbytes/diagnostics/cuda.py",
    ),
    Entry(
        "cudnn-arch-mismatch",
        "cuDNN function needs a newer GPU",
        "a cuDNN call needs a feature the GPU does not have (CUDNN_STATUS_ARCH_MISMATCH): the "
        "operation or the cuDNN release requires a newer compute capability than the node's GPU",
        "use a cuDNN (framework build) that still supports the GPU, or an operation the GPU supports; "
        + _schedule(None, "a newer GPU"),
        "config",
        texts=("CUDNN_STATUS_ARCH_MISMATCH",),
        source="https://docs.nvidia.com/deeplearning/cudnn/latest/api/cudnn-graph-library.html",
    ),
    Entry(
        "pytorch-arch-missing",
        "PyTorch build without this GPU's architecture",
        "the PyTorch build in the image carries no kernels for this GPU's architecture (its sm_XX is not "
        "in the list the warning prints): a GPU newer than the wheel (Blackwell's sm_100/sm_120 need a "
        "CUDA 12.8+ build) or one the wheel dropped; CUDA calls then fail with 'no kernel image is "
        "available for execution on the device'",
        "install a PyTorch built for the GPU (Blackwell: `pip install torch --index-url "
        "https://download.pytorch.org/whl/cu128`; `python -c 'import torch; "
        "print(torch.cuda.get_arch_list())'` lists a build's architectures) or use an image that has "
        "one; " + _schedule(None, "one of the architectures the build lists"),
        "config",
        texts=(
            "is not compatible with the current PyTorch installation",
            "The current PyTorch install supports CUDA capabilities",
            # Before PyTorch 1.8: `Found GPU0 ... which requires CUDA_VERSION >= 11000 to work properly`.
            "which requires CUDA_VERSION >=",
        ),
        source=f"{_TORCH}/cuda/__init__.py",
    ),
    Entry(
        "pytorch-gpu-too-old",
        "PyTorch dropped this GPU",
        "the PyTorch build in the image no longer supports the GPU's architecture: it is older than the "
        "minimum compute capability the warning prints (Kepler and Maxwell in current wheels, Pascal "
        "and Volta in CUDA 12.8+ wheels)",
        "install an older PyTorch or a build for an older CUDA that still includes the GPU (or build "
        "it with `TORCH_CUDA_ARCH_LIST` naming it); " + _schedule(None, "a newer GPU"),
        "config",
        texts=(
            "PyTorch no longer supports this GPU because it is too old",
            "The minimum cuda capability supported by this library is",
        ),
        source=f"{_TORCH}/cuda/__init__.py",
    ),
    Entry(
        "triton-gpu-too-old",
        "torch.compile (Triton) needs Volta or newer",
        "torch.compile's Inductor backend generates Triton kernels, and Triton supports only compute "
        "capability 7.0 or newer: the node's GPU (Pascal P100/P4/GTX 10xx, Maxwell) is older",
        "run without torch.compile on this GPU (drop the `torch.compile` call or the framework's "
        "compile option, or set `TORCH_COMPILE_DISABLE=1`); " + _schedule(6, "V100, T4 or newer"),
        "config",
        texts=(
            "which is too old to be supported by the triton GPU compiler",
            "Triton only supports devices of CUDA Capability >= 7.0",
        ),
        source=f"{_TORCH}/_inductor/exc.py",
    ),
    Entry(
        "tensorrt-unsupported-sm",
        "TensorRT release without this GPU's SM",
        "the TensorRT release in the image has no kernels for the GPU's SM: a GPU newer than the "
        "release (`Unsupported SM: 0x809` is Ada 8.9, `0xc00` Blackwell 12.0) or one the release "
        "dropped (TensorRT 10 no longer builds for Pascal SM 61 or Volta SM 70); TensorRT engines are "
        "also built for one GPU architecture and must be rebuilt on another",
        "use a TensorRT release (an NGC TensorRT/Triton container) whose support matrix lists the GPU, "
        "and build the engine on that GPU; " + _schedule(None, "the architectures the release supports"),
        "config",
        texts=(
            "Internal Error (Unsupported SM",
            "is not supported by this TensorRT release",
        ),
        source="https://docs.nvidia.com/deeplearning/tensorrt/latest/getting-started/support-matrix.html",
    ),
    Entry(
        "tensorflow-gpu-ignored",
        "TensorFlow ignores a GPU below its minimum",
        "TensorFlow ignores the GPU (and runs on the CPU): its compute capability is below the minimum "
        "the TensorFlow build was compiled for",
        "use a TensorFlow build compiled for the GPU's compute capability (an older release, or one "
        "built from source with it in `TF_CUDA_COMPUTE_CAPABILITIES`); " + _schedule(None, "a newer GPU"),
        "config",
        texts=("The minimum required Cuda capability is",),
        source="https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/common_runtime/gpu/gpu_device.cc",
    ),
    Entry(
        "tensorflow-ptx-jit",
        "TensorFlow JIT-compiles its kernels for this GPU",
        "the TensorFlow build carries no kernel binaries for this GPU's compute capability (a GPU newer "
        "than the build, e.g. Hopper 9.0 or Blackwell 12.0 with a pip wheel), so CUDA JIT-compiles "
        "them from PTX at start: the first run takes up to 30 minutes or more, and on a GPU the PTX "
        "cannot target it fails (CUDA_ERROR_INVALID_PTX)",
        "use a TensorFlow build for the GPU (the NGC TensorFlow container, or a newer release), or keep "
        "the JIT cache between runs (a volume at ~/.nv/ComputeCache, `CUDA_CACHE_MAXSIZE`); "
        + _schedule(None, "the architectures the build has"),
        "application",
        texts=("TensorFlow was not built with CUDA kernel binaries compatible with compute capability",),
        source="https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/common_runtime/gpu/gpu_device.cc",
    ),
)

# The CUDA compilers' own refusals of an architecture (ptxas, nvcc, NVRTC): the toolchain in use
# (often the ptxas Triton ships in its wheel) does not know the GPU's architecture, or no longer
# does. Read by the catalogue's readers, the architecture into {arch}.
_NVCC = "https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html"
_TOOLCHAIN_FIX = (
    "use a toolchain that knows the architecture: for Triton (PyTorch's torch.compile, vLLM) point it "
    "at the ptxas of a CUDA toolkit new enough for the GPU (`export TRITON_PTXAS_PATH=/usr/local/cuda/"
    "bin/ptxas`; `ptxas --list-gpu-arch` lists what one knows: sm_120 needs CUDA 12.8, sm_121 12.9, "
    "sm_110 13.0) or install a Triton/PyTorch release built for it; for nvcc builds install that "
    "CUDA toolkit (or an NGC/CUDA image of it), or take the architecture out of TORCH_CUDA_ARCH_LIST, "
    "CMAKE_CUDA_ARCHITECTURES or `-gencode` where the toolkit dropped it (CUDA 11 dropped sm_30, 12 "
    "sm_35/37, 13 sm_50 to sm_72)"
)
TOOLCHAIN = (
    Entry(
        "toolchain-unknown-arch",
        "CUDA compiler does not know the GPU architecture",
        "the CUDA compiler the program builds or JIT-compiles its kernels with (ptxas, nvcc or NVRTC; "
        "Triton and TensorFlow run the ptxas bundled with them or found on PATH) does not know "
        "architecture {arch}: it is older than the GPU (a Blackwell sm_120/sm_121 GPU with a CUDA "
        "12.6/12.8 ptxas) or newer than the architecture, which it dropped; nothing is wrong with the "
        "node or the driver",
        _TOOLCHAIN_FIX,
        "toolkit",
        aliases=("gpu-name", "gpu-architecture", "Unsupported gpu architecture"),
        texts=("invalid value for --gpu-architecture",),
        source=_NVCC,
    ),
    Entry(
        "ptx-version-unsupported",
        "ptxas older than the PTX it is given",
        "ptxas refused the PTX because its ISA version ({version}) is newer than the ptxas knows: the "
        "PTX was generated by a newer compiler (Triton's LLVM, JAX/XLA, Numba, a newer nvcc) than the "
        "ptxas that assembles it (an older CUDA toolkit on PATH or in TRITON_PTXAS_PATH)",
        "assemble with a ptxas at least as new as the PTX (PTX ISA 8.4 needs CUDA 12.4, 8.5 12.5, 8.7 "
        "12.8, 8.8 12.9, 9.0 13.0): put that toolkit's bin first on PATH (one /usr/local/cuda-X/bin), "
        "unset TRITON_PTXAS_PATH for Triton's bundled ptxas or point it at the newer one, or install "
        "the framework's CUDA wheels of a matching release (e.g. `jax[cuda12]`'s nvidia-cuda-nvcc)",
        "toolkit",
        aliases=("Unsupported .version",),
        source="https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#release-notes",
    ),
)

CATALOGUE = Catalogue(
    id="gpu-arch",
    title="GPU architecture (compute capability) requirements of CUDA frameworks",
    source=_GFD,
    version="messages of vLLM, PyTorch (CUDA, Inductor), Triton, FlashAttention 2/3, xformers, "
    "cuDNN, TensorRT 8-10, TensorFlow 1-2; GPU Feature Discovery labels",
    entries=(*ENTRIES, *TOOLCHAIN),
    applies_to=("cuda-workload", "nccl-workload"),
    readers=(
        # `ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'`, nvcc's `... for
        # option 'gpu-architecture'`.
        r"fatal\s*: Value '(?P<arch>(?:sm|compute|lto)_\w+)' is not defined for option "
        r"'(?P<code>gpu-name|gpu-architecture)'",
        # `nvcc fatal   : Unsupported gpu architecture 'compute_89'`.
        r"(?P<code>Unsupported gpu architecture) '(?P<arch>(?:sm|compute|lto)_\w+)'",
        # `ptxas application ptx input, line 5; fatal   : Unsupported .version 8.7; current version is '8.4'`.
        r"fatal\s*: (?P<code>Unsupported \.version) (?P<version>\d+\.\d+)",
    ),
)
