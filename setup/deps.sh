#!/usr/bin/env bash
# Install the Debian packages listed in setup/packages.txt that are missing.
# Idempotent: when everything is present it prints one line (none with UET_DEPS_QUIET set) and does nothing else.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
list="$here/packages.txt"

die() { echo "setup: deps: $*" >&2; exit 1; }

[[ -r "$list" ]] || die "cannot read package list $list"
command -v dpkg-query >/dev/null 2>&1 || die "dpkg-query not found (this script needs Debian/Ubuntu)"

# Package names: strip comments and blanks.
mapfile -t pkgs < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$list")
((${#pkgs[@]} > 0)) || die "no packages listed in $list"

# One dpkg-query call for all of them; unknown packages make it exit 1, which is fine.
declare -A installed=()
while IFS=$'\t' read -r name status; do
    [[ "$status" == "install ok installed" ]] && installed["$name"]=1
done < <(dpkg-query -W -f='${Package}\t${Status}\n' "${pkgs[@]}" 2>/dev/null || true)

missing=()
for p in "${pkgs[@]}"; do
    [[ -n "${installed[$p]:-}" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
    [[ -n "${UET_DEPS_QUIET:-}" ]] || echo "setup: deps: all ${#pkgs[@]} Debian packages already installed"
    exit 0
fi

echo "setup: deps: installing ${#missing[@]} missing package(s): ${missing[*]}"

sudo_cmd=()
if ((EUID != 0)); then
    command -v sudo >/dev/null 2>&1 || die "not root and sudo not found; install as root: ${missing[*]}"
    sudo_cmd=(sudo)
fi

export DEBIAN_FRONTEND=noninteractive
# wireshark-common (pulled in by tshark) asks whether non-root users may capture; answer before it asks.
if [[ " ${missing[*]} " == *" tshark "* ]]; then
    echo "wireshark-common wireshark-common/install-setuid boolean false" \
        | "${sudo_cmd[@]}" debconf-set-selections || die "debconf-set-selections failed"
fi
"${sudo_cmd[@]}" apt-get update -q || die "apt-get update failed"
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}" \
    || die "apt-get install failed for: ${missing[*]}"

# Check again, so a package that apt silently skipped is reported.
still=()
for p in "${missing[@]}"; do
    st="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
    [[ "$st" == "install ok installed" ]] || still+=("$p")
done
((${#still[@]} == 0)) || die "still missing after apt-get install: ${still[*]}"

echo "setup: deps: installed ${missing[*]}"
