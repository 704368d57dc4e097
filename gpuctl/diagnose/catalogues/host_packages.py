"""Host package tasks: what apt, dpkg and DKMS print while `gpuctl bootstrap --phase host` (the
Ansible apt module) or a user installs the NVIDIA driver, the container toolkit and their
repositories.

The texts are apt's and dpkg's own fixed messages (apt's translation template po/apt-all.pot
lists every message apt prints; dpkg's come from its source), DKMS's (dkms.in,
dkms_autoinstaller.in), the kernel's for a module refused under Secure Boot, and the Ansible apt
module's. The researched rows of table_host.py (`host.apt-no-candidate`, `host.apt-held-broken`,
`host.apt-held-changed`, `host.dkms-build-failed`, `host.kernel-headers-missing`,
`host.secure-boot-rejected`, `host.nouveau-bound`, ...) keep their lines; an entry here that
means the same thing for another line says the same thing.
"""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue, Entry

_APT = "https://github.com/Debian/apt/blob/3.1.12/po/apt-all.pot"
_GPGV = "https://github.com/Debian/apt/blob/3.1.12/methods/gpgv.cc"
_DPKG = "https://github.com/guillemj/dpkg/blob/main/po/dpkg.pot"
_DKMS = "https://github.com/dell/dkms/blob/v3.2.2/dkms.in"
_ANSIBLE_APT = "https://github.com/ansible/ansible/blob/devel/lib/ansible/modules/apt.py"
_KERNEL_MODULE_SIG = "https://docs.kernel.org/admin-guide/module-signing.html"

_RERUN = "then `gpuctl bootstrap --phase host -i INVENTORY --limit {node}`"
_UPDATE = "`sudo apt-get update`"
_SOURCES = "`grep -rn URL /etc/apt/sources.list /etc/apt/sources.list.d/`"
# The driver's module under Secure Boot, in table_host.py's words (host.secure-boot-rejected).
_SECURE_BOOT_FIX = (
    "on {node}: `mokutil --sb-state`; enroll the DKMS signing key (`sudo mokutil --import "
    "/var/lib/dkms/mok.pub`, confirm it at the next boot), install the distribution's signed "
    "modules (Ubuntu `linux-modules-nvidia-*`), or turn Secure Boot off"
)
_REBUILD = (
    "on {node}: install the headers of the running kernel and rebuild (`sudo apt-get install "
    "linux-headers-$(uname -r) && sudo dkms autoinstall`), " + _RERUN
)

