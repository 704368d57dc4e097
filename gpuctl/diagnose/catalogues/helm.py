"""Helm: what `helm repo add/update`, `helm install/upgrade/rollback/uninstall` and `helm pull`
print when the GPU Operator, the DRA driver or the device plugin chart cannot be installed.

Each entry is one of Helm's own error messages, from its source: the chart repository client
(`pkg/repo/chartrepo.go`: "looks like %q is not a valid chart repository or cannot be reached",
`pkg/getter/httpgetter.go`: "failed to fetch %s : %s" with the server's HTTP status, the
repository index's "chart %q ... not found in ..."), the install and upgrade actions
(`pkg/action/install.go`, `upgrade.go`, `validate.go`, `hooks.go`, `action.go`) and the commands
that prefix them (`INSTALLATION FAILED:`, `UPGRADE FAILED:`). gpuctl's own helm runner
(gpuctl/helm.py) surfaces these lines verbatim.
"""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue, Entry

_HELM = "https://github.com/helm/helm/blob/v3.16.2/"
_REPO = _HELM + "pkg/repo/chartrepo.go"
_GETTER = _HELM + "pkg/getter/httpgetter.go"
_INSTALL = _HELM + "pkg/action/install.go"
_UPGRADE = _HELM + "pkg/action/upgrade.go"
_VALIDATE = _HELM + "pkg/action/validate.go"
_ACTION = _HELM + "pkg/action/action.go"
_HOOKS = _HELM + "pkg/action/hooks.go"
_KUBE = _HELM + "pkg/kube/client.go"
_HOOK_EVENTS = ("install", "upgrade", "rollback", "delete")

# NVIDIA's public chart repositories, as the charts' installation guides give them.
_NVIDIA_REPOS = (
    "the GPU Operator's repository is `helm repo add nvidia https://helm.ngc.nvidia.com/nvidia` "
    "(public: no credentials; the bare https://helm.ngc.nvidia.com answers 401), the device "
    "plugin's `https://nvidia.github.io/k8s-device-plugin`"
)
_STATUS = "`curl -sSI URL/index.yaml` shows the status the server answers"
_RELEASES = "`helm list -n NAMESPACE -a` (every state) and `helm history RELEASE -n NAMESPACE`"

