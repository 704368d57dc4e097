"""The one read-only shell script preflight runs on each host, and the splitter for its output.

Every probe of a host runs in ONE remote command (one SSH channel, one round trip); each section
starts with a marker line so the Python side parses them independently (gpuctl.hosts.probes).
"""

from __future__ import annotations

MARKER = "@@gpuctl-probe@@"

# POSIX sh, read-only, never fails as a whole: every section prints what it found or nothing.
PROBE_SCRIPT = r"""
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
LC_ALL=C; export LC_ALL
s() { printf '\n@@gpuctl-probe@@ %s\n' "$1"; }
t() { if command -v timeout >/dev/null 2>&1; then timeout 20 "$@"; else "$@"; fi; }
s id; id -u; id -un
s os-release; cat /etc/os-release 2>/dev/null
s kernel; uname -r
s headers; k=$(uname -r)
for d in "/usr/src/linux-headers-$k" "/lib/modules/$k/build" "/usr/src/kernels/$k"; do
  [ -e "$d" ] && echo "installed $d"
done
if command -v apt-cache >/dev/null 2>&1; then
  echo "manager apt"; t apt-cache policy "linux-headers-$k" 2>/dev/null
elif command -v dnf >/dev/null 2>&1; then
  echo "manager dnf"
  t dnf -q -C list --available "kernel-devel-$k" 2>/dev/null | grep '^kernel-devel' | sed 's/^/available /'
fi
s pci
for d in /sys/bus/pci/devices/*; do
  [ -r "$d/vendor" ] || continue
  v=; dev=; c=; read -r v < "$d/vendor"
  [ "$v" = 0x10de ] || continue
  read -r dev 2>/dev/null < "$d/device"; read -r c 2>/dev/null < "$d/class"
  echo "${d##*/} $v $dev $c"
done
s modules; grep -E '^(nouveau|nvidia[a-z_]*) ' /proc/modules 2>/dev/null | cut -d' ' -f1
s secure-boot
if command -v mokutil >/dev/null 2>&1; then mokutil --sb-state 2>&1
elif [ -d /sys/firmware/efi ]; then
  f=$(ls /sys/firmware/efi/efivars/SecureBoot-* 2>/dev/null | head -n 1)
  if [ -n "$f" ] && [ -r "$f" ]; then echo "efivar $(od -An -t u1 "$f" 2>/dev/null | tr -s ' ')"
  else echo "efi unknown"; fi
else echo "bios"; fi
s driver; cat /proc/driver/nvidia/version 2>/dev/null
s nvidia-smi
if command -v nvidia-smi >/dev/null 2>&1; then
  t nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1; echo "rc=$?"
else echo "absent"; fi
s dkms
if command -v dkms >/dev/null 2>&1; then
  t dkms status 2>&1; [ -e "/lib/modules/$(uname -r)/build" ] && echo "headers present"
fi
s fabricmanager
if command -v systemctl >/dev/null 2>&1; then
  t systemctl show -p LoadState -p ActiveState -p UnitFileState nvidia-fabricmanager 2>/dev/null
fi
if command -v dpkg-query >/dev/null 2>&1; then
  dpkg-query -W -f '${db:Status-Abbrev} ${Package} ${Version}\n' 'nvidia-fabricmanager*' 2>/dev/null |
    awk '$1 ~ /^.i/ && $2 !~ /-dev/ {print "package", $2, $3}'
elif command -v rpm >/dev/null 2>&1; then
  rpm -q --qf 'package %{NAME} %{VERSION}-%{RELEASE}\n' nvidia-fabricmanager 2>/dev/null | grep '^package'
fi
s runtimes
for b in containerd docker crio k3s rke2; do
  command -v "$b" >/dev/null 2>&1 && echo "$b $(t "$b" --version 2>&1 | head -n 1)"
done
s containerd-config
for f in /etc/containerd/config.toml /var/lib/rancher/k3s/agent/etc/containerd/config.toml \
         /var/lib/rancher/rke2/agent/etc/containerd/config.toml; do
  if [ -r "$f" ]; then echo "file $f"; grep -E '^[[:space:]]*version[[:space:]]*=' "$f" | head -n 1
  elif [ -e "$f" ]; then echo "unreadable $f"; fi
done
s disk; df -Pk / /var 2>/dev/null
s sudo; sudo -n true 2>&1; echo "rc=$?"
s end
"""


def split_sections(output: str) -> dict[str, str]:
    """Section name → its text (stripped), from the probe script's stdout."""
    sections: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    for line in output.splitlines():
        if line.startswith(MARKER + " "):
            if current is not None:
                sections[current] = "\n".join(lines).strip()
            current, lines = line[len(MARKER) + 1 :].strip(), []
        elif current is not None:
            lines.append(line)
    if current is not None:
        sections[current] = "\n".join(lines).strip()
    return sections
