"""The CUDA math libraries' status codes as frameworks print them: cuBLAS's `cublasStatus_t`
(`CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling cublasCreate(handle)` in PyTorch) and
cuDNN's `cudnnStatus_t` (`cuDNN error: CUDNN_STATUS_INTERNAL_ERROR`).

A library status names the library call that failed, not why: NVIDIA's tables say what each means,
and on a cluster most have one of a few causes behind them. Creating a handle allocates device
memory, so NOT_INITIALIZED and ALLOC_FAILED at start-up are the GPU's memory taken (by other
processes, or a slice too small: a MIG instance, a vGPU or HAMi limit); EXECUTION_FAILED is a kernel
that could not run (no kernels for this GPU's architecture in the build, or a GPU fault: look for an
Xid); a missing runtime prerequisite is a driver library the container was not given.
"""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue, Entry

_CUBLAS = "https://docs.nvidia.com/cuda/cublas/index.html#cublasstatus-t"
_CUDNN = (
    "https://docs.nvidia.com/deeplearning/cudnn/backend/latest/api/cudnn-graph-library.html#cudnnstatus-t"
)

_MEMORY = (
    "`nvidia-smi` in the pod and on {node} shows who holds the GPU's memory: stop other processes "
    "on it (a pod without its own GPU, a leftover process), give the pod a whole GPU or a larger "
    "MIG profile / vGPU slice (HAMi: `nvidia.com/gpumem`), or make the program use less (smaller "
    "batch or model, PyTorch's PYTORCH_CUDA_ALLOC_CONF, TensorFlow's allow_growth)"
)
_ARCH = (
    "use a build of the framework (PyTorch wheel, container image) compiled for this GPU's compute "
    "capability (`nvidia-smi --query-gpu=compute_cap --format=csv`; Blackwell needs CUDA 12.8 "
    "builds, Hopper 11.8 or newer), or run the pod on GPUs the build supports"
)
_FAULT = (
    "look for an Xid on {node} at that time (`sudo dmesg -T | grep -i xid`) and follow its action; "
    "without one, rerun with CUDA_LAUNCH_BLOCKING=1 to find the failing kernel"
)
_INJECT = (
    "run the pod with the NVIDIA runtime and a GPU request so the driver's libraries are mounted "
    "(`runtimeClassName: nvidia` where it is not the default), and keep libcuda out of the image"
)


_Row = tuple[str, tuple[str, ...], str, str, str, str, str]


# What frameworks print in their own words for a status (XLA, used by JAX and TensorFlow, reports a
# failed cudnnCreate as `DNN library initialization failed`).
_TEXTS = {"cudnn-not-initialized": ("DNN library initialization failed",)}


def _entry(row: _Row) -> Entry:
    code, aliases, name, cause, fix, layer, source = row
    return Entry(
        code=code,
        name=name,
        cause=cause,
        fix=fix,
        layer=layer,
        aliases=aliases,
        texts=_TEXTS.get(code, ()),
        source=source,
    )


