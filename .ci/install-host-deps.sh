#!/usr/bin/env bash
# Host packages the real SSH test nodes (tests/hosts/nodes.py) need on a Debian 12 machine:
# debootstrap builds the cached node rootfs, systemd-nspawn boots the nodes, iproute2 makes their
# network namespaces, dpkg-dev and gnupg build and sign the stand-in apt mirror, openssh-client
# generates keys and reaches the nodes, containerd gives the playbook render tests the real
# `containerd config dump` to validate generated configs with, chromium renders verify's HTML
# page headless (tests/cluster/test_verify_reports.py).
# Idempotent and non-interactive: installs only what is missing.
set -euo pipefail

packages=(
  debootstrap
  debian-archive-keyring
  systemd-container
  openssh-client
  iproute2
  util-linux
  mount
  dpkg-dev
  gnupg
  containerd
  chromium
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-host-deps: all present (${packages[*]})"
  exit 0
fi

as_root=()
if ((EUID != 0)); then
  as_root=(sudo -n)
fi
echo "install-host-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q
"${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
