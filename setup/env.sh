# shellcheck shell=bash
# Environment for building and running the UET suite.  SOURCE it, do not run it:
#     source setup/env.sh
# It builds nothing and prints nothing.  Exports:
#   UET_ROOT               repository root
#   UET_PYTHON             /usr/bin/python3 (Debian's, which sees python3-scapy; the
#                          python3 first on PATH may be a pyenv one that does not)
#   UET_LIBFABRIC_SOURCE   system | local | none
#   UET_LIBFABRIC_PREFIX   prefix of the libfabric in use (empty when none)
#   PKG_CONFIG_PATH        prepended with deps/libfabric/lib/pkgconfig for the local build
#   PATH                   prepended with the prefix's bin (fi_info, fi_pingpong, fabtests)
#                          unless that directory is already on PATH
# LD_LIBRARY_PATH is left alone: the local libfabric's programs carry an rpath to
# deps/libfabric/lib, and CMake adds one for targets linked to the full library path
# (pkg_check_modules IMPORTED_TARGET).  A program linked by hand with
# `pkg-config --libs libfabric` needs -Wl,-rpath,$UET_LIBFABRIC_PREFIX/lib (or
# LD_LIBRARY_PATH) to run against the local build.
# UET_LIBFABRIC=auto|local|system chooses as setup/libfabric.sh does (default auto:
# a system libfabric >= 2.0 first, else the local build).

_uet_env_main() {
    local here root local_prefix entry filtered="" mode="${UET_LIBFABRIC:-auto}"
    here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)" || return 1
    root="$(cd "$here/.." && pwd)" || return 1
    local_prefix="$root/deps/libfabric"

    export UET_ROOT="$root"
    export UET_PYTHON=/usr/bin/python3

    # PKG_CONFIG_PATH without the local prefix, so sourcing twice changes nothing.
    local IFS=:
    for entry in ${PKG_CONFIG_PATH:-}; do
        [[ -z "$entry" || "$entry" == "$local_prefix/"* ]] && continue
        filtered="${filtered:+$filtered:}$entry"
    done
    unset IFS

    UET_LIBFABRIC_SOURCE=none
    UET_LIBFABRIC_PREFIX=""
    if [[ "$mode" != local ]] && command -v pkg-config >/dev/null 2>&1 \
        && PKG_CONFIG_PATH="$filtered" pkg-config --atleast-version=2.0 libfabric 2>/dev/null; then
        UET_LIBFABRIC_SOURCE=system
        UET_LIBFABRIC_PREFIX="$(PKG_CONFIG_PATH="$filtered" pkg-config --variable=prefix libfabric 2>/dev/null)"
    elif [[ "$mode" != system && -f "$local_prefix/.uet-libfabric-stamp" \
            && -f "$local_prefix/lib/pkgconfig/libfabric.pc" ]]; then
        UET_LIBFABRIC_SOURCE=local
        UET_LIBFABRIC_PREFIX="$local_prefix"
        filtered="$local_prefix/lib/pkgconfig${filtered:+:$filtered}"
    fi
    export UET_LIBFABRIC_SOURCE UET_LIBFABRIC_PREFIX

    if [[ -n "$filtered" ]]; then
        export PKG_CONFIG_PATH="$filtered"
    else
        unset PKG_CONFIG_PATH
    fi

    if [[ -n "$UET_LIBFABRIC_PREFIX" && -d "$UET_LIBFABRIC_PREFIX/bin" ]]; then
        case ":${PATH:-}:" in
            *":$UET_LIBFABRIC_PREFIX/bin:"*) ;;
            *) export PATH="$UET_LIBFABRIC_PREFIX/bin${PATH:+:$PATH}" ;;
        esac
    fi
    return 0
}

_uet_env_main
unset -f _uet_env_main