_CUBLAS_ENTRIES = (
    _entry(
        (
            "cublas-not-initialized",
            ("CUBLAS_STATUS_NOT_INITIALIZED",),
            "cuBLAS handle not created",
            "cuBLAS could not be initialised (creating its handle failed): on a cluster almost always "
            "because the GPU has no memory left for it (other processes, or the pod's MIG, vGPU or "
            "HAMi slice too small), less often a CUDA error under it (driver, GPU lost)",
            _MEMORY,
            "application",
            _CUBLAS,
        )
    ),
    _entry(
        (
            "cublas-alloc-failed",
            ("CUBLAS_STATUS_ALLOC_FAILED",),
            "cuBLAS could not allocate memory",
            "a memory allocation inside cuBLAS failed (cudaMalloc): the GPU's memory is exhausted",
            _MEMORY,
            "application",
            _CUBLAS,
        )
    ),
    _entry(
        (
            "cublas-arch-mismatch",
            ("CUBLAS_STATUS_ARCH_MISMATCH",),
            "cuBLAS feature missing on this GPU",
            "the cuBLAS routine needs a feature this GPU's architecture lacks (e.g. a data type or "
            "tensor-core path of a newer GPU)",
            _ARCH,
            "application",
            _CUBLAS,
        )
    ),
    _entry(
        (
            "cublas-execution-failed",
            ("CUBLAS_STATUS_EXECUTION_FAILED",),
            "cuBLAS kernel failed to run",
            "a cuBLAS kernel failed to launch or run on the GPU: the build has no kernels for this GPU's "
            "architecture (a framework built for older GPUs), or an earlier asynchronous error or a GPU "
            "fault (Xid) broke the context",
            _ARCH + "; " + _FAULT,
            "application",
            _CUBLAS,
        )
    ),
    _entry(
        (
            "cublas-internal-error",
            ("CUBLAS_STATUS_INTERNAL_ERROR",),
            "cuBLAS internal operation failed",
            "an operation inside cuBLAS failed (usually a cudaMemcpyAsync): memory ran out, or the GPU "
            "context is broken by an earlier error or a GPU fault",
            _MEMORY + "; " + _FAULT,
            "application",
            _CUBLAS,
        )
    ),
    _entry(
        (
            "cublas-invalid-value",
            ("CUBLAS_STATUS_INVALID_VALUE", "CUBLAS_STATUS_NOT_SUPPORTED"),
            "cuBLAS call with unsupported arguments",
            "the program called cuBLAS with values or a combination it does not support (the program's "
            "or the framework's own fault, or a framework built for another cuBLAS)",
            "a program or framework fault: use matching framework and CUDA library versions (the "
            "framework's wheel brings its own cuBLAS; do not mix it with the image's), and report it to "
            "the framework",
            "application",
            _CUBLAS,
        )
    ),
)

_CUDNN_ENTRIES = (
    _entry((
        "cudnn-not-initialized", ("CUDNN_STATUS_NOT_INITIALIZED",),
        "cuDNN handle not created",
        "cuDNN could not be initialised (cudnnCreate failed): the GPU has no memory left for its "
        "handle, or the cuDNN library does not work with this driver or CUDA (a cuDNN built for a "
        "newer CUDA than the driver supports)",
        _MEMORY + "; check the framework's CUDA against the driver's (`nvidia-smi` header)",
        "application", _CUDNN,
    )),
    _entry((
        "cudnn-alloc-failed", ("CUDNN_STATUS_ALLOC_FAILED",),
        "cuDNN could not allocate memory",
        "a memory allocation inside cuDNN failed: the GPU's memory is exhausted",
        _MEMORY, "application", _CUDNN,
    )),
    _entry((
        "cudnn-arch-mismatch", ("CUDNN_STATUS_ARCH_MISMATCH",),
        "cuDNN does not support this GPU",
        "this cuDNN release does not support the GPU's compute capability (too old a GPU for it, or "
        "a cuDNN older than the GPU)",
        _ARCH, "application", _CUDNN,
    )),
    _entry((
        "cudnn-execution-failed", ("CUDNN_STATUS_EXECUTION_FAILED",),
        "cuDNN kernel failed to run",
        "a cuDNN kernel failed on the GPU: no kernels for this architecture in the build, or an "
        "earlier error or a GPU fault (Xid) broke the context",
        _ARCH + "; " + _FAULT, "application", _CUDNN,
    )),
    _entry((
        "cudnn-internal-error", ("CUDNN_STATUS_INTERNAL_ERROR",),
        "cuDNN internal error",
        "an operation inside cuDNN failed: most often the GPU's memory ran out during the call "
        "(workspace allocation), otherwise a broken context after an earlier error",
        _MEMORY + "; " + _FAULT, "application", _CUDNN,
    )),
    _entry((
        "cudnn-prerequisite-missing", ("CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING",),
        "library cuDNN needs is missing",
        "cuDNN could not find a runtime library it needs (libcuda from the driver, or cuBLAS): the "
        "container was not given the driver's libraries, or the image lacks the CUDA libraries cuDNN "
        "was built against",
        _INJECT + "; install the CUDA libraries of cuDNN's CUDA version in the image",
        "runtime", _CUDNN,
    )),
    _entry((
        "cudnn-version-mismatch", (
            "CUDNN_STATUS_VERSION_MISMATCH", "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH",
        ),
        "cuDNN libraries of different versions",
        "the cuDNN libraries loaded are of different versions (the framework's own cuDNN and one "
        "from the image or LD_LIBRARY_PATH mixed)",
        "keep one cuDNN in the image: remove the other from LD_LIBRARY_PATH or the image, or use the "
        "framework's wheel with its bundled cuDNN only", "application", _CUDNN,
    )),
)  # fmt: skip

