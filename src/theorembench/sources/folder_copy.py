"""Copying a local LaTeX source folder into a paper's folder under the e-print rules.

:func:`extract_folder` refuses symbolic links and special files, skips version-control
folders (:data:`VCS_DIRS`) and applies the same size and count limits as an e-print
(:class:`~theorembench.sources.safe_extraction.Limits`), counted on the bytes read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from theorembench.sources.safe_extraction import Extraction, Limits, Refused, SafeWriter, read_chunks, safe_relpath

VCS_DIRS = {".git", ".hg", ".svn", ".bzr", "CVS"}


def extract_folder(src: Path, dest: Path, limits: Limits = Limits()) -> Extraction:
    """Copy a local LaTeX source folder into ``dest`` under the same rules as an e-print.

    Symbolic links and special files are refused, version-control folders
    (``.git`` ...) skipped, and the same size and count limits apply, counted on
    the bytes read. ``dest`` may not be ``src`` itself; a ``dest`` inside ``src``
    is not copied into itself.
    """
    src, dest = Path(src), Path(dest)
    if not src.is_dir():
        return Extraction("folder", False, f"not a folder: {src}", dest)
    src_real = src.resolve()
    dest_real = dest.resolve()
    if src_real == dest_real:
        return Extraction("folder", False, "source and destination are the same folder", dest)
    if src_real.is_relative_to(dest_real):
        return Extraction("folder", False, "the source folder lies inside the destination", dest)
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return Extraction("folder", False, f"cannot create the destination folder: {e}", dest)
    writer = SafeWriter(dest, limits)
    count = 0
    stack: list[tuple[Path, str]] = [(src_real, "")]
    stopped = False
    while stack and not stopped:
        folder, prefix = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as e:
            writer.reject(prefix or ".", f"cannot list folder: {e.strerror or e}")
            continue
        subfolders: list[tuple[Path, str]] = []
        for entry in entries:
            name = prefix + entry.name
            if Path(entry.path).resolve() == dest_real:
                continue  # the destination sits inside the source
            count += 1
            if count > limits.max_members:
                writer.reject(name, f"too many entries (limit {limits.max_members}); this and later entries skipped")
                stopped = True
                break
            rel, why = safe_relpath(name)
            if rel is None:
                writer.reject(name, why)
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as e:
                writer.reject(name, f"cannot stat: {e.strerror or e}")
                continue
            if stat.S_ISLNK(st.st_mode):
                writer.reject(name, "symbolic link refused")
            elif stat.S_ISDIR(st.st_mode):
                if entry.name in VCS_DIRS:
                    writer.reject(name, "version-control folder skipped")
                    continue
                try:
                    writer.mkdir(rel)
                except Refused as e:
                    writer.reject(name, str(e))
                    continue
                subfolders.append((Path(entry.path), name + "/"))
            elif stat.S_ISREG(st.st_mode):
                try:
                    if st.st_size > limits.max_file_bytes:
                        raise Refused(f"file larger than the per-file limit of {limits.max_file_bytes} bytes")
                    with open(entry.path, "rb") as f:
                        writer.write(rel, read_chunks(f))
                except Refused as e:
                    writer.reject(name, str(e))
                except OSError as e:
                    writer.reject(name, f"cannot copy: {e.strerror or e}")
            elif stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
                writer.reject(name, "device node refused")
            elif stat.S_ISFIFO(st.st_mode):
                writer.reject(name, "FIFO refused")
            else:
                writer.reject(name, "special file refused")
        stack.extend(reversed(subfolders))
    return writer.result("folder")


__all__ = ["VCS_DIRS", "extract_folder"]
