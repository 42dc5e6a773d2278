"""Host tools and preconditions shared by every placement: root, system tools named with their Debian
package, ``ip`` with errors, liveness of a PID, and the host-wide lock taken while a pair picks its index.
"""
import fcntl
import os
import shutil
import stat
import subprocess
import time

from .ownership import others_may_change

# The lock lives in a folder only root may enter: in /run/lock or /tmp another user could plant a symlink
# (root would create or open the file it points to) or take the lock first and keep it.
LOCK_DIR = "/run/uet-lock"
LOCK_NAME = "namespaces.lock"
LOCK_DEADLINE_S = 120.0       # a pair's set-up holds it for about a second
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



def root_only_folder(path: str) -> int:
    """A descriptor of `path`, made 0700 when missing, refused unless it is a real folder (not a symlink) that
    only we (root) can write or enter."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise NamespaceError(f"cannot make the lock folder {path}: {exc.strerror} (run as root)") from None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise NamespaceError(f"the lock folder {path} cannot be opened as a folder ({exc.strerror}): it must be a "
                             "folder, not a symlink; remove it and run again") from None
    st = os.fstat(fd)
    if others_may_change(st) or st.st_mode & 0o077:  # no other user may even look at the lock
        os.close(fd)
        raise NamespaceError(f"the lock folder {path} is owned by uid {st.st_uid} with mode "
                             f"{stat.S_IMODE(st.st_mode):04o}: it must be ours (uid {os.geteuid()}) and 0700, as "
                             "no other user may reach the lock; remove it and run again")
    return fd


def lock_holders(fd: int) -> list[int]:
    """The pids /proc/locks names as holding a lock on the file of `fd`."""
    st = os.fstat(fd)
    key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        with open("/proc/locks") as f:
            rows = [line.split() for line in f]
    except OSError:
        return []
    return sorted({int(r[4]) for r in rows if len(r) > 5 and r[1] == "FLOCK" and r[5] == key and r[4].isdigit()})


def describe_pid(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return f"pid {pid}"
    return f"pid {pid} ({' '.join(a.decode(errors='replace') for a in argv if a)[:200]})"


class HostLock:
    """An flock shared by every process on the host while it picks an index and adds namespaces; waiting
    for it ends at `deadline` seconds with the holder named."""

    def __init__(self, folder: str = LOCK_DIR, deadline: float = LOCK_DEADLINE_S):
        self.folder, self.deadline = folder, deadline
        self.path = os.path.join(folder, LOCK_NAME)

    def __enter__(self):
        dfd = root_only_folder(self.folder)
        try:
            self.fd = os.open(LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd)
        except OSError as exc:
            raise NamespaceError(f"cannot open the lock file {self.path}: {exc.strerror}") from None
        finally:
            os.close(dfd)
        if not stat.S_ISREG(os.fstat(self.fd).st_mode):
            os.close(self.fd)
            raise NamespaceError(f"the lock file {self.path} is not a regular file; remove it and run again")
        end, pause = time.monotonic() + self.deadline, 0.01
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= end:
                    holders = ", ".join(describe_pid(p) for p in lock_holders(self.fd)) or "a process /proc/locks does not name"
                    os.close(self.fd)
                    raise NamespaceError(f"the host lock {self.path} was not free within {self.deadline:g} s: held by "
                                         f"{holders}; wait for it to end, or end it") from None
                time.sleep(min(pause, max(0.0, end - time.monotonic())))
                pause = min(pause * 2, 0.2)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
