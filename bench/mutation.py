"""Mutation testing of the code that decides a verdict: mutmut changes one operator, constant or
condition at a time in each judgement module and runs the tests that reach the changed function; a
mutant no test fails on is a wrong verdict the tests cannot see.

    python bench/mutation.py [--budget-s 2400] [--children 2] [--module PATH ...] [--keep]

Prints `mutation: K/N killed` (N the mutants generated, K those a test failed on; a mutant that
made its tests time out counts as killed, one the budget left unrun counts as not killed) and each
survivor as file:line with the line before and after. The run happens in a copy of the repository
in a temporary folder, so the working tree is never mutated. The survivors judged equivalent (no
input can tell them from the original) are listed in EQUIVALENT below with the reason, and printed
apart from the others.

Which tests: every module's mutants run against UNIT_TESTS, the unit tests that call the judgement
functions with real-format inputs (corpus captures, objects in the API's shape) and take
milliseconds; the modules whose judgement is reached through the API (the gate's writes, the
rounds of the deeper levels, the drain, the upgrade's steps) also run against the sim-backed tests
named in SIM_TESTS. These are the project's own tests, chosen per module so that a mutant runs the
tests that can see it and not the whole cluster tier. The modules that share a test selection are
mutated in one mutmut run; each run has its own copy of the tree.

Nothing is excluded from mutation: no `# pragma: no mutate`, every function of every module listed
is mutated. Mutants of a function called only while its module is imported (BUILT_AT_IMPORT) can
never be switched on by mutmut; they count as survivors and are named apart.

On this 2-core machine, with other work on it, mutmut gets through one to three mutants a second
on the unit tests and a few a minute on the sim-backed ones: run a few modules at a time with
--module, e.g.

    python bench/mutation.py --children 2 --module gpuctl/core/verify/model.py \
        --module gpuctl/cuda_workload.py
"""

from __future__ import annotations

import argparse
import ast
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# The modules that decide a verdict. The nccl level is listed last: its survivors are looked at last.
MODULES = (
    "gpuctl/core/verify/model.py",
    "gpuctl/core/proof/verdict.py",
    "gpuctl/core/proof/gate.py",
    "gpuctl/core/gate.py",
    "gpuctl/core/stacks/dra/device_gate.py",
    "gpuctl/core/node_condition.py",
    "gpuctl/core/verify/pod_judgement.py",
    "gpuctl/core/verify/node_checks.py",
    "gpuctl/core/verify/cluster_checks.py",
    "gpuctl/core/verify/expectations.py",
    "gpuctl/core/verify/levels/base.py",
    "gpuctl/core/verify/levels/cuda.py",
    "gpuctl/core/verify/levels/rounds.py",
    "gpuctl/cuda_workload.py",
    "gpuctl/fabric_expectations.py",
    "gpuctl/kube/drain.py",
    "gpuctl/core/explain.py",
    "gpuctl/core/upgrade/run.py",
    "gpuctl/core/verify/levels/nccl.py",
    "gpuctl/nccl_expectations.py",
)

# The unit tests that call the judgement functions themselves with real-format inputs (corpus
# captures, node and pod objects as the API returns them): each takes milliseconds. Every module's
# mutants run against these; mutmut runs, per mutant, only the tests that reach its function.
UNIT_TESTS = (
    "tests/unit/test_verdict_rules.py",
    "tests/unit/test_verify_timeout_outcome.py",
    "tests/unit/test_verify_real_h200_output.py",
    "tests/unit/test_workload_parsers.py",
    "tests/unit/test_nccl_expectations.py",
    "tests/unit/test_nccl_level_judgement.py",
    "tests/unit/test_explain.py",
    "tests/unit/test_explain_since.py",
    "tests/unit/test_gpu_use.py",
    "tests/unit/test_tolerations.py",
    "tests/unit/test_gate_condition.py",
    "tests/unit/test_fabric.py",
    "tests/unit/test_judgement_node_checks.py",
    "tests/unit/test_judgement_expectations.py",
    "tests/unit/test_judgement_cluster_checks.py",
    "tests/unit/test_judgement_pod_start.py",
    "tests/unit/test_judgement_nvidia_smi.py",
    "tests/unit/test_judgement_nccl_rows.py",
    "tests/unit/test_judgement_condition.py",
    "tests/unit/test_judgement_cuda_level.py",
    "tests/unit/test_judgement_fabric_expectations.py",
    "tests/unit/test_judgement_nccl_messages.py",
    "tests/unit/test_judgement_drain.py",
    "tests/unit/test_nccl_pcie.py",
    "tests/unit/test_judgement_nccl_pcie.py",
)

