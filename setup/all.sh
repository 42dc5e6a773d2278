#!/usr/bin/env bash
# Idempotent set-up: Debian packages, then libfabric >= 2.0 (+ fabtests), then the suite's own user.
# Ends with one summary line.  A second run does nothing and takes about a second.
# UET_WITHOUT_LIBFABRIC=1 leaves the suite's own libfabric out: a run whose every side runs with another
# (./uet run --libfabric PREFIX) builds its case binaries against that one and needs none of its own.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

die() { echo "setup: ERROR: $*" >&2; exit 1; }

bash "$here/deps.sh" || die "setup/deps.sh failed"
if [[ "${UET_WITHOUT_LIBFABRIC:-}" == 1 ]]; then
    bash "$here/impostor-user.sh" || die "setup/impostor-user.sh failed"
    echo "setup: ok: the suite's own libfabric left out (every side of this run has its own)"
    exit 0
fi
bash "$here/libfabric.sh" || die "setup/libfabric.sh failed"
bash "$here/impostor-user.sh" || die "setup/impostor-user.sh failed"

# shellcheck source=setup/env.sh
source "$here/env.sh"
[[ "$UET_LIBFABRIC_SOURCE" != none ]] || die "no libfabric in use after setup/libfabric.sh"
version="$(pkg-config --modversion libfabric)" || die "pkg-config cannot find libfabric"
command -v fi_info >/dev/null 2>&1 || die "fi_info not found on PATH"
fi_out="$(fi_info --version 2>&1)" || die "fi_info --version failed"
fi_line="${fi_out%%$'\n'*}"
prefix_shown="$UET_LIBFABRIC_PREFIX"
[[ "$UET_LIBFABRIC_SOURCE" != local ]] || prefix_shown="deps/libfabric"
echo "setup: ok: libfabric $version ($UET_LIBFABRIC_SOURCE, prefix $prefix_shown); fi_info --version: $fi_line"