_REPOSITORY = (
    Entry(
        "repo-unauthorized",
        "chart repository refused (401/403)",
        "the chart repository refused {url} ({code}): the address is not "
        "the repository's (a path missing, e.g. https://helm.ngc.nvidia.com without /nvidia), the "
        "repository is private and the credentials are missing, wrong or expired, or stale "
        "credentials stored with `helm repo add --username` are sent to a public repository; "
        "NVIDIA's public NGC repository has also answered 401 for everyone during NGC outages",
        _STATUS + "; " + _NVIDIA_REPOS + "; for a private NGC repository add it with `--username "
        "'$oauthtoken' --password NGC_API_KEY`, for a public one without credentials (`helm repo "
        "remove nvidia` and add it again); if the address is right and curl gets 401 too, NGC is "
        "failing on its side (https://status.ngc.nvidia.com): retry later, then `helm repo update`",
        "config",
        aliases=("401", "403"),
        source=_GETTER,
    ),
    Entry(
        "ngc-repo-unauthorized",
        "NGC chart repository refused (401/403)",
        "NVIDIA's NGC Helm repository (https://helm.ngc.nvidia.com/nvidia, where the GPU Operator "
        "chart is published) refused its index or a chart: it is public and needs no credentials, so "
        "either "
        "NGC is failing on its side (it has answered 401 to everyone during NGC outages, fixed by "
        "NVIDIA within hours or a day) or stale credentials stored with `helm repo add --username "
        "--password` (an old NGC API key) are sent with the request",
        "`curl -sSI https://helm.ngc.nvidia.com/nvidia/index.yaml`: 401 there too is an NGC "
        "outage: check https://status.ngc.nvidia.com and retry later (`helm repo update`); if curl "
        "gets 200, add the repository again without credentials (`helm repo remove nvidia && helm "
        "repo add nvidia https://helm.ngc.nvidia.com/nvidia`); only a private NGC org's repository "
        "needs `--username '$oauthtoken' --password NGC_API_KEY`",
        "config",
        aliases=("helm.ngc.nvidia.com",),
        source=_GETTER,
        transient=True,
    ),
    Entry(
        "repo-not-found",
        "chart repository index not found (404)",
        "no chart repository index is published at {url} (404): the address is a project page or "
        "source repository rather than its chart repository (a GitHub repository instead of its "
        "GitHub Pages site), a path is wrong, the charts moved to an OCI registry, or the "
        "repository's site is briefly down",
        _STATUS + "; use the address the chart's installation guide gives (" + _NVIDIA_REPOS + "), "
        "or install an OCI chart with `helm install RELEASE oci://REGISTRY/CHART`; if the address "
        "is right, retry later, then `helm repo update`",
        "config",
        aliases=("404",),
        source=_GETTER,
    ),
    Entry(
        "repo-server-error",
        "chart repository failing (5xx)",
        "the chart repository's server failed ({code} at {url}): an outage or maintenance on the "
        "repository's side (NGC's Helm repository has answered 502 during maintenance), nothing "
        "wrong on this machine",
        "retry later (`helm repo update`); " + _STATUS + "; for NGC see https://status.ngc.nvidia.com",
        "network",
        aliases=("500", "502", "503", "504"),
        source=_GETTER,
        transient=True,
    ),
    Entry(
        "repo-unreachable",
        "chart repository cannot be reached",
        "Helm could not read the chart repository's index: the rest of the message says why (a "
        "name not resolved or a connection refused: no route out or a proxy Helm does not use; a "
        "TLS error: a proxy re-signing HTTPS or a private CA; a page that is not an index.yaml: "
        "the address is not a chart repository)",
        _STATUS + "; set HTTPS_PROXY/NO_PROXY for helm or pass `--ca-file` for a private CA, "
        "and use the repository address the chart's guide gives (" + _NVIDIA_REPOS + ")",
        "network",
        aliases=("is not a valid chart repository or cannot be reached",),
        texts=("Unable to get an update from the",),
        source=_REPO,
    ),
    Entry(
        "repo-not-added",
        "chart repository not configured",
        "the chart reference names a repository this Helm does not know (never added on this "
        "machine or for this user: `helm repo add` writes ~/.config/helm/repositories.yaml of the "
        "user who ran it, and sudo uses root's)",
        "`helm repo list`; add it (`helm repo add nvidia https://helm.ngc.nvidia.com/nvidia && "
        "helm repo update`) as the user that runs the install",
        "config",
        texts=("no repositories found. You must add one before updating", "no repo named"),
        source=_HELM + "pkg/cmd/repo_update.go",
    ),
    Entry(
        "chart-not-found",
        "chart or version not in the repository index",
        "the repository's index (Helm's local copy of it) has no chart {chart} at that version: "
        "the local index is older than the release (added before the version was published), "
        "the version is misspelt (the GPU Operator's versions carry a `v`: v25.3.0), the chart "
        "lives in another repository, or the repository the reference names (`REPO/CHART`) was "
        "never added on this machine",
        "`helm repo list` (add the repository if it is missing), `helm repo update`, then `helm "
        "search repo {chart} --versions` lists what the repository offers; pin one of those versions",
        "config",
        aliases=("not found in", "failed to download"),
        source=_REPO,
    ),
)