# A CUDA library a framework loads at run time (dlopen) that the image does not have: TensorFlow's
# dso_loader (`Could not load dynamic library 'libcudart.so.11.0'; dlerror: ...`) and cuDNN 8's
# sub-library loader (`Could not load library libcudnn_cnn_infer.so.8. Error: libcuda.so: ...`).
_LOADER_ENTRIES = (
    Entry(
        code="cuda-library-not-found",
        name="CUDA library the framework needs is missing",
        cause="the framework could not load a CUDA library at run time ({library}): the image has "
        "no CUDA libraries of the version the framework was built for (a pip TensorFlow or JAX "
        "without its CUDA extras, a CPU base image, another CUDA major version), so it runs on the "
        "CPU or stops; the driver's own libraries come from the node, the CUDA toolkit's from the "
        "image",
        fix="install the CUDA libraries the framework was built with into the image "
        "(`pip install tensorflow[and-cuda]`, `jax[cuda12]`, or an nvidia/cuda *-cudnn-runtime base "
        "image of that CUDA version); `ldconfig -p | grep libcudart` in the container shows what it "
        "has",
        layer="runtime",
        aliases=("Could not load dynamic library", "Could not load library"),
        source="https://www.tensorflow.org/install/pip",
    ),
    Entry(
        code="libcuda-unversioned-missing",
        name="cuDNN cannot load libcuda.so",
        cause="cuDNN 8 loads the driver's library by its unversioned name (libcuda.so) and the "
        "container has only libcuda.so.1: the runtime that injected the driver did not create the "
        "libcuda.so link (older NVIDIA Container Toolkit releases, WSL2, a driver mounted by hand)",
        fix="upgrade the NVIDIA Container Toolkit on {node} (its CDI spec and hooks create the "
        "libcuda.so link), or create it in the image's entrypoint (`ln -s libcuda.so.1 "
        "$(dirname $(ldconfig -p | awk '/libcuda.so.1/{{print $NF; exit}}'))/libcuda.so`), or use "
        "cuDNN 9, which loads libcuda.so.1",
        layer="runtime",
        aliases=("libcuda.so:",),
        source="https://docs.nvidia.com/deeplearning/cudnn/backend/latest/api/cudnn-graph-library.html",
    ),
)