# The tests that start a sim (an API server in-process, a second or more each) a module's mutants
# also run against: only for the modules whose judgement is reached through the API (the gate's
# writes, the drain's evictions, the rounds of the deeper levels, the upgrade's steps). Kept out of
# UNIT_TESTS so that the other modules' mutants do not wait on them. A module not named here runs
# against UNIT_TESTS alone.
GATE_WRITES = "tests/unit/test_judgement_gate_writes.py"
SIM_TESTS: dict[str, tuple[str, ...]] = {
    "gpuctl/core/proof/verdict.py": (GATE_WRITES,),
    "gpuctl/core/proof/gate.py": (GATE_WRITES, "tests/cluster/test_gate.py"),
    "gpuctl/core/gate.py": (GATE_WRITES, "tests/cluster/test_gate.py"),
    "gpuctl/core/stacks/dra/device_gate.py": (GATE_WRITES,),
    "gpuctl/core/node_condition.py": (GATE_WRITES,),
    "gpuctl/core/verify/levels/rounds.py": ("tests/unit/test_judgement_level_rounds.py",),
    "gpuctl/kube/drain.py": ("tests/cluster/test_drain.py",),
    # test_upgrade_plan.py runs each upgrade through ansible (30 to 60 s a test): too slow per mutant.
    "gpuctl/core/upgrade/run.py": (
        "tests/cluster/test_proof_paths.py",
        "tests/unit/test_judgement_upgrade_halt.py",
    ),
}


def tests_of(module: str) -> tuple[str, ...]:
    """The test files `module`'s mutants run against."""
    return (*UNIT_TESTS, *SIM_TESTS.get(module, ()))


# Every test file some module runs against.
TESTS = tuple(dict.fromkeys(test for module in MODULES for test in tests_of(module)))

# What the tests read besides the package and themselves (templates, playbooks, the docs they check).
COPIED_FOLDERS = ("gpuctl", "tests", "templates", "playbooks", "docs", "inventories")
COPIED_FILES = ("setup.py", "README.md")

# Reasons shared by several equivalent mutants below.
_NOT_READY = "the diagnosis table has a generic NotReady row: every node.ready text is diagnosed"
_UNHEALTHY = "the node.unhealthy-gpus row matches every `allocatable N < capacity M` text"
_POOL = "the pool's size and its threads' names change how fast the writes go, not what is written"
_NO_BODY = (
    "an error with no body or an empty one gives no causes either way: {} and unparsable text both end in []"
)
_MESSAGE = "the default is read only for a cause that has a message (the comprehension's condition)"
_CONTEXT = "no diagnosis row or catalogue entry of the CUDA or NCCL workload uses {namespace} or {image}"