_REPOSITORY = (
    Entry(
        "release-file-missing",
        "repository has no Release file",
        "the repository {repo} is not published at that address: the source line names a "
        "distribution, release or architecture the vendor does not publish (e.g. "
        "libnvidia-container's old per-release paths, replaced by stable/deb), or the repository "
        "was moved or removed; apt ignores it, so its packages cannot be installed",
        "on {node}: " + _SOURCES + " finds the line; replace that file with the vendor's current "
        "list (NVIDIA container toolkit: "
        "https://nvidia.github.io/libnvidia-container/stable/deb/nvidia-container-toolkit.list; CUDA: "
        "the cuda-keyring package of the node's release), " + _UPDATE + ", " + _RERUN,
        "packages",
        aliases=("does not have a Release file", "no longer has a Release file"),
        source=_APT,
    ),
    Entry(
        "http-404",
        "repository file not found (404)",
        "the repository server answered 404 for a file apt asked for: for an InRelease/Release "
        "file the repository is not published at that address; for a package, the package lists "
        "are stale (the file was replaced by a newer version)",
        "on {node}: " + _UPDATE + " and retry; if the Release itself is 404, fix the source line "
        "(" + _SOURCES + "), " + _RERUN,
        "packages",
        aliases=("404",),
        source=_APT,
    ),
    Entry(
        "fetch-failed",
        "download failed",
        "apt could not download a file from a repository; the rest of the line says why "
        "(a 404, a connection or DNS failure, a proxy)",
        "on {node}: " + _UPDATE + " then retry (`apt-get install --fix-missing` for a package); "
        "check the repository address and the network or proxy (`/etc/apt/apt.conf.d/*proxy*`), " + _RERUN,
        "network",
        aliases=("Connection failed", "Undetermined Error"),
        # "Failed to fetch URL  REASON": the entries of a known REASON (404, a hash mismatch, a
        # name not resolved) explain it; these are apt's words for the others and for the summary.
        texts=("Unable to fetch some archives", "Some index files failed to download"),
        source=_APT,
    ),
    Entry(
        "dns-failure",
        "repository host not resolved",
        "{node} cannot resolve the repository's host name {host}: no DNS, or a proxy is needed "
        "and not configured for apt",
        "on {node}: `getent hosts {host}`; fix /etc/resolv.conf (or systemd-resolved), or set "
        "apt's proxy (`Acquire::http::Proxy` in /etc/apt/apt.conf.d/), " + _RERUN,
        "network",
        aliases=("Temporary failure resolving", "Could not resolve"),
        source=_APT,
    ),
    Entry(
        "connect-failed",
        "repository host unreachable",
        "{node} cannot connect to the repository host {host} (a firewall, no route out, or a "
        "proxy apt does not know about)",
        "on {node}: `curl -sI https://{host}/`; open the egress or set apt's proxy "
        "(`Acquire::http::Proxy`/`Acquire::https::Proxy` in /etc/apt/apt.conf.d/), or use a "
        "local mirror, " + _RERUN,
        "network",
        aliases=("Could not connect to",),
        # apt's TLS methods (gnutls) when the connection breaks during the handshake: the same
        # egress, proxy or IPv6-route fault
        texts=("Could not handshake:",),
        source=_APT,
    ),
    Entry(
        "clearsigned-invalid",
        "repository answer is not a signed file",
        "what apt downloaded as the repository's InRelease is not a signed file: a captive "
        "portal, a proxy or a firewall answered instead of the repository (an HTML page)",
        "on {node}: `curl -s URL/InRelease | head` shows what comes back; configure apt's proxy "
        "or allow the repository host, " + _RERUN,
        "network",
        texts=("Clearsigned file isn't valid, got",),
        source=_APT,
    ),
    Entry(
        "no-pubkey",
        "repository key not installed",
        "apt cannot verify the repository's signature because its key {key} is not installed "
        "(NVIDIA rotated the CUDA repository key to 3bf863cc in April 2022; an image or host "
        "with only the old key fails here), so the repository is disabled",
        "on {node}: install the vendor's current key: CUDA: the cuda-keyring package "
        "(`wget https://developer.download.nvidia.com/compute/cuda/repos/DISTRO/ARCH/"
        "cuda-keyring_1.1-1_all.deb && sudo dpkg -i cuda-keyring_1.1-1_all.deb`), container "
        "toolkit: `curl -fsSL https://nvidia.github.io/libnvidia-container/gpgkey | sudo gpg "
        "--dearmor -o /usr/share/keyrings/nvidia-container-toolkit-keyring.gpg`; remove the old "
        "key (`sudo apt-key del 7fa2af80`), " + _UPDATE + ", " + _RERUN + "; in the GPU Operator's "
        "driver container the key comes with the image: pull its updated tag (ClusterPolicy "
        "`driver.imagePullPolicy=Always`)",
        "packages",
        # apt names the key on the same line as its "public key is not available".
        aliases=("NO_PUBKEY",),
        source=_GPGV,
    ),
    Entry(
        "key-expired",
        "repository key expired or revoked",
        "the repository is signed with a key ({key}) that has expired or been revoked: the "
        "copy of the key on {node} is old (the vendor extended or replaced it)",
        "on {node}: download the vendor's current key again (the same commands as for a missing "
        "key: cuda-keyring, or the container toolkit's gpgkey into /usr/share/keyrings), "
        + _UPDATE
        + ", "
        + _RERUN,
        "packages",
        aliases=("EXPKEYSIG", "KEYEXPIRED", "EXPSIG", "REVKEYSIG"),
        source=_GPGV,
    ),
    Entry(
        "repository-not-signed",
        "repository not signed",
        "apt disabled a repository: its Release file is not signed, or its signature "
        "could not be verified (a missing key: look for NO_PUBKEY before this line), so nothing "
        "from it is installed",
        "on {node}: install the repository's key and reference it with `signed-by=` in the "
        "source line (see the NO_PUBKEY fix), " + _UPDATE + ", " + _RERUN,
        "packages",
        aliases=("is not signed", "is no longer signed"),
        texts=("There were unauthenticated packages and -y was used without --allow-unauthenticated",),
        source=_APT,
    ),
    Entry(
        "signed-by-conflict",
        "one repository listed with two keys",
        "the same repository is configured twice with different `signed-by` keyrings (an old "
        "and a new .list file for it, e.g. nvidia-docker.list and nvidia-container-toolkit.list), "
        "so apt refuses to read any source list",
        "on {node}: " + _SOURCES.replace("URL", "nvidia.github.io") + "; keep one file for the "
        "repository (the vendor's current one) and delete the others, " + _UPDATE + ", " + _RERUN,
        "packages",
        texts=("Conflicting values set for option Signed-By",),
        source=_APT,
    ),
    Entry(
        "malformed-source",
        "malformed source list",
        "a file under /etc/apt/sources.list.d/ has a line or stanza apt cannot parse (a "
        "download that saved an HTML page, a shell variable left unexpanded), so apt reads no "
        "source list",
        "on {node}: fix or delete the file the message names, " + _UPDATE + ", " + _RERUN,
        "packages",
        texts=("Malformed entry", "Malformed line", "Malformed stanza"),
        source=_APT,
    ),
    Entry(
        "duplicate-source",
        "repository configured twice",
        "a repository is listed in two source files (a warning: apt uses it once, but an "
        "update of one file leaves the other stale)",
        "on {node}: delete one of the two files the warning names",
        "config",
        texts=("is configured multiple times in",),
        source=_APT,
    ),
    Entry(
        "release-expired",
        "repository metadata expired",
        "the repository's Release file is past its Valid-Until date: the mirror is no longer "
        "updated, or {node}'s clock runs ahead",
        "on {node}: `timedatectl` (turn NTP on: `sudo timedatectl set-ntp true`); if the clock is "
        "right, switch to a maintained mirror, " + _RERUN,
        "config",
        texts=("is expired (invalid since",),
        source=_APT,
    ),
    Entry(
        "release-not-yet-valid",
        "clock behind the repository",
        "the repository's Release file is dated in the future for {node}: the node's clock is behind",
        "on {node}: `timedatectl`; turn NTP on (`sudo timedatectl set-ntp true`) and wait for the "
        "sync, " + _RERUN,
        "config",
        texts=("is not valid yet (invalid for another",),
        source=_APT,
    ),
    Entry(
        "sources-disagree",
        "two sources publish one version differently",
        "two configured repositories publish the same version of a package with different "
        "contents (the CUDA repository and the distribution's or a vendor's archive both "
        "carrying NVIDIA driver packages), so what apt installs depends on which it picks",
        "on {node}: `apt-cache policy PACKAGE` lists the sources; keep one source for NVIDIA "
        "packages (remove the other list, or pin one origin in /etc/apt/preferences.d/), "
        + _UPDATE
        + ", "
        + _RERUN,
        "packages",
        texts=("Sources disagree on hashes for supposely identical version",),
        source=_APT,
    ),
    Entry(
        "release-info-changed",
        "repository metadata changed",
        "the repository changed its {field} value since the last update, and apt asks for "
        "confirmation before it uses the repository again",
        "on {node}: `sudo apt-get update --allow-releaseinfo-change` after checking the change is "
        "expected, " + _RERUN,
        "packages",
        aliases=("Repository",),
        source=_APT,
    ),
    Entry(
        "corrupt-download",
        "download does not match the repository",
        "what apt downloaded does not match the repository's checksums or signature: a mirror "
        "caught mid-sync, or a caching proxy serving stale or altered files",
        "on {node}: `sudo rm -rf /var/lib/apt/lists/* && sudo apt-get update` and retry later; "
        "bypass or flush the caching proxy if it keeps happening, " + _RERUN,
        "packages",
        aliases=("BADSIG",),
        texts=("Hash Sum mismatch", "Mirror sync in progress?", "is not a Debian format archive"),
        source=_APT,
        transient=True,
    ),
)

