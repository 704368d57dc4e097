"""`gpuctl status`."""

from __future__ import annotations

from gpuctl.cli.options import Context, Kubeconfig, TableOrJson, TableOrJsonOutput

HELP = """\
GPU inventory of the cluster: one row per GPU node with product, GPUs (capacity /
allocatable / in use by non-terminated pods), driver version, taints and readiness.
Read-only. Exit 0 (also with no GPU node), 2 bad flag or kubeconfig, 3 cluster unreachable.
"""


def command(
    *,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    output: TableOrJsonOutput = TableOrJson.table,
) -> None:
    from gpuctl.cli.output import emit
    from gpuctl.core.status import gpu_status
    from gpuctl.kube.client import load_api_client
    from gpuctl.report import status as report

    emit(gpu_status(load_api_client(kubeconfig, context)), output, report)
