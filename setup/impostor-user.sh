#!/usr/bin/env bash
# The suite's own system user, uet-impostor: the impostor entity of the entity cases runs as it
# (cases/manifests/softuet.yaml, privileged_entity.impostor.user). A user no other process runs as: as the
# shared `nobody`, any other nobody process could take the impostor's socket or end it, and the provider
# would be blamed for the failure. The suite's users are named uet-*: the containers placement's image
# takes the host's uet-* entries (containers/image.py), so a case finds the user by name there too.
# Idempotent: nothing to do when the user exists.
set -euo pipefail

readonly user=uet-impostor

die() { echo "setup: impostor user: $*" >&2; exit 1; }

getent passwd "$user" >/dev/null && exit 0

sudo_cmd=()
if ((EUID != 0)); then
    command -v sudo >/dev/null 2>&1 || die "not root and sudo not found: make the user as root: useradd --system $user"
    sudo_cmd=(sudo)
fi
useradd=$(command -v useradd || echo /usr/sbin/useradd)
[[ -x "$useradd" ]] || die "no useradd (Debian's package passwd)"
"${sudo_cmd[@]}" "$useradd" --system --user-group --no-create-home --home-dir /nonexistent \
    --shell /usr/sbin/nologin --comment "UET conformance suite, impostor entity" "$user" \
    || die "useradd --system $user failed"
echo "setup: made the system user $user (the impostor entity of the entity cases runs as it)"