_INSTALL = (
    Entry(
        "unable-to-locate",
        "package not known to apt",
        "apt knows no package {package}: the package lists were never updated, the repository "
        "that carries it is not configured (or not for this release), or the name is misspelt",
        "on {node}: " + _UPDATE + " then `apt-cache policy {package}`; add the repository (or fix "
        "its release path) or the package name in the inventory, " + _RERUN,
        "packages",
        aliases=("Unable to locate package",),
        source=_APT,
    ),
    Entry(
        "version-not-found",
        "pinned version not available",
        "the version {version} of {package} asked for is not in any configured repository (a "
        "version pin in the inventory that the repository does not carry for this release)",
        "on {node}: `apt-cache madison {package}` lists the versions on offer; pin one of them "
        "(e.g. `gpuctl_toolkit_version`, `gpuctl_driver_version`) or add the repository, " + _RERUN,
        "packages",
        aliases=("Version",),
        source=_APT,
    ),
    Entry(
        "nvidia-version-skew",
        "NVIDIA packages of two versions",
        "apt cannot install the NVIDIA packages together: one of them needs "
        "{dependency} ({wanted}) but the version apt would install is {installed}. The NVIDIA "
        "packages come from two sources or branches: a second repository offers another version "
        "(the distribution's archive and NVIDIA's CUDA repository, a backports suite, a PPA), or "
        "packages of the previous driver branch (or a half-finished upgrade) still hold the old "
        "version",
        "on {node}: `apt-cache policy {dependency}` shows which repository offers which version "
        "and `dpkg -l 'nvidia-*' 'libnvidia-*'` which branches are installed; remove the old "
        "branch (`sudo apt-get purge 'nvidia-*' 'libnvidia-*'`) and install one branch from one "
        "repository (remove the second source or pin it in /etc/apt/preferences.d/), then `sudo apt "
        "--fix-broken install`, " + _RERUN,
        # The driver's own packages in two versions: nearer the root than apt's summary lines
        # (unmet dependencies, held broken packages, --fix-broken advice) that it causes.
        "driver",
        aliases=("nvidia", "libnvidia", "cuda", "xserver-xorg-video-nvidia"),
        source=_APT,
    ),
    Entry(
        "unmet-dependencies",
        "dependencies cannot be satisfied",
        "apt cannot install the package with the versions its dependencies need: packages of "
        "one driver branch come from two sources (the CUDA repository and the distribution's "
        "nvidia packages), an earlier upgrade stopped half-way, a held or pinned package blocks "
        "the needed version, or a dependency does not exist for this release",
        "on {node}: `apt-cache policy PACKAGE DEPENDENCY` shows which version each source offers; "
        "install the matching versions together (or `sudo apt --fix-broken install`), remove the "
        "second source or the stale packages (`apt-mark showhold`), " + _RERUN,
        "packages",
        aliases=("is to be installed",),
        texts=(
            "The following packages have unmet dependencies",
            "but it is not going to be installed",
            "but it is not installable",
            "pkgProblemResolver::Resolve generated breaks",
        ),
        source=_APT,
    ),
    Entry(
        "broken-install",
        "packages left half-installed",
        "earlier installs left packages unpacked but not configured (unmet dependencies on "
        "{node}); apt will not install anything else until they are fixed",
        "on {node}: `sudo apt --fix-broken install` and read its error (often a failed DKMS "
        "build), fix that, " + _RERUN,
        # apt's advice after the list of unmet dependencies: the `Depends:` lines name the cause,
        # so they come first.
        "config",
        texts=(
            "Unmet dependencies. Try 'apt --fix-broken install' with no packages",
            "You might want to run 'apt --fix-broken install' to correct these",
        ),
        source=_APT,
    ),
    Entry(
        "downgrade-refused",
        "downgrade not allowed",
        "the version asked for is older than the installed one, and apt does not downgrade "
        "without --allow-downgrades",
        "on {node}: `apt-cache policy PACKAGE`; pin the installed version in the inventory, or "
        "downgrade on purpose (`sudo apt-get install --allow-downgrades PACKAGE=VERSION`), " + _RERUN,
        "packages",
        texts=("Packages were downgraded and -y was used without --allow-downgrades",),
        source=_APT,
    ),
    Entry(
        "dpkg-interrupted",
        "dpkg interrupted",
        "an earlier dpkg run on {node} was interrupted (killed, rebooted, out of space), and "
        "apt refuses to continue until it is finished",
        "on {node}: `sudo dpkg --configure -a` (read its error if it fails), " + _RERUN,
        "packages",
        texts=("dpkg was interrupted, you must manually run",),
        source=_APT,
    ),
    Entry(
        "dpkg-lock",
        "package database locked",
        "another apt or dpkg process holds the package lock on {node} (unattended-upgrades or "
        "cloud-init right after boot, another install)",
        "wait for it (`ps -C apt,apt-get,dpkg,unattended-upgr -o pid,cmd`) and retry; on nodes "
        "gpuctl manages, stop automatic upgrades during installs (`sudo systemctl stop "
        "unattended-upgrades`), " + _RERUN,
        "packages",
        texts=(
            "Could not get lock",
            "is another process using it?",
            "Failed to lock apt for exclusive operation",
        ),
        source=_APT,
        transient=True,
    ),
    Entry(
        "not-root",
        "apt run without root",
        "apt was run without root rights, so it cannot lock or change the package database",
        "run it with sudo; for `gpuctl bootstrap` check the inventory's `ansible_user` can "
        "become root (`ansible -i INVENTORY {node} -b -m ping`)",
        "config",
        aliases=("are you root?",),
        texts=("open (13: Permission denied)",),
        source=_APT,
    ),
    Entry(
        "dpkg-subprocess-failed",
        "dpkg failed",
        "dpkg failed while installing or configuring packages ({prog} exited {rc}); the lines "
        "before it name the package and why (a post-install script such as a DKMS build, a file "
        "conflict, a full disk)",
        "on {node}: read the `dpkg: error processing` lines above; fix that cause, then `sudo "
        "dpkg --configure -a`, " + _RERUN,
        "packages",
        aliases=("Sub-process",),
        source=_APT,
    ),
    Entry(
        "dpkg-configure-failed",
        "package configuration failed",
        "a package's post-install script failed on {node} (for nvidia-dkms-* / "
        "nvidia-kernel-dkms: exit status 10, the DKMS build of the kernel module failed), so it "
        "and what depends on it stay unconfigured",
        "on {node}: for a DKMS package read /var/lib/dkms/nvidia*/*/build/make.log (missing "
        "headers, or a kernel too new for the driver branch), fix it, then `sudo dpkg "
        "--configure -a`, " + _RERUN,
        "packages",
        aliases=("dpkg: error processing package",),
        texts=(
            "post-installation script subprocess returned error exit status",
            "dependency problems prevent configuration of",
        ),
        source=_DPKG,
    ),
    Entry(
        "file-conflict",
        "two packages ship one file",
        "two packages ship the same file ({path}, already owned by {owner}): packages of two "
        "driver branches, or of the CUDA repository and the distribution, are mixed",
        "on {node}: remove the package that owns it if it is from the other branch or source "
        "(`sudo apt-get purge {owner}`), keep one source for NVIDIA packages, `sudo apt "
        "--fix-broken install`, " + _RERUN,
        "packages",
        aliases=("trying to overwrite",),
        source=_DPKG,
    ),
    Entry(
        "disk-full",
        "disk full",
        "a file system of {node} is full (often / or /var, or a small /boot), so packages, "
        "kernel modules or images cannot be written",
        "on {node}: `df -h / /var /boot`; free space (`sudo apt-get clean`, `sudo apt-get "
        "autoremove --purge` for old kernels, `sudo crictl rmi --prune` for unused images), then "
        "`sudo dpkg --configure -a`, " + _RERUN,
        "packages",
        texts=("No space left on device", "You don't have enough free space in"),
        source=_APT,
        detail=True,
    ),
    Entry(
        "initramfs-failed",
        "initramfs not generated",
        "update-initramfs could not write the new initramfs of a kernel on {node}, most often "
        "because /boot is full (old kernels, or an initramfs grown by the NVIDIA modules); the "
        "package that triggered it stays unconfigured",
        "on {node}: `df -h /boot`; remove old kernels (`sudo apt-get autoremove --purge`), then "
        "`sudo update-initramfs -u -k all && sudo dpkg --configure -a`, " + _RERUN,
        "packages",
        texts=("update-initramfs: failed for", "mkinitramfs failure"),
        source="https://salsa.debian.org/kernel-team/initramfs-tools/-/blob/master/update-initramfs",
    ),
    Entry(
        "ansible-apt-update-failed",
        "apt update failed (Ansible)",
        "the Ansible apt module's `apt-get update` failed on {node}; the rest of its message "
        "carries apt's own errors, which say why",
        "read the W:/E: lines of the message (gpuctl explain names each); on {node} `sudo "
        "apt-get update` prints them in full; fix them, " + _RERUN,
        # A wrapper: apt's own error in the same message is the cause, so it comes first.
        "config",
        texts=("Failed to update apt cache", "apt cache update failed"),
        source=_ANSIBLE_APT,
    ),
)