# GPUDirect Storage: cuFile (libcufile) writes its errors to cufile.log; without the nvidia-fs
# kernel module (from the nvidia-fs / nvidia-gds packages, or the GPU Operator's
# driver.rdma / gds settings) it falls back to compatibility mode (POSIX reads through host memory).
_GDS = "https://docs.nvidia.com/gpudirect-storage/troubleshooting-guide/index.html"
_GDS_ENTRIES = (
    Entry(
        code="nvidia-fs-not-loaded",
        name="GPUDirect Storage: nvidia-fs module not loaded",
        cause="cuFile found no nvidia-fs kernel module on the host (cuFileDriverOpen fails): the "
        "GPUDirect Storage driver is not installed, not built for the running kernel, or not "
        "loaded, so I/O runs in compatibility mode through host memory or fails where "
        "compatibility mode is off",
        fix="on {node}: `lsmod | grep nvidia_fs` and `/usr/local/cuda/gds/tools/gdscheck -p`; install "
        "the GDS packages for the driver (`nvidia-gds` / `nvidia-fs-dkms`) and `sudo modprobe "
        "nvidia_fs`; under the GPU Operator set `gds.enabled=true` (with `driver.rdma.enabled` for "
        "NVMe-oF/RDMA) so its nvidia-fs container loads it",
        layer="driver",
        texts=("nvidia-fs.ko driver not loaded",),
        source=_GDS,
    ),
    Entry(
        code="nvme-not-registered-with-nvidia-fs",
        name="GPUDirect Storage: NVMe driver not registered with nvidia-fs",
        cause="nvidia-fs is loaded but the NVMe driver has not registered with it, so cuFile cannot "
        "do direct I/O on the file's NVMe device (cuFileHandleRegister fails or falls back to "
        "compatibility mode): the kernel's NVMe driver lacks the GDS (P2PDMA) support nvidia-fs "
        "needs (a kernel or distribution GDS does not support, an inbox driver where MLNX_OFED's "
        "NVMe driver is required), or the file is on a file system or device GDS does not support",
        fix="on {node}: `/usr/local/cuda/gds/tools/gdscheck -p` lists which file systems and NVMe "
        "support GDS sees; use a kernel and distribution the GDS release supports (its release "
        "notes), install MLNX_OFED with `--with-nvmf --enable-gds` where the platform needs it, "
        "reload nvidia_fs after the NVMe driver, and put the data on ext4/xfs on a supported NVMe",
        layer="driver",
        texts=("NVMe Driver not registered with nvidia-fs",),
        source=_GDS,
    ),
)

CATALOGUE = Catalogue(
    id="cuda-libs",
    title="CUDA math libraries (cuBLAS and cuDNN status codes)",
    source=_CUBLAS,
    version="cuBLAS 12.x (cublasStatus_t), cuDNN 9.x (cudnnStatus_t; 8.x names kept)",
    entries=_CUBLAS_ENTRIES + _CUDNN_ENTRIES + _LOADER_ENTRIES + _GDS_ENTRIES,
    applies_to=("cuda-workload", "nccl-workload"),
    unknown=Entry(
        code="?",
        name="CUDA library status not in this catalogue",
        cause="a CUDA math library returned {code}, a status this catalogue does not list (a "
        "parameter or mapping error of the program's own call, or a newer library's status)",
        fix="look {code} up in the library's status table (cuBLAS cublasStatus_t, cuDNN "
        "cudnnStatus_t) for the release the program uses; the call named beside it is the "
        "program's",
        layer="application",
        source=_CUBLAS,
    ),
    readers=(
        # The symbol as the frameworks print it: `CUDA error: CUBLAS_STATUS_ALLOC_FAILED when
        # calling ...`, `cuDNN error: CUDNN_STATUS_INTERNAL_ERROR`, `CUDNN_STATUS_NOT_INITIALIZED`.
        r"(?P<code>(?-i:CUBLAS_STATUS_(?!SUCCESS)[A-Z_]+))",
        r"(?P<code>(?-i:CUDNN_STATUS_(?!SUCCESS)[A-Z_]+))",
        # (not the driver's libcuda.so.1: that is CUDA 35's no driver in the container)
        r"(?P<code>(?-i:Could not load dynamic library)) "
        r"'(?P<library>lib(?!cuda\.so)(?:cu|nv)[\w.+-]{1,60})'",
        r"(?-i:Could not load library) libcudnn[\w.]{0,60}\. Error: (?P<code>libcuda\.so:)",
        r"(?P<code>(?-i:Could not load library)) libcudnn[\w.]{0,60}\. Error: "
        r"(?P<library>lib(?!cuda\.so:)[\w.+-]{1,60}): cannot open",
    ),
)
