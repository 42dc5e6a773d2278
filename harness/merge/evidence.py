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
        if not source.is_dir() or source.is_symlink():
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
                if not stat.S_ISREG(os.lstat(src).st_mode):
                    skipped.append(str(src.relative_to(shard_folder)))
                    continue
                if os.path.lexists(dst):
                    continue
                _link_or_copy(src, dst)
    return skipped


def _link_or_copy(src: pathlib.Path, dst: pathlib.Path) -> None:
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.EACCES):
            raise
        shutil.copy2(src, dst, follow_symlinks=False)
