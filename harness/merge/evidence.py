"""A shard's evidence brought into the merged run's folder: its cells/ and attempts/ trees (logs, captures,
plans), so that the merged report's links into them hold. Hard links where the file system allows, else
copies; a symbolic link in a shard's folder is never followed (it could lead anywhere), nor brought."""
from __future__ import annotations

import errno
import os
import pathlib
import shutil
import stat

EVIDENCE = ("cells", "attempts")


def bring(shard_folder: pathlib.Path, run_dir: pathlib.Path) -> list[str]:
    """Links or copies each regular file of the shard's evidence trees into `run_dir` (made by the merge) at
    the same relative path; a file already there (a cell's own files, written by each shard of a cell cut
    by area) stays the first shard's. Returns the paths left out: symbolic links and other non-files."""
    skipped = []
    for top in EVIDENCE:
        source = shard_folder / top
        if source.is_symlink():
            skipped.append(top)
            continue
        if not source.is_dir():
            continue
        for folder, dirs, files in os.walk(source, followlinks=False):
            here = pathlib.Path(folder)
            into = run_dir / here.relative_to(shard_folder)
            into.mkdir(mode=0o755, exist_ok=True)
            for name in dirs:
                if (here / name).is_symlink():
                    skipped.append(str((here / name).relative_to(shard_folder)))
            for name in files:
                src, dst = here / name, into / name
                if os.path.lexists(dst):
                    continue
                if not _bring_file(src, dst):
                    skipped.append(str(src.relative_to(shard_folder)))
    return skipped


def _bring_file(src: pathlib.Path, dst: pathlib.Path) -> bool:
    """Links or copies the regular file `src` to `dst` (which does not exist); False, bringing nothing, when
    `src` is no regular file. What is brought is the file opened, not what the path names a moment later."""
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a symbolic link
            return False
        raise
    with os.fdopen(fd, "rb") as opened:
        st = os.fstat(opened.fileno())
        if not stat.S_ISREG(st.st_mode):
            return False
        # Another user's file is copied: linked, its owner could change the merged run's evidence afterwards.
        if st.st_uid == os.geteuid() and _linked(src, dst, st):
            return True
        with open(dst, "xb") as out:  # O_EXCL: never through a link made at dst meanwhile
            shutil.copyfileobj(opened, out)
        os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
    return True


def _linked(src: pathlib.Path, dst: pathlib.Path, opened: os.stat_result) -> bool:
    """A hard link at `dst` to the file `opened` is; False (nothing at dst) when the file system refuses one,
    or `src` names another file by now."""
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.EACCES):
            raise
        return False
    now = os.lstat(dst)
    if (now.st_dev, now.st_ino) == (opened.st_dev, opened.st_ino):
        return True
    os.unlink(dst)
    return False
