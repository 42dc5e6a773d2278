#!/usr/bin/env bash
# Make libfabric >= 2.0 available through pkg-config.
#
#  1. A system libfabric >= 2.0 (pkg-config) is used as it is.
#  2. Else a finished project-local build in deps/libfabric/ (libfabric 2.1.0 +
#     fabtests, marked by a stamp file written last) is reused.
#  3. Else Debian's libfabric 2.1.0 orig tarball is fetched from the trixie suite of
#     the Debian mirror this machine already uses (temporary apt configuration; the
#     machine's own apt configuration is not touched), its sha256 is checked, and
#     libfabric (providers tcp, udp, shm, rxm, rxd, sockets only) and fabtests are
#     built and installed into deps/libfabric/.
#
# Installed programs carry an rpath to deps/libfabric/lib, so fi_info, fi_pingpong and
# the fabtests run without LD_LIBRARY_PATH.  Source setup/env.sh to get PATH and
# PKG_CONFIG_PATH.
#
# Environment knobs:
#   UET_LIBFABRIC=auto|local|system   auto (default): system if >= 2.0, else local;
#                                     local: ignore any system libfabric;
#                                     system: require a system libfabric >= 2.0.
#   UET_JOBS=N                        parallel make jobs (default: nproc).
#   UET_LIBFABRIC_INTO=DIR            build the same libfabric + fabtests into DIR instead: a second
#                                     installation (to try ./uet run --libfabric DIR). Its lock, logs and
#                                     work folder go to DIR.setup/; nothing under deps/ is written (the
#                                     tarball is copied from deps/src when it is there).
set -euo pipefail

readonly LF_VERSION="2.1.0"
readonly LF_MIN_SYSTEM="2.0"
readonly LF_SUITE="trixie"
readonly LF_ORIG_SHA256="1a66369772d5bb151737214af1c478993e969cf298e8f9ed369e7a2ab8d8c6df"
# Binaries that must exist in a finished local install (fi_info/fi_pingpong come
# with libfabric itself, the others with fabtests).
readonly LF_REQUIRED_BINS=(fi_info fi_pingpong fi_rdm fi_rdm_tagged_pingpong fi_rma_bw
                           fi_rdm_atomic fi_unexpected_msg fi_dgram)
readonly LF_PROVIDERS="tcp udp shm rxm rxd sockets"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
# Resolved: a checkout whose deps/ is a link to another's shares that build, and the stamp must name it the same.
deps="$(realpath -m "$root/deps")"
prefix="$deps/libfabric"
state="$deps"     # the lock, the logs, the tarball cache and the work folders
shown="deps/libfabric"
jobs="${UET_JOBS:-$(nproc 2>/dev/null || echo 2)}"
mode="${UET_LIBFABRIC:-auto}"
if [[ -n "${UET_LIBFABRIC_INTO:-}" ]]; then
    prefix="$(realpath -m "$UET_LIBFABRIC_INTO")"
    state="$prefix.setup"
    shown="$prefix"
    mode=local
fi
stamp="$prefix/.uet-libfabric-stamp"
srccache="$state/src"
logdir="$state/logs"

say() { echo "setup: libfabric: $*"; }
die() { echo "setup: libfabric: ERROR: $*" >&2; exit 1; }

case "$mode" in auto|local|system) ;; *) die "UET_LIBFABRIC must be auto, local or system (got '$mode')";; esac
command -v pkg-config >/dev/null 2>&1 || die "pkg-config not found (run setup/deps.sh first)"

# Configure flags.  Every provider of libfabric 2.1.0 is named explicitly
# (from ./configure --help); --enable-only makes any provider not named default to "no".
readonly LF_CONFIGURE_FLAGS=(
    --disable-static --disable-dependency-tracking --enable-silent-rules
    --enable-only
    --enable-tcp=yes --enable-udp=yes --enable-shm=yes
    --enable-rxm=yes --enable-rxd=yes --enable-sockets=yes
    --disable-verbs --disable-efa --disable-psm2 --disable-psm3 --disable-opx
    --disable-usnic --disable-cxi --disable-lpp --disable-ucx --disable-mrail
    --disable-sm2 --disable-lnx --disable-perf --disable-trace --disable-profile
    --disable-hook_debug --disable-hook_hmem --disable-dmabuf_peer_mem
    --disable-xpmem
    # io_uring (tcp) only if liburing-dev happened to be installed: keep builds
    # identical on every machine instead.
    --with-uring=no
)
readonly FT_CONFIGURE_FLAGS=(
    --disable-dependency-tracking --enable-silent-rules
    # provider-specific test sets for providers we do not build
    --disable-efa --disable-lpp
)

