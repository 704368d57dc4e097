"""Host package tasks on RPM hosts (RHEL, Rocky, Alma, Amazon Linux, Fedora): what dnf (and yum,
dnf's front end on RHEL 8 and later) prints while the NVIDIA driver, CUDA and the container
toolkit are installed from NVIDIA's repositories.

The texts are dnf's own (its translation template po/dnf.pot), libdnf's and libsolv's dependency
problems (`Problem: package A requires B, but none of the providers can be installed`, `- package
B is filtered out by modular filtering`, `nothing provides C needed by A`), librepo's download
errors (`Status code: 404 for URL`, `Curl error (35): ...`) and the messages of NVIDIA's dnf plugin
(dnf-plugin-nvidia), which hides kernels for which NVIDIA has published no precompiled driver
module. A dependency problem lists its cause on the lines after the `Problem:` line, so those
(filtering, missing modules) rank before the summary.
"""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue, Entry

_DNF = "https://github.com/rpm-software-management/dnf/blob/4.23.0/po/dnf.pot"
_LIBDNF = "https://github.com/rpm-software-management/libdnf/blob/0.74.0/libdnf/goal/Goal.cpp"
_LIBREPO = "https://github.com/rpm-software-management/librepo/blob/1.19.0/librepo/downloader.c"
_PLUGIN = "https://github.com/NVIDIA/yum-packaging-nvidia-plugin"
_STREAMS = (
    "https://developer.nvidia.com/blog/streamlining-nvidia-driver-deployment-on-rhel-8-with-"
    "modularity-streams/"
)

_RERUN = "then `gpuctl bootstrap --phase host -i INVENTORY --limit {node}`"
_CUDA_REPO = (
    "`sudo dnf config-manager --add-repo https://developer.download.nvidia.com/compute/cuda/"
    "repos/rhel9/x86_64/cuda-rhel9.repo` (the path names the release and architecture: rhel8, "
    "rhel9, rhel10, amzn2023; x86_64, sbsa)"
)
_MODULE_RESET = (
    "on {node}: `dnf module list nvidia-driver` shows the enabled stream ([e]); `sudo dnf module "
    "reset nvidia-driver`, then either enable the stream of the branch you want (`sudo dnf module "
    "enable nvidia-driver:580-open`) or, on repositories without streams (RHEL 10, Amazon Linux "
    "2023, recent CUDA repositories), add the repository of the host's release with "
    + _CUDA_REPO
    + ", `sudo dnf clean all` and install the packages directly (`sudo dnf install nvidia-open` "
    "or `cuda-drivers`), " + _RERUN
)