# Survivors no input can tell from the original, with the reason: (module, the line before, the
# line after, as the bench prints them). They count as survivors in K/N; the bench names them apart.
EQUIVALENT: dict[tuple[str, str, str], str] = {
    (
        "gpuctl/core/explain.py",
        "for each, role in zip(found, roles(found), strict=True)",
        "for each, role in zip(found, roles(found), strict=None)",
    ): "roles() returns one role per finding: the lengths always agree",
    (
        "gpuctl/core/explain.py",
        "for each, role in zip(found, roles(found), strict=True)",
        "for each, role in zip(found, roles(found), strict=False)",
    ): "roles() returns one role per finding: the lengths always agree",
    (
        "gpuctl/core/explain.py",
        "for each, role in zip(found, roles(found), strict=True)",
        "for each, role in zip(found, roles(found), )",
    ): "roles() returns one role per finding: the lengths always agree",
    (
        "gpuctl/core/explain.py",
        "root = found[0].rank if found else 0",
        "root = found[0].rank if found else 1",
    ): "with no finding the root rank is never compared",
    (
        "gpuctl/cuda_workload.py",
        "blocks = (ELEMENTS + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK",
        "blocks = (ELEMENTS + THREADS_PER_BLOCK + 1) // THREADS_PER_BLOCK",
    ): "ELEMENTS is 50000, not a multiple of 256: 196 blocks either way (the capture's figure)",
    (
        "gpuctl/cuda_workload.py",
        "blocks = (ELEMENTS + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK",
        "blocks = (ELEMENTS + THREADS_PER_BLOCK - 2) // THREADS_PER_BLOCK",
    ): "ELEMENTS is 50000, not a multiple of 256: 196 blocks either way (the capture's figure)",
    (
        "gpuctl/core/verify/expectations.py",
        "count = -1",
        "count = -2",
    ): "any count below zero is refused with the same message: -1 and -2 both are",
    (
        "gpuctl/core/verify/expectations.py",
        'data = yaml.safe_load(read_input_file(path, "--expect-gpus file").decode("utf-8", "replace"))',
        'data = yaml.safe_load(read_input_file(path, "--expect-gpus file").decode("UTF-8", "replace"))',
    ): "codec names are case-insensitive: UTF-8 is utf-8",
    (
        "gpuctl/core/verify/node_checks.py",
        'hint = found.hint if found else f"`{_describe_node(node)}`"',
        'hint = found.hint if (found) or True else f"`{_describe_node(node)}`"',
    ): _NOT_READY,
    (
        "gpuctl/core/verify/node_checks.py",
        'hint = found.hint if found else f"`{_describe_node(node)}`"',
        'hint = found.hint if found else f"`{_describe_node(None)}`"',
    ): _NOT_READY,
    (
        "gpuctl/core/verify/node_checks.py",
        'return failed("node.ready", text[:200], hint, found.signature_id if found else "")',
        'return failed("node.ready", text[:200], hint, found.signature_id if (found) or True else "")',
    ): _NOT_READY,
    (
        "gpuctl/core/verify/node_checks.py",
        'return failed("node.ready", text[:200], hint, found.signature_id if found else "")',
        'return failed("node.ready", text[:200], hint, found.signature_id if found else "XXXX")',
    ): _NOT_READY,
    (
        "gpuctl/core/verify/node_checks.py",
        'found.hint if found else "",',
        'found.hint if (found) or True else "",',
    ): _UNHEALTHY,
    (
        "gpuctl/core/verify/node_checks.py",
        'found.hint if found else "",',
        'found.hint if found else "XXXX",',
    ): _UNHEALTHY,
    (
        "gpuctl/core/verify/node_checks.py",
        'found.signature_id if found else "",',
        'found.signature_id if (found) or True else "",',
    ): _UNHEALTHY,
    (
        "gpuctl/core/verify/node_checks.py",
        'found.signature_id if found else "",',
        'found.signature_id if found else "XXXX",',
    ): _UNHEALTHY,
    (
        "gpuctl/core/verify/levels/base.py",
        "namespace=options.namespace,",
        "namespace=None,",
    ): _CONTEXT,
    (
        "gpuctl/core/verify/levels/base.py",
        "image=self.image(options.proof),",
        "image=None,",
    ): _CONTEXT,
    (
        "gpuctl/core/verify/levels/base.py",
        "namespace=options.namespace,",
        "image=self.image(options.proof),",
    ): _CONTEXT,
    (
        "gpuctl/core/verify/levels/base.py",
        "image=self.image(options.proof),",
        ")",
    ): _CONTEXT,
    (
        "gpuctl/core/stacks/dra/device_gate.py",
        "ran = {gpu.index: gpu.ok for gpu in node.cuda or ()} if node.cuda is not None else {}",
        "ran = {gpu.index: gpu.ok for gpu in node.cuda or ()} if (node.cuda is not None) or True else {}",
    ): "with node.cuda None the comprehension runs over () and gives {} too",
    (
        "gpuctl/core/node_condition.py",
        'conditions = dig(node, "status", "conditions", default=None) or []',
        'conditions = dig(node, "status", "conditions", ) or []',
    ): "dig's default is None already",
    (
        "gpuctl/core/node_condition.py",
        'with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="gpuctl-condition") as pool:',
        'with ThreadPoolExecutor(max_workers=None, thread_name_prefix="gpuctl-condition") as pool:',
    ): _POOL,
    (
        "gpuctl/core/node_condition.py",
        'with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="gpuctl-condition") as pool:',
        "with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix=None) as pool:",
    ): _POOL,
    (
        "gpuctl/core/node_condition.py",
        'with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="gpuctl-condition") as pool:',
        'with ThreadPoolExecutor(thread_name_prefix="gpuctl-condition") as pool:',
    ): _POOL,
    (
        "gpuctl/fabric_expectations.py",
        "round(fabric.nics * figure, 1),",
        "round(fabric.nics * figure, 2),",
    ): "the per-NIC figure has one decimal, so NICs times it has one: rounding to two gives the same",
    (
        "gpuctl/core/verify/cluster_checks.py",
        'version = node.driver_version or labels_by_node.get(node.name, "")',
        "version = node.driver_version or labels_by_node.get(node.name, None)",
    ): 'a node without the label has no version either way ("" or None, both skipped)',
    (
        "gpuctl/core/verify/cluster_checks.py",
        'version = node.driver_version or labels_by_node.get(node.name, "")',
        "version = node.driver_version or labels_by_node.get(node.name, )",
    ): 'a node without the label has no version either way ("" or None, both skipped)',
    (
        "gpuctl/core/verify/pod_judgement.py",
        'return product.strip().replace(" ", "-").upper()',
        'return product.strip().replace(" ", "-").lower()',
    ): "both sides of the comparison are normalised alike: upper or lower case compares the same",
    (
        "gpuctl/core/node_condition.py",
        'with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="gpuctl-condition") as pool:',
        "with ThreadPoolExecutor(max_workers=CONCURRENCY, ) as pool:",
    ): _POOL,
    (
        "gpuctl/core/node_condition.py",
        'with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="gpuctl-condition") as pool:',
        'with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="XXgpuctl-conditionXX")'
        " as pool:",
    ): _POOL,
    (
        "gpuctl/core/node_condition.py",
        'with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="gpuctl-condition") as pool:',
        'with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="GPUCTL-CONDITION") as pool:',
    ): _POOL,
    (
        "gpuctl/core/stacks/dra/device_gate.py",
        "published = inventory.nodes.get(node.name) or DraNode(node.name)",
        "published = inventory.nodes.get(node.name) or DraNode(None)",
    ): "a node with no published slice has no devices; its DraNode's name is never read",
    (
        "gpuctl/core/verify/node_checks.py",
        'cause = plugin_log.message.split("; log:", 1)[0]',
        'cause = plugin_log.message.split("; log:", )[0]',
    ): "the first part of a split is the same whatever its maxsplit",
    (
        "gpuctl/core/verify/node_checks.py",
        'cause = plugin_log.message.split("; log:", 1)[0]',
        'cause = plugin_log.message.split("; log:", 2)[0]',
    ): "the first part of a split is the same whatever its maxsplit",
    (
        "gpuctl/nccl_expectations.py",
        'match = _FAMILY.search(product.split("-MIG-", maxsplit=1)[0])',
        'match = _FAMILY.search(product.split("-MIG-", )[0])',
    ): "the first part of a split is the same whatever its maxsplit",
    (
        "gpuctl/nccl_expectations.py",
        'match = _FAMILY.search(product.split("-MIG-", maxsplit=1)[0])',
        'match = _FAMILY.search(product.split("-MIG-", maxsplit=2)[0])',
    ): "the first part of a split is the same whatever its maxsplit",
    (
        "gpuctl/core/gate.py",
        'return list(dig(node, "spec", "taints", default=None) or [])',
        'return list(dig(node, "spec", "taints", ) or [])',
    ): "dig's default is None already",
    (
        "gpuctl/core/gate.py",
        'text = dig(node, "metadata", "annotations", PROVEN_ANNOTATION, default=None)',
        'text = dig(node, "metadata", "annotations", PROVEN_ANNOTATION, )',
    ): "dig's default is None already",
    (
        "gpuctl/core/gate.py",
        'return str(text).split(" ", 1)[0] if text is not None else None',
        'return str(text).split(" ", )[0] if text is not None else None',
    ): "the first part of a split is the same whatever its maxsplit",
    (
        "gpuctl/core/gate.py",
        'return str(text).split(" ", 1)[0] if text is not None else None',
        'return str(text).split(" ", 2)[0] if text is not None else None',
    ): "the first part of a split is the same whatever its maxsplit",
    (
        "gpuctl/core/gate.py",
        'return dig(node, "metadata", "annotations", PROVEN_ANNOTATION, default=None) is not None',
        'return dig(node, "metadata", "annotations", PROVEN_ANNOTATION, ) is not None',
    ): "dig's default is None already",
    (
        "gpuctl/core/gate.py",
        'with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="gpuctl-gate") as pool:',
        'with ThreadPoolExecutor(max_workers=None, thread_name_prefix="gpuctl-gate") as pool:',
    ): _POOL,
    (
        "gpuctl/core/gate.py",
        'with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="gpuctl-gate") as pool:',
        "with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix=None) as pool:",
    ): _POOL,
    (
        "gpuctl/core/gate.py",
        'with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="gpuctl-gate") as pool:',
        'with ThreadPoolExecutor(thread_name_prefix="gpuctl-gate") as pool:',
    ): _POOL,
    (
        "gpuctl/core/gate.py",
        'with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="gpuctl-gate") as pool:',
        "with ThreadPoolExecutor(max_workers=CONCURRENCY, ) as pool:",
    ): _POOL,
    (
        "gpuctl/core/gate.py",
        'with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="gpuctl-gate") as pool:',
        'with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="XXgpuctl-gateXX") as pool:',
    ): _POOL,
    (
        "gpuctl/core/gate.py",
        'with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="gpuctl-gate") as pool:',
        'with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="GPUCTL-GATE") as pool:',
    ): _POOL,
    (
        "gpuctl/kube/drain.py",
        'causes = json.loads(getattr(error, "body", "") or "{}").get("details", {}).get("causes") or []',
        'causes = json.loads(getattr(error, "body", None) or "{}").get("details", {}).get("causes") or []',
    ): _NO_BODY,
    (
        "gpuctl/kube/drain.py",
        'causes = json.loads(getattr(error, "body", "") or "{}").get("details", {}).get("causes") or []',
        'causes = json.loads(getattr(error, "body", "XXXX") or "{}").get("details", {}).get("causes") or []',
    ): _NO_BODY,
    (
        "gpuctl/kube/drain.py",
        'causes = json.loads(getattr(error, "body", "") or "{}").get("details", {}).get("causes") or []',
        'causes = json.loads(getattr(error, "body", "") or "XX{}XX").get("details", {}).get("causes") or []',
    ): _NO_BODY,
    (
        "gpuctl/kube/drain.py",
        'words = [str(cause.get("message", "")) for cause in causes if cause.get("message")]',
        'words = [str(cause.get("message", None)) for cause in causes if cause.get("message")]',
    ): _MESSAGE,
    (
        "gpuctl/kube/drain.py",
        'words = [str(cause.get("message", "")) for cause in causes if cause.get("message")]',
        'words = [str(cause.get("message", )) for cause in causes if cause.get("message")]',
    ): _MESSAGE,
    (
        "gpuctl/kube/drain.py",
        'words = [str(cause.get("message", "")) for cause in causes if cause.get("message")]',
        'words = [str(cause.get("message", "XXXX")) for cause in causes if cause.get("message")]',
    ): _MESSAGE,
    (
        "gpuctl/kube/drain.py",
        "while (left := until - time.monotonic()) > 0 and not should_stop():",
        "while (left := until - time.monotonic()) >= 0 and not should_stop():",
    ): "at left exactly 0 the extra turn sleeps 0 s: the wait ends at the same time",
}