_MODULES = (
    Entry(
        "dkms-module-build",
        "DKMS build failed",
        "DKMS failed to compile the NVIDIA module: the kernel's headers are incomplete, or the "
        "driver branch is too old for that kernel",
        "on {node}: read /var/lib/dkms/nvidia/*/build/make.log; install the kernel's headers or "
        "pin a driver branch that supports the kernel (or hold the kernel), `sudo dkms "
        "autoinstall`, " + _RERUN,
        "driver",
        aliases=("Build of",),
        texts=(
            "(bad exit status:",
            "One or more modules failed to install during autoinstall",
            # the kernel package's hook running DKMS (Debian, Ubuntu)
            "/etc/kernel/postinst.d/dkms exited with return code",
        ),
        source=_DKMS,
    ),
    Entry(
        "dkms-autoinstall-failed",
        "DKMS autoinstall failed for a kernel",
        "DKMS could not build the modules ({modules}) for kernel {kernel}: after a kernel "
        "update, the node will boot without the NVIDIA module",
        "on {node}: `dkms status`; install `linux-headers-{kernel}` and run `sudo dkms "
        "autoinstall -k {kernel}` (make.log says why it failed), or pin a driver branch that "
        "supports the kernel, " + _RERUN,
        "driver",
        aliases=("Autoinstall on", "dkms autoinstall on"),
        source=_DKMS,
    ),
    Entry(
        "dkms-module-broken",
        "DKMS module without its source",
        "DKMS has a module registered whose source tree is gone (a driver package removed or "
        "upgraded without `dkms remove`), so every autoinstall on {node} fails on it",
        "on {node}: `dkms status` names it; `sudo dkms remove MODULE/VERSION --all` (or reinstall "
        "the package that owns it), then `sudo dkms autoinstall`, " + _RERUN,
        "driver",
        texts=("is broken! Missing the source directory",),
        source=_DKMS,
    ),
    Entry(
        "dkms-headers-not-installed",
        "DKMS skipped: headers not installed",
        "DKMS skipped building the NVIDIA module because the headers of the kernel are not "
        "installed, so no module exists for that kernel",
        _REBUILD,
        "driver",
        texts=("kernel headers for this kernel do not seem to be installed",),
        source="https://github.com/dell/dkms/blob/v3.2.2/dkms_autoinstaller.in",
    ),
    Entry(
        "dkms-sign-failed",
        "DKMS could not sign the module",
        "DKMS built the module but could not sign it with its MOK key, so Secure Boot will refuse to load it",
        "on {node}: check /var/lib/dkms/mok.key and mok.pub exist and are enrolled (`sudo mokutil "
        "--test-key /var/lib/dkms/mok.pub`); " + _SECURE_BOOT_FIX,
        "driver",
        texts=("Failed to sign module",),
        source=_DKMS,
    ),
    Entry(
        "module-key-not-available",
        "unsigned module refused (Secure Boot)",
        "the kernel refused to load the module: Secure Boot (kernel lockdown) is on and the "
        "module is unsigned, or signed with a key the firmware does not trust (a DKMS build whose "
        "signing key was never enrolled with MOK)",
        _SECURE_BOOT_FIX,
        "driver",
        texts=("Required key not available", "unsigned module loading is restricted"),
        source=_KERNEL_MODULE_SIG,
    ),
)

