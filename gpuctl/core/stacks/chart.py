"""What the stacks installed from a Helm chart share: the user's helm brings the release to the
chart and the values `gpuctl render` prints for it (gpuctl.core.chart_release: skipped when it
already matches, so a second run writes nothing; a pending release put back first)."""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING

from gpuctl.core.chart_release import HelmOutcome, chart_identity, install_release
from gpuctl.core.stacks.base import ClusterOptions, ClusterStack
from gpuctl.helm import display, upgrade_install_args

if TYPE_CHECKING:
    from gpuctl.core.render_options import RenderedFile, RenderOptions
    from gpuctl.helm import Chart, Helm
    from gpuctl.kube.client import ApiClient


class ChartStack(ClusterStack):
    """A stack that is one Helm release; its render is the release's values."""

    release: str
    namespace: str
    from_chart = True

    @abstractmethod
    def chart(self, options: RenderOptions) -> Chart:
        """The chart to install."""

    def chart_variables(self, options: RenderOptions) -> dict[str, object]:
        """What every chart's values template names: the chart, the helm command that installs the
        release with these values (the file's header), the GPU nodes' selector."""
        chart = self.chart(options)
        install = upgrade_install_args(self.release, self.namespace, chart, self.own_files[0])
        return {
            "chart": chart.reference,
            "chart_version": chart.version,
            "helm_command": display(["helm", *install]),
            "node_selector": tuple(options.node_selector),
        }

    def plugin_namespace(self, options: RenderOptions) -> str:
        del options
        return self.namespace

    def prepare(self, api_client: ApiClient, options: ClusterOptions) -> ClusterOptions:
        """A local --chart that is no chart: exit 2 before any write."""
        del api_client
        self._helm(options)
        chart_identity(self.chart(options.render))
        return options

    def install(self, options: ClusterOptions, rendered: list[RenderedFile]) -> HelmOutcome | None:
        """`helm upgrade --install` with the rendered values, unless the release already matches."""
        chart = self.chart(options.render)
        values_yaml = rendered[0].content
        return install_release(
            self._helm(options), self.release, self.namespace, chart, values_yaml, check=options.check
        )

    def _helm(self, options: ClusterOptions) -> Helm:
        if options.helm is None:
            raise ValueError(f"--stack {self.stack.value} needs a helm")  # the CLI always passes one
        return options.helm