# Functions only called while their module is imported (a table built at import): mutmut imports
# the package once, before it switches a mutant on, so no test run can reach their mutants. They
# count as survivors; the bench names them apart with the reason.
BUILT_AT_IMPORT: dict[tuple[str, str], str] = {
    ("gpuctl/nccl_expectations.py", "_row"): "TABLE's rows are built by _row when the module is imported",
    ("gpuctl/nccl_expectations.py", "_derived"): "TABLE's PCIe rows are built by _derived at import",
}

# mutmut's exit codes of a mutant's test run (mutmut.stats.status_by_exit_code).
KILLED_CODES = {1, 3, 36, 24, -24, 152, 255}
STATUS = {
    None: "not run (budget)",
    33: "no test reaches",
    5: "no test reaches",
    34: "skipped",
    37: "type check",
}
SURVIVED_CODES = {0}


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    exit_code: int | None

    @property
    def killed(self) -> bool:
        return self.exit_code in KILLED_CODES

    @property
    def survived(self) -> bool:
        return self.exit_code in SURVIVED_CODES


def loop_speed_s() -> float:
    """The machine's speed: the time of a fixed pure-Python loop."""
    start = time.perf_counter()
    total = 0
    for number in range(2_000_000):
        total += number % 7
    return time.perf_counter() - start