_RELEASE = (
    Entry(
        "name-in-use",
        "release name in use",
        "a release of that name already exists in the namespace (deployed, failed or left pending "
        "by an earlier install, e.g. an addon enabled twice), and `helm install` never reuses a "
        "name",
        _RELEASES + "; change the existing release with `helm upgrade --install`, or remove it "
        "first (`helm uninstall RELEASE -n NAMESPACE`), or pick another name",
        "config",
        texts=("cannot re-use a name that is still in use",),
        source=_INSTALL,
    ),
    Entry(
        "operation-in-progress",
        "release stuck in a pending state",
        "the release's last operation never finished (helm was interrupted, timed out or lost "
        "the API server mid-install/upgrade/rollback), so its latest revision stays "
        "pending-install/pending-upgrade/pending-rollback and Helm refuses every later operation",
        _RELEASES + "; roll back to the last deployed revision (`helm rollback RELEASE REVISION "
        "-n NAMESPACE`), or for a first install left pending `helm uninstall RELEASE -n "
        "NAMESPACE`; as a last resort delete the pending revision's record (`kubectl -n NAMESPACE "
        "delete secret sh.helm.release.v1.RELEASE.vREVISION`), then run the upgrade again",
        "config",
        texts=("another operation (install/upgrade/rollback) is in progress",),
        source=_ACTION,
    ),
    Entry(
        "no-deployed-releases",
        "release has no deployed revision",
        "`helm upgrade` found the release but none of its revisions is deployed (the first "
        "install failed or was left pending), so there is nothing to upgrade from",
        _RELEASES + "; remove the failed release (`helm uninstall RELEASE -n NAMESPACE`) and "
        "install again, or roll back to a revision that deployed; `helm upgrade --install` "
        "replaces a failed first install",
        "config",
        texts=("has no deployed releases",),
        source=_UPGRADE,
    ),
    Entry(
        "resource-exists",
        "object owned by another release",
        "an object the chart creates already exists and is not this release's (its "
        "meta.helm.sh/release-name annotation and app.kubernetes.io/managed-by=Helm label are "
        "missing or name another release): left over from an earlier install of the chart under "
        "another release name (`--generate-name`), from another release in another namespace "
        "(cluster-scoped objects such as the GPU Operator's ClusterRole gpu-operator collide), "
        "from another install method (an OLM operator, a cluster addon), or created by hand",
        "`helm list -A` finds the release that owns it: uninstall that one, or delete the "
        "leftover object the message names (`kubectl delete KIND NAME`); to keep it, hand it to "
        "this release: `kubectl label KIND NAME app.kubernetes.io/managed-by=Helm` and `kubectl "
        "annotate KIND NAME meta.helm.sh/release-name=RELEASE "
        "meta.helm.sh/release-namespace=NAMESPACE` (`-n` for a namespaced object), then install again",
        "config",
        texts=(
            "exists and cannot be imported into the current release",
            "rendered manifests contain a resource that already exists",
        ),
        source=_VALIDATE,
    ),
    Entry(
        "crd-missing",
        "custom resource kind not installed",
        "the chart creates an object of a kind the cluster does not know: its CustomResourceDefinition "
        "is not installed (the GPU Operator's ClusterPolicy or NVIDIADriver CRDs skipped with "
        "`--skip-crds` or deleted, a ServiceMonitor without the Prometheus Operator, a "
        "NodeFeatureRule without Node Feature Discovery's CRDs)",
        "`kubectl get crd | grep -i -e nvidia -e monitoring.coreos.com -e nfd`; install the CRDs "
        "first (`helm show crds CHART --version VERSION | kubectl apply --server-side -f -`) or "
        "turn the feature off in the values (e.g. `dcgmExporter.serviceMonitor.enabled=false`), "
        "then install again",
        "config",
        texts=("ensure CRDs are installed first", "resource mapping not found for name"),
        source=_KUBE,
    ),
    Entry(
        "crd-outdated",
        "custom resource schema older than the chart",
        "the chart's {kind} carries fields the installed CustomResourceDefinition does not have: "
        "Helm installs a chart's CRDs (its crds/ folder) on the first install only and never "
        "upgrades them, so after `helm upgrade` to a newer GPU Operator the cluster still has the "
        "old ClusterPolicy schema",
        "apply the new chart's CRDs before upgrading (`helm show crds nvidia/gpu-operator --version "
        "VERSION | kubectl apply --server-side -f -`; the GPU Operator chart can do it itself with "
        "`--set operator.upgradeCRD=true`), then `helm upgrade` again",
        "config",
        aliases=("unknown field",),
        texts=("strict decoding error: unknown field",),
        source=_KUBE,
    ),
    Entry(
        "manifest-invalid",
        "release manifest rejected",
        "the API server's schema rejected the manifests the chart rendered with these values (a "
        "value of the wrong type or a field this Kubernetes version lacks); the rest of the line "
        "names the object and field",
        "`helm template` with the same values and `kubectl apply --dry-run=server -f -` show the "
        "offending object; fix the value (or use a chart version made for this Kubernetes "
        "version), then install again",
        # Helm's words before the API server's reason: an entry reading that reason (a CRD
        # missing or older than the chart) comes first.
        "application",
        texts=("unable to build kubernetes objects from release manifest",),
        source=_KUBE,
    ),
    Entry(
        "cluster-unreachable",
        "Kubernetes API server not reached",
        "Helm cannot reach the Kubernetes API server: no kubeconfig for the user running it (Helm "
        "then tries http://localhost:8080), the wrong context, or the API server down or its "
        "certificate not trusted",
        "`kubectl get nodes` with the same kubeconfig; point Helm at it (`export "
        "KUBECONFIG=PATH`, `--kube-context`; k3s: /etc/rancher/k3s/k3s.yaml, MicroK8s: `microk8s "
        "config`), and run it as the user who owns that file; when the API server refuses connections "
        "bring the control plane back (`sudo systemctl status kubelet` and the API server's pod on "
        "the control-plane node)",
        "config",
        texts=("Kubernetes cluster unreachable",),
        source=_HELM + "pkg/cmd/helpers.go",
    ),
    Entry(
        "hook-failed",
        "chart hook failed",
        "a hook of the chart (a Job it runs at {code}) did not complete: its pod failed, could "
        "not pull its image or was not scheduled before the timeout (the GPU Operator's "
        "upgrade-crd hook, Node Feature Discovery's prune job)",
        "`kubectl -n NAMESPACE get jobs,pods` and `kubectl -n NAMESPACE describe job JOB` (or "
        "`gpuctl explain` on its events) say why; fix that and run the command again (`--no-hooks` "
        "skips the hooks, `--timeout 15m` waits longer)",
        "config",
        aliases=tuple(f"{when}-{event}" for event in _HOOK_EVENTS for when in ("pre", "post")),
        source=_HOOKS,
    ),
    Entry(
        "wait-timeout",
        "release not ready in time",
        "with `--wait` (or `--atomic`) Helm waited for the release's pods, DaemonSets and Jobs to "
        "become ready and gave up: some pods stay Pending, crash or cannot pull their image (the "
        "GPU Operator's driver DaemonSet also needs minutes to build the driver on each node)",
        "`kubectl -n NAMESPACE get pods` and `gpuctl explain` on the failing pods' events and logs "
        "name the cause; fix it, then rerun with a longer `--timeout` (e.g. 15m) or without "
        "`--wait`",
        # A consequence: the pods' own failures, found in the same log, come first.
        "application",
        texts=(
            "INSTALLATION FAILED: context deadline exceeded",
            "UPGRADE FAILED: context deadline exceeded",
            "INSTALLATION FAILED: timed out waiting for the condition",
            "UPGRADE FAILED: timed out waiting for the condition",
        ),
        source=_HELM + "pkg/kube/wait.go",
    ),
    Entry(
        "registry-unauthorized",
        "OCI registry refused the chart",
        "the OCI registry refused to serve the chart: it is private and no valid login is stored "
        "for it (`helm registry login`), or a stale login is sent to a public one",
        "`helm registry login nvcr.io --username '$oauthtoken' --password NGC_API_KEY` for a "
        "private NGC chart; for a public chart `helm registry logout REGISTRY` and pull again",
        "config",
        texts=("failed to authorize: failed to fetch anonymous token",),
        source=_HELM + "pkg/registry/client.go",
    ),
)