CATALOGUE = Catalogue(
    id="apt",
    title="host package tasks (apt, dpkg, DKMS)",
    source=_APT,
    version="apt 3.1.12, dpkg 1.19.8, dkms 3.2.2, ansible-core apt module (devel)",
    entries=_REPOSITORY + _INSTALL + _MODULES,
    # The GPU Operator's driver container runs apt too (its kernel headers, its repositories' keys).
    applies_to=("host", "operator-driver"),
    # Each reader starts with a case-sensitive literal, apt's, dpkg's or DKMS's own spelling, so
    # that the regex engine can skip to it instead of trying the pattern at every character.
    readers=(
        r"(?-i:The repository ')(?P<repo>[^']{1,300})' (?P<code>does not have a Release file|"
        r"no longer has a Release file|is not signed|is no longer signed)",
        # apt puts two spaces between the status code and its text; older apt prints no [IP: ].
        r"(?P<code>(?-i:404))  Not Found(?: \[IP: (?P<ip>[^\]]{1,60})\])?",
        r"(?P<code>(?-i:Temporary failure resolving)) '(?P<host>[^']{1,200})'",
        r"(?P<code>(?-i:Could not resolve)) '(?P<host>[^']{1,200})'",
        r"(?P<code>(?-i:Could not connect to)) (?P<host>[^\s:]{1,200}):",
        r"(?-i:Failed to fetch )\S+\s+(?P<code>Connection failed|Undetermined Error)",
        # gpgv's status words, as apt quotes them.
        *(
            rf"(?P<code>(?-i:{status})) (?P<key>[0-9A-F]{{8,40}})\b"
            for status in ("NO_PUBKEY", "EXPKEYSIG", "KEYEXPIRED", "EXPSIG", "REVKEYSIG", "BADSIG")
        ),
        r"(?P<code>(?-i:Repository)) '[^']{1,300}' changed its '(?P<field>[^']{1,40})' value",
        r"(?P<code>(?-i:Unable to locate package)) (?P<package>[^\s\"',]+)",
        r"(?P<code>(?-i:Version)) '(?P<version>[^']{1,100})' for '(?P<package>[^']{1,100})' was not found",
        # A dependency of the NVIDIA driver (its own packages, CUDA's meta-packages) wanted at one
        # version while apt would install another: the specific reading comes first.
        r"(?-i:Depends: )(?P<dependency>(?P<code>libnvidia|nvidia|cuda|xserver-xorg-video-nvidia)"
        r"[\w.+:-]{0,80}) \((?P<wanted>[^)]{1,80})\) but (?P<installed>\S{1,80}) is to be installed",
        r"(?-i:Depends: )\S+ \([^)]{1,80}\) but \S{1,80} (?P<code>is to be installed)",
        r"(?P<code>(?-i:Sub-process)) (?P<prog>\S+) returned an error code \((?P<rc>\d+)\)",
        r"(?P<code>(?-i:dpkg: error processing package)) \S+",
        r"(?P<code>(?-i:trying to overwrite)) '(?P<path>[^']{1,300})', which is also in package "
        r"(?P<owner>[^\s\"',]+)",
        r"(?P<code>(?-i:Autoinstall on)) (?P<kernel>\S+) failed for module\(s\) (?P<modules>[^.\n]{1,200})",
        # dkms 3.1's wording: `dkms autoinstall on KERNEL/ARCH failed for MODULE(STATUS)`.
        r"(?P<code>(?-i:dkms autoinstall on)) (?P<kernel>[^/\s]+)/\S+ failed for (?P<modules>[^\n]{1,200})",
        r"(?-i:Error!)\s+(?P<code>Build of) \S+ failed for:",
        r"(?P<code>(?-i:are you root\?))(?<=\), are you root\?)",
    ),
)