def prepare(workdir: Path, modules: list[str], tests: list[str]) -> None:
    """Copy the package and the tests into `workdir` and configure mutmut there."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in COPIED_FOLDERS:
        shutil.copytree(REPO / folder, workdir / folder, ignore=ignore, dirs_exist_ok=True)
    for name in COPIED_FILES:
        shutil.copy2(REPO / name, workdir / name)
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    pyproject += "\n[tool.mutmut]\n" + "\n".join(
        (
            'source_paths = ["gpuctl"]',
            f"also_copy = {json.dumps([*COPIED_FOLDERS[2:], *COPIED_FILES])}",
            f"only_mutate = {json.dumps(modules)}",
            f"pytest_add_cli_args_test_selection = {json.dumps(tests)}",
            'pytest_add_cli_args = ["-p", "no:cacheprovider", "-q"]',
            "timeout_multiplier = 5.0",
            "timeout_constant = 10.0",
        )
    )
    (workdir / "pyproject.toml").write_text(pyproject + "\n", encoding="utf-8")


def run_mutmut(workdir: Path, children: int, budget_s: float) -> tuple[float, str]:
    """`mutmut run` in `workdir`, stopped at the budget; (seconds taken, how it ended). Its
    output goes to mutmut.log there; the end of it is printed when mutmut fails."""
    started = time.monotonic()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("CI", None)  # a skipped test is no kill either way; CI's skip rule is not under test here
    log = workdir / "mutmut.log"
    with (
        log.open("w", encoding="utf-8") as output,
        subprocess.Popen(
            [sys.executable, "-m", "mutmut", "run", "--max-children", str(children)],
            cwd=workdir,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        ) as process,
    ):
        try:
            process.wait(timeout=budget_s)
        except subprocess.TimeoutExpired:
            process.terminate()
            process.wait(timeout=60)
            return time.monotonic() - started, f"stopped at the budget ({budget_s:.0f} s)"
    if process.returncode != 0:
        print(log.read_text(encoding="utf-8", errors="replace")[-3000:], file=sys.stderr)
        return time.monotonic() - started, f"failed (exit {process.returncode}, its log above)"
    return time.monotonic() - started, "finished"


def mutants(workdir: Path, modules: list[str]) -> list[Mutant]:
    found: list[Mutant] = []
    for path in modules:
        meta = workdir / "mutants" / f"{path}.meta"
        if not meta.exists():
            continue
        codes = json.loads(meta.read_text(encoding="utf-8")).get("exit_code_by_key", {})
        found += [Mutant(name, path, code) for name, code in codes.items()]
    return found


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {
        node.name: node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def _original_start(source: str, mangled: str) -> int:
    """The `def` line of the function mutmut names x_NAME (a function) or xǁCLASSǁNAME (a method)."""
    wanted = [part for part in mangled.removeprefix("x_").removeprefix("x").split("ǁ") if part]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and len(wanted) == 2 and node.name == wanted[0]:
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name == wanted[1]:
                    return item.lineno
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and [node.name] == wanted:
            return node.lineno
    return 1


@functools.cache
def _parsed(path: Path) -> tuple[str, dict[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """A mutated module's text and its functions by name, read once (it holds every mutant)."""
    source = path.read_text(encoding="utf-8")
    return source, _functions(ast.parse(source))