CATALOGUE = Catalogue(
    id="helm",
    title="Helm (chart repositories, releases)",
    source=_HELM,
    version="Helm v3.16.2 (Helm 4 prints the same messages)",
    entries=_REPOSITORY + _RELEASE,
    # gpuctl runs helm itself (gpuctl/helm.py) and reports its stderr; a pasted `helm` output is
    # read by `gpuctl explain`, which looks for every catalogue.
    applies_to=("host",),
    readers=(
        # httpgetter: "failed to fetch URL : 401 Unauthorized" (Helm 2 and early 3: "Failed"; the
        # readers ignore case).
        # NVIDIA's public NGC repository refusing its index: read before the status alone.
        r"failed to fetch https://(?P<code>helm\.ngc\.nvidia\.com)/nvidia/\S{0,300} : 40[13]\b",
        r"failed to fetch (?P<url>\S{1,300}) : (?P<code>\d{3})\b",
        r"(?P<code>(?-i:is not a valid chart repository or cannot be reached))"
        r"(?!:\s*failed to fetch \S+ : \d)",
        r"(?-i:chart \")(?P<chart>[^\"]{1,200})\"[^\n]{0,200}? (?P<code>not found in) ",
        r"(?P<code>(?-i:failed to download)) \"(?P<chart>[^\"]{1,200})\"",
        r"(?-i:ValidationError\()(?P<kind>\w+)[^)]{0,200}\): (?P<code>unknown field)",
        rf"(?-i:failed )(?P<code>(?:pre|post)-(?:{'|'.join(_HOOK_EVENTS)})): ",
    ),
)
