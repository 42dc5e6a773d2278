"""Host tools and preconditions shared by every placement: root, system tools named with their Debian
package, ``ip`` with errors, liveness of a PID, and the host-wide lock taken while a pair picks its index.
"""
import fcntl
import os
import shutil
import subprocess

LOCK_PATHS = ("/run/lock/uet-containers.lock", "/tmp/uet-containers.lock")
TOOL_PACKAGES = {"ip": "iproute2", "nft": "nftables", "tcpdump": "tcpdump", "ethtool": "ethtool",
                 "podman": "podman", "runc": "runc", "debootstrap": "debootstrap", "nsenter": "util-linux"}


class NamespaceError(RuntimeError):
    """A namespace pair could not be made, used or removed; the message says why and what to do."""


# --------------------------------------------------------------------------------------------
# tools and preconditions


def require_root():
    if os.geteuid() != 0:
        raise NamespaceError(
            "network namespaces need root (CAP_SYS_ADMIN and CAP_NET_ADMIN): "
            "run the suite as root, e.g. with sudo")


def tool(name):
    """Absolute path of a system tool, also when /usr/sbin is not on PATH; clear error naming the package."""
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin:/usr/bin:/bin")
    if not found:
        package = TOOL_PACKAGES.get(name, name)
        raise NamespaceError(
            f"'{name}' was not found: install the Debian package {package} (apt-get install {package})")
    return found


def ip(*args, netns=None, check=True, timeout=30):
    argv = [tool("ip")]
    if netns:
        argv += ["-n", netns]
    argv += list(args)
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise NamespaceError(f"{' '.join(argv[1:])} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc



def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True



class HostLock:
    """An flock shared by every process on the host while it picks an index and adds namespaces."""

    def __enter__(self):
        for path in LOCK_PATHS:
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
                break
            except OSError:
                continue
        else:
            raise NamespaceError(f"cannot open a lock file ({', '.join(LOCK_PATHS)})")
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)