def describe(workdir: Path, mutant: Mutant) -> str:
    """`file:line: before -> after`: the first line where the mutant's copy of its function differs
    from mutmut's copy of the original (both are in the mutated module)."""
    mangled = mutant.name.rsplit(".", 1)[-1].rsplit("__mutmut_", 1)[0]
    mutated_source, functions = _parsed(workdir / "mutants" / mutant.path)
    original = functions.get(f"{mangled}__mutmut_orig")
    changed = functions.get(mutant.name.rsplit(".", 1)[-1])
    if original is None or changed is None:
        return f"{mutant.path}: {mutant.name}"
    # Both copies under the original's name, so that a changed default argument shows too.
    name = mangled.rsplit("ǁ", 1)[-1].removeprefix("x_")
    before = (
        (ast.get_source_segment(mutated_source, original) or "").replace(original.name, name).splitlines()
    )
    after = (ast.get_source_segment(mutated_source, changed) or "").replace(changed.name, name).splitlines()
    start = _original_start((REPO / mutant.path).read_text(encoding="utf-8"), mangled)
    for offset, (old, new) in enumerate(zip(before, after, strict=False)):
        if old != new:
            return f"{mutant.path}:{start + offset}: {old.strip()}  ->  {new.strip()}"
    return f"{mutant.path}:{start}: {mutant.name} (a line removed)"