# The stamp records what was built; a change of version, tarball or flags rebuilds.
expected_stamp() {
    printf 'version=%s\nsha256=%s\nprefix=%s\nlibfabric_flags=%s\nfabtests_flags=%s\n' \
        "$LF_VERSION" "$LF_ORIG_SHA256" "$prefix" "${LF_CONFIGURE_FLAGS[*]}" "${FT_CONFIGURE_FLAGS[*]}"
}

# PKG_CONFIG_PATH without our local prefix (the caller may have sourced env.sh).
system_pkg_config_path() {
    local out="" entry
    local IFS=:
    for entry in ${PKG_CONFIG_PATH:-}; do
        [[ -z "$entry" || "$entry" == "$prefix/"* ]] && continue
        out="${out:+$out:}$entry"
    done
    printf '%s' "$out"
}

system_libfabric_ok() {
    PKG_CONFIG_PATH="$(system_pkg_config_path)" pkg-config --atleast-version="$LF_MIN_SYSTEM" libfabric 2>/dev/null
}

local_install_ok() {
    local pc="$prefix/lib/pkgconfig/libfabric.pc" b
    [[ -f "$stamp" && -f "$pc" ]] || return 1
    [[ "$(cat "$stamp")" == "$(expected_stamp)" ]] || return 1
    [[ "$(pkg-config --modversion "$pc" 2>/dev/null)" == "$LF_VERSION" ]] || return 1
    [[ "$(pkg-config --variable=prefix "$pc" 2>/dev/null)" == "$prefix" ]] || return 1
    for b in "${LF_REQUIRED_BINS[@]}"; do
        [[ -x "$prefix/bin/$b" ]] || return 1
    done
}