_ENTRIES = (
    Entry(
        "precompiled-kmod-missing",
        "no precompiled driver module for the kernel",
        "NVIDIA publishes no precompiled kernel module (kmod-nvidia) of this driver version for the "
        "kernel: NVIDIA's dnf plugin hides such kernels (and their kernel-core packages) so that an "
        "update does not boot a kernel without a driver, or the driver packages cannot be "
        "installed for the running kernel (a new minor release's kernel, an EUS kernel NVIDIA does "
        "not build for)",
        "on {node}: `dnf --showduplicates list 'kmod-nvidia*'` lists the kernels with precompiled "
        "modules; stay on (or boot) such a kernel until NVIDIA publishes the module, or switch to "
        "the DKMS flavour, which builds the module for any kernel (`sudo dnf module reset "
        "nvidia-driver && sudo dnf module install nvidia-driver:BRANCH-dkms`, with "
        "`kernel-devel-$(uname -r)` installed), " + _RERUN,
        "packages",
        texts=(
            # dnf-plugin-nvidia 2.x; 1.x: `NOTE: Skipping kernel installation since no kernel
            # module package kmod-nvidia-... for kernel version ... could be found`.
            "no precompiled modules available for version",
            "Skipping kernel installation since no kernel module package",
            "is filtered out by exclude filtering",
        ),
        source=_PLUGIN,
    ),
    Entry(
        "modular-filtering",
        "package hidden by an enabled module stream",
        "dnf hides the repository's package because a module stream of the same name is enabled "
        "(modular filtering): an nvidia-driver stream enabled earlier (another branch, or the "
        "distribution's own) shadows the packages the command asks for, or the repository ships "
        "plain packages while a stream is still enabled",
        _MODULE_RESET,
        "packages",
        texts=(
            "is filtered out by modular filtering",
            "All matches were filtered out by modular filtering for argument",
        ),
        source=_DNF,
    ),
    Entry(
        "module-stream-switch",
        "another stream of the module is enabled",
        "the command asks for a stream of a module (nvidia-driver:580-open) while another stream of "
        "it is enabled, and dnf does not switch enabled streams by itself",
        _MODULE_RESET,
        "packages",
        texts=("It is not possible to switch enabled streams of a module unless",),
        source=_DNF,
    ),
    Entry(
        "module-not-provided",
        "module stream not in the repositories",
        "the module stream the command names (nvidia-driver:latest-dkms) is not in any enabled "
        "repository: the CUDA repository is not configured, or it no longer publishes that stream "
        "(NVIDIA retired latest-dkms; the repositories of RHEL 10 and Amazon Linux 2023 have no "
        "streams at all)",
        "on {node}: `dnf module list nvidia-driver` lists the streams the repositories offer (none: "
        "install `nvidia-open` or `cuda-drivers` as plain packages); add the repository with "
        + _CUDA_REPO
        + ", "
        + _RERUN,
        "packages",
        texts=("nothing provides requested module(", "broken groups or modules:"),
        source=_STREAMS,
    ),
    Entry(
        "nothing-provides",
        "a dependency is in no enabled repository",
        "a package needs {need}, which no enabled repository provides: typically dkms (from EPEL) "
        "for the DKMS driver packages, kernel-devel or kernel-headers of the running kernel (the "
        "distribution's repository has moved on to a newer kernel), or a library of a repository "
        "that is not enabled (CodeReady Builder/CRB)",
        "on {node}: `dnf provides '{need}'` (or `dnf repolist`) shows which repository carries it; "
        "enable it (EPEL: `sudo dnf install epel-release` on Rocky/Alma, the EPEL release RPM on "
        "RHEL; `sudo dnf config-manager --set-enabled crb`), or install the kernel-devel of the "
        "running kernel (`sudo dnf install kernel-devel-$(uname -r)`), " + _RERUN,
        "packages",
        aliases=("nothing provides",),
        source=_LIBDNF,
    ),
    Entry(
        "no-match",
        "package in no enabled repository",
        "dnf finds no package {package} in the enabled repositories: the NVIDIA repository is not "
        "configured (or not for this release and architecture), the name is another flavour's "
        "(`nvidia-driver` of a stream, `nvidia-open`, `cuda-drivers`), or a module stream hides it "
        "(a line `All matches were filtered out by modular filtering` before this one)",
        "on {node}: `dnf repolist` and `dnf list --showduplicates '{package}*'`; add the "
        "repository with " + _CUDA_REPO + " (container toolkit: `https://nvidia.github.io/"
        "libnvidia-container/stable/rpm/nvidia-container-toolkit.repo`), " + _RERUN,
        "packages",
        aliases=("Unable to find a match", "No match for argument"),
        source=_DNF,
    ),
    Entry(
        "providers-not-installable",
        "a dependency cannot be installed",
        "dnf cannot install a dependency of the package at a version it needs (`requires X, but "
        "none of the providers can be installed`): the lines after it say why (a module stream "
        "hides it, NVIDIA's plugin excludes it for the kernel, or it conflicts with an installed "
        "package of another driver branch or repository: RPM Fusion, negativo17 or EPEL packages "
        "next to NVIDIA's)",
        "on {node}: read the `- package ... is filtered out by ...` and `- cannot install ...` "
        "lines under the `Problem:` line; `dnf list --installed '*nvidia*'` shows packages of "
        "another branch or repository to remove (`sudo dnf remove '*nvidia*'` before switching), "
        "`sudo dnf install PACKAGE --best --allowerasing` shows the full conflict, " + _RERUN,
        "config",
        texts=("but none of the providers can be installed",),
        source=_LIBDNF,
    ),
    Entry(
        "http-404",
        "repository file not found (404)",
        "the repository server answered 404 for {url}: for repodata/repomd.xml the baseurl names "
        "no repository (a typo, a path for another release or architecture, the old per-release "
        "path of the container toolkit's repository, a distribution release the vendor no longer "
        "publishes); for another repodata file, the mirror served metadata mid-sync",
        "on {node}: `grep -rn baseurl /etc/yum.repos.d/` and open the URL up to repodata/ in a "
        "browser or `curl -I`; use the repository file the vendor publishes (CUDA: "
        + _CUDA_REPO
        + "; toolkit: `curl -s -L https://nvidia.github.io/libnvidia-container/stable/rpm/"
        "nvidia-container-toolkit.repo | sudo tee /etc/yum.repos.d/nvidia-container-toolkit.repo`); "
        "a metadata file other than repomd.xml: `sudo dnf clean metadata` and retry later, " + _RERUN,
        "packages",
        aliases=("404",),
        source=_LIBREPO,
    ),
    Entry(
        "http-403",
        "repository refused access (403)",
        "the repository server refused {url} (403): a Red Hat CDN repository on a host that is not "
        "registered or has no subscription for it (cdn.redhat.com), or a proxy that forbids the "
        "address",
        "on {node}: `sudo subscription-manager status` (register with `sudo subscription-manager "
        "register` and attach the subscription, or disable the RHEL repositories in an image "
        "build that has none), check the proxy's rules for the host, " + _RERUN,
        "packages",
        aliases=("403",),
        source=_LIBREPO,
    ),
    Entry(
        "curl-error",
        "repository download failed (network)",
        "dnf could not download from the repository at all (curl error {curl}: {what}): no route "
        "or DNS for the host, a TLS failure (a proxy or firewall intercepting HTTPS, an old CA "
        "bundle), or a proxy that is not configured for dnf",
        "on {node}: `curl -v URL` with the same proxy settings; set `proxy=` in /etc/dnf/dnf.conf "
        "where a proxy is needed, update the CA bundle (`sudo dnf update ca-certificates`), " + _RERUN,
        "packages",
        aliases=("Curl error",),
        source=_LIBREPO,
    ),
    Entry(
        "metadata-failed",
        "repository metadata could not be downloaded",
        "dnf could not download a repository's metadata (repomd.xml), so it stops: the lines "
        "before it (`Status code: ...`, `Curl error ...`) say why",
        "on {node}: read the `Errors during downloading metadata for repository` lines above it; "
        "`grep -rn baseurl /etc/yum.repos.d/` for the URL, or skip the repository meanwhile "
        "(`--disablerepo=NAME`), " + _RERUN,
        "config",
        texts=("Failed to download metadata for repo",),
        source=_DNF,
    ),
    # dnf/yum's signature checks: `Public key for %s is not installed`, `GPG check FAILED`, and
    # yum's `repomd.xml signature could not be verified for REPO` (repo_gpgcheck=1).
    Entry(
        "gpg-check-failed",
        "package or repository signature not verified",
        "dnf/yum could not verify a package's or repository's signature: the repository's signing "
        "key is not imported into rpm (`Public key for PACKAGE.rpm is not installed`), it was "
        "rotated or has expired (NVIDIA rotated the CUDA repository key in April 2022 and renewed "
        "the libnvidia-container key in 2020), or the .repo file points `gpgkey=` at an old key",
        "on {node}: import the repository's current key and retry: `sudo rpm --import "
        "https://developer.download.nvidia.com/compute/cuda/repos/rhel9/x86_64/D42D0685.pub` for "
        "the CUDA repository (the .repo file's `gpgkey=` for others; the container toolkit: "
        "`sudo rpm --import https://nvidia.github.io/libnvidia-container/gpgkey`); remove a "
        "rotated key first (`rpm -qa gpg-pubkey*`, `sudo rpm -e gpg-pubkey-KEYID`) and run `sudo "
        "dnf clean all`; never set gpgcheck=0, " + _RERUN,
        "config",
        texts=("GPG check FAILED", "Public key for ", "repomd.xml signature could not be verified"),
        source=_DNF,
    ),
)

CATALOGUE = Catalogue(
    id="dnf",
    title="host package tasks on RPM hosts (dnf, yum, NVIDIA's dnf plugin)",
    source=_DNF,
    version="dnf 4.23.0, libdnf 0.74.0, librepo 1.19.0, dnf-plugin-nvidia 2.0",
    entries=_ENTRIES,
    applies_to=("host", "operator-driver"),
    # Each reader starts with dnf's, libsolv's or librepo's case-sensitive spelling.
    readers=(
        r"(?P<code>(?-i:nothing provides)) (?P<need>\S{1,200}) needed by \S",
        r"(?P<code>(?-i:Unable to find a match)): (?P<package>[^\s\"',]+)",
        r"(?P<code>(?-i:No match for argument)): (?P<package>[^\s\"',]+)",
        r"(?-i:Status code: )(?P<code>40[34]) for (?P<url>\S{1,400})",
        r"(?P<code>(?-i:Curl error)) \((?P<curl>\d+)\): (?P<what>[^\n]{1,80}?) for ",
    ),
)