def _key(named: str) -> tuple[str, str, str]:
    """(module, before, after) of a `describe` line, for EQUIVALENT."""
    place, _, change = named.partition(": ")
    before, _, after = change.partition("  ->  ")
    return place.split(":", 1)[0], before, after


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget-s", type=float, default=2400.0, help="stop mutmut after this many seconds")
    parser.add_argument("--children", type=int, default=os.cpu_count() or 2, help="mutants run at once")
    parser.add_argument("--module", action="append", help="mutate only this module (repeatable)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy (its path is printed)")
    args = parser.parse_args()
    modules = args.module or list(MODULES)
    groups: dict[tuple[str, ...], list[str]] = {}
    for module in modules:
        groups.setdefault(tuple(test for test in tests_of(module) if (REPO / test).exists()), []).append(
            module
        )
    speed = loop_speed_s()
    print(f"machine speed: fixed loop {speed:.3f} s; {len(modules)} modules in {len(groups)} run(s)")
    started = time.monotonic()
    found: list[Mutant] = []
    for tests, group in groups.items():
        left_s = args.budget_s - (time.monotonic() - started)
        workdir = Path(tempfile.mkdtemp(prefix="gpuctl-mutation-"))
        try:
            prepare(workdir, group, list(tests))
            took_s, state = run_mutmut(workdir, args.children, max(left_s, 1.0))
            of_group = mutants(workdir, group)
            found += of_group
            print(f"mutmut {state} in {took_s:.0f} s with {args.children} children, {len(tests)} test files")
            for path in group:
                of_path = [mutant for mutant in of_group if mutant.path == path]
                caught = sum(mutant.killed for mutant in of_path)
                print(f"  {path}: {caught}/{len(of_path)} killed")
            report(workdir, of_group)
        finally:
            if args.keep:
                print(f"kept: {workdir}")
            else:
                shutil.rmtree(workdir, ignore_errors=True)
    killed = sum(mutant.killed for mutant in found)
    print(f"took {time.monotonic() - started:.0f} s")
    print(f"mutation: {killed}/{len(found)} killed")


def report(workdir: Path, found: list[Mutant]) -> None:
    """The survivors (the equivalent ones apart, with the reason) and the mutants not run."""
    survivors = [mutant for mutant in found if mutant.survived]
    unrun = [mutant for mutant in found if not mutant.killed and not mutant.survived]
    for mutant in survivors:
        named = describe(workdir, mutant)
        function = mutant.name.rsplit(".", 1)[-1].rsplit("__mutmut_", 1)[0].rsplit("ǁ", 1)[-1]
        at_import = BUILT_AT_IMPORT.get((mutant.path, function.removeprefix("x_")))
        reason = EQUIVALENT.get(_key(named))
        if at_import:
            print(f"built at import ({at_import}) {named}")
        else:
            print(f"equivalent ({reason}) {named}" if reason else f"survived {named}")
    statuses = Counter(STATUS.get(mutant.exit_code, f"exit {mutant.exit_code}") for mutant in unrun)
    if unrun:
        print("neither killed nor survived: " + ", ".join(f"{n} {what}" for what, n in statuses.items()))
    for mutant in unrun:
        if mutant.exit_code in (33, 5):  # no test reaches its function: a gap, listed as survivors are
            print(f"no test reaches {describe(workdir, mutant)}")


if __name__ == "__main__":
    main()