# ---------------------------------------------------------------- 1. system
if [[ "$mode" != local ]] && system_libfabric_ok; then
    v="$(PKG_CONFIG_PATH="$(system_pkg_config_path)" pkg-config --modversion libfabric)"
    p="$(PKG_CONFIG_PATH="$(system_pkg_config_path)" pkg-config --variable=prefix libfabric)"
    say "using system libfabric $v (prefix $p)"
    missing=()
    for b in "${LF_REQUIRED_BINS[@]}"; do
        [[ -x "$p/bin/$b" ]] || command -v "$b" >/dev/null 2>&1 || missing+=("$b")
    done
    ((${#missing[@]} == 0)) || say "warning: not found with the system libfabric: ${missing[*]} (set UET_LIBFABRIC=local to build libfabric $LF_VERSION + fabtests into deps/libfabric)"
    exit 0
fi
[[ "$mode" != system ]] || die "UET_LIBFABRIC=system but pkg-config finds no libfabric >= $LF_MIN_SYSTEM"

# ---------------------------------------------------------------- 2. local, finished
if local_install_ok; then
    say "reusing local libfabric $LF_VERSION in $shown"
    exit 0
fi

# Only one build at a time (two shells running setup at once).
mkdir -p "$state" "$logdir" "$srccache"
if [[ "$state" != "$deps" ]]; then
    for f in "$deps/src/libfabric_${LF_VERSION}.orig.tar."*; do
        if [[ -f "$f" && ! -e "$srccache/$(basename "$f")" ]]; then cp "$f" "$srccache/"; fi
    done
fi
exec 9>"$state/.libfabric.lock"
if ! flock -n 9; then
    say "another setup is building libfabric; waiting for it"
    flock 9
fi
if local_install_ok; then
    say "reusing local libfabric $LF_VERSION in $shown (built by another run)"
    exit 0
fi

start=$SECONDS
if [[ "$mode" == local ]]; then why="UET_LIBFABRIC=local"; else why="no system libfabric >= $LF_MIN_SYSTEM"; fi
say "$why and no finished local build: building $LF_VERSION into $shown"

# Leftovers of an interrupted run: half-installed prefix and old build dirs.
rm -rf "$prefix" "$state"/.build-libfabric.*
work="$(mktemp -d "$state/.build-libfabric.XXXXXX")"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# ---------------------------------------------------------------- 3a. source tarball
tarball=""
for f in "$srccache/libfabric_${LF_VERSION}.orig.tar."*; do
    [[ -f "$f" ]] || continue
    if [[ "$(sha_of "$f")" == "$LF_ORIG_SHA256" ]]; then
        tarball="$f"
        say "using cached $(basename "$f")"
    else
        say "removing cached $(basename "$f") (sha256 mismatch)"
        rm -f "$f"
    fi
done

if [[ -z "$tarball" ]]; then
    command -v apt-get >/dev/null 2>&1 || die "apt-get not found: cannot fetch the libfabric source"
    # The mirror serving the main Debian archive (not the security one), as configured
    # on this machine.
    # shellcheck disable=SC2016  # $(SITE) etc. are apt format fields, not shell
    mirror="$(apt-get indextargets --format '$(SITE)|$(LABEL)|$(RELEASE)' 2>/dev/null \
              | awk -F'|' '$2 == "Debian" { print $1; exit }')"
    if [[ -z "$mirror" ]]; then
        # shellcheck disable=SC2016
        mirror="$(apt-get indextargets --format '$(SITE)|$(RELEASE)' 2>/dev/null \
                  | awk -F'|' '$1 !~ /security/ && $2 !~ /-security$/ && $1 ~ /^(https?|file):/ { print $1; exit }')"
    fi
    [[ -n "$mirror" ]] || die "could not find the Debian mirror in 'apt-get indextargets' (is a Debian main archive configured in apt?)"

    apt_tmp="$work/apt"
    # The apt log names the mirror: it stays in the temporary dir, never in a kept file.
    apt_log="$work/apt.log"
    apt_die() { tail -n 20 "$apt_log" >&2 || true; die "$*"; }
    mkdir -p "$apt_tmp/lists/partial" "$apt_tmp/cache/archives/partial" "$apt_tmp/parts" "$apt_tmp/dl"
    printf 'deb-src %s %s main\n' "$mirror" "$LF_SUITE" >"$apt_tmp/sources.list"
    apt_opts=(
        -o "Dir::Etc::SourceList=$apt_tmp/sources.list"
        -o "Dir::Etc::SourceParts=$apt_tmp/parts"
        -o "Dir::State::Lists=$apt_tmp/lists"
        -o "Dir::Cache=$apt_tmp/cache"
        -o "APT::Sandbox::User=root"
        -o "Acquire::Languages=none"
    )
    say "fetching the $LF_SUITE source index from the configured Debian mirror"
    if ! apt-get "${apt_opts[@]}" -q update >"$apt_log" 2>&1; then
        say "warning: apt-get update (temporary $LF_SUITE config) exited non-zero; continuing"
    fi
    pkgver="$(apt-cache "${apt_opts[@]}" showsrc --only-source libfabric 2>/dev/null \
              | awk '/^Version:/ { print $2 }' | grep -E "^${LF_VERSION//./\\.}-" | sort -V | tail -n1 || true)"
    [[ -n "$pkgver" ]] || apt_die "no libfabric $LF_VERSION source package found in Debian $LF_SUITE (apt output above)"
    say "downloading source package libfabric=$pkgver ($LF_SUITE)"
    # apt may fail on the .dsc/.debian.tar or on signatures while the orig tarball
    # arrives: the file and its sha256 decide, not the exit code.
    (cd "$apt_tmp/dl" && apt-get "${apt_opts[@]}" -q source --download-only "libfabric=$pkgver") \
        >>"$apt_log" 2>&1 || true
    for f in "$apt_tmp/dl/libfabric_${LF_VERSION}.orig.tar."*; do
        [[ -f "$f" ]] && tarball="$f" && break
    done
    [[ -n "$tarball" ]] || apt_die "apt-get source did not deliver libfabric_$LF_VERSION.orig.tar.* (apt output above)"
    got="$(sha_of "$tarball")"
    [[ "$got" == "$LF_ORIG_SHA256" ]] \
        || die "sha256 mismatch for $(basename "$tarball"): got $got, expected $LF_ORIG_SHA256"
    mv "$tarball" "$srccache/"
    tarball="$srccache/$(basename "$tarball")"
    say "sha256 verified: $(basename "$tarball")"
fi

# ---------------------------------------------------------------- 3b. build
run_logged() { # name cmd...: run with output to $logdir/libfabric-<name>.log
    local name="$1"; shift
    local log="$logdir/libfabric-$name.log"
    if ! "$@" >"$log" 2>&1; then
        echo "setup: libfabric: ---- last lines of $logdir/libfabric-$name.log ----" >&2
        tail -n 30 "$log" >&2
        die "step '$name' failed: $*"
    fi
}

say "unpacking $(basename "$tarball")"
mkdir -p "$work/src"
tar -xf "$tarball" -C "$work/src" --strip-components=1 || die "cannot unpack $tarball"
src="$work/src"
[[ -f "$src/src/fabric.c" && -d "$src/fabtests" ]] || die "unexpected layout of $(basename "$tarball")"

# Upstream bug in 2.1.0: prov/sm2/configure.m4 tests $enable_shm instead of
# $enable_sm2, so --disable-sm2 is ignored while shm is enabled.  Fix the test.
# shellcheck disable=SC2016  # literal $enable_* in the m4 file
sed -i 's/test x"\$enable_shm" != x"no"/test x"$enable_sm2" != x"no"/' "$src/prov/sm2/configure.m4"
# shellcheck disable=SC2016
grep -q 'test x"\$enable_sm2" != x"no"' "$src/prov/sm2/configure.m4" \
    || die "could not patch prov/sm2/configure.m4 (sm2 would be built)"

# The tarball ships no configure scripts.
say "autoreconf (libfabric, fabtests)"
run_logged autoreconf bash -c "cd '$src' && autoreconf -ivf && cd fabtests && autoreconf -ivf"

say "configure libfabric (providers: $LF_PROVIDERS)"
mkdir -p "$work/build-libfabric" "$work/build-fabtests"
run_logged configure bash -c "cd '$work/build-libfabric' && '$src/configure' --prefix='$prefix' ${LF_CONFIGURE_FLAGS[*]}"
built="$(sed -n 's/^\*\*\* Built-in providers:[[:space:]]*//p' "$logdir/libfabric-configure.log" | xargs -n1 | sort | xargs)"
want="$(xargs -n1 <<<"$LF_PROVIDERS" | sort | xargs)"
[[ "$built" == "$want" ]] || die "configure selected providers '$built', expected '$want' (see $logdir/libfabric-configure.log)"
dso="$(sed -n 's/^\*\*\* DSO providers:[[:space:]]*//p' "$logdir/libfabric-configure.log" | xargs)"
[[ -z "$dso" ]] || die "configure selected DSO providers '$dso', expected none"

say "make -j$jobs libfabric"
run_logged make make -C "$work/build-libfabric" -j"$jobs"
say "make install libfabric"
run_logged install make -C "$work/build-libfabric" install

say "configure fabtests"
run_logged fabtests-configure bash -c "cd '$work/build-fabtests' && '$src/fabtests/configure' --prefix='$prefix' --with-libfabric='$prefix' ${FT_CONFIGURE_FLAGS[*]} LDFLAGS='-Wl,-rpath,$prefix/lib'"
say "make -j$jobs fabtests"
run_logged fabtests-make make -C "$work/build-fabtests" -j"$jobs"
say "make install fabtests"
run_logged fabtests-install make -C "$work/build-fabtests" install

# ---------------------------------------------------------------- 3c. check, then stamp
pc="$prefix/lib/pkgconfig/libfabric.pc"
[[ "$(pkg-config --modversion "$pc" 2>/dev/null)" == "$LF_VERSION" ]] || die "installed $pc does not report $LF_VERSION"
for b in "${LF_REQUIRED_BINS[@]}"; do
    [[ -x "$prefix/bin/$b" ]] || die "not installed: $shown/bin/$b"
    # Must find the local libfabric through its rpath, without LD_LIBRARY_PATH.
    # (Captured first: with pipefail, `ldd | grep -q` fails when grep exits before ldd.)
    deps_of="$(env -u LD_LIBRARY_PATH ldd "$prefix/bin/$b")" || die "ldd failed on $shown/bin/$b"
    [[ "$deps_of" == *"=> $prefix/lib/libfabric.so"* ]] \
        || die "$shown/bin/$b does not resolve libfabric.so to $shown/lib (rpath missing?)"
done
# fi_info -l also lists two providers compiled into libfabric's core in every build
# (no configure switch): off_coll (software collectives) and ofi_hook_noop.
provs="$(env -u LD_LIBRARY_PATH -u FI_PROVIDER "$prefix/bin/fi_info" -l 2>/dev/null | sed -n 's/^\([a-z_0-9]*\):$/\1/p' | sort | xargs)"
want="$(printf '%s\n' tcp udp shm ofi_rxm ofi_rxd sockets off_coll ofi_hook_noop | sort | xargs)"
[[ "$provs" == "$want" ]] || die "fi_info -l lists '$provs', expected '$want'"

expected_stamp >"$stamp"
say "built libfabric $LF_VERSION + fabtests into $shown in $((SECONDS - start)) s (providers: $provs)"
