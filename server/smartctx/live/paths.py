"""``file:`` URIs and workspace folders: which folder holds a file, and the file's path inside it.

Every path a client sends goes through here before anything is read, so a request can only reach
files inside the workspace folders (architecture.md, *Safety*).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit
from urllib.request import url2pathname

# A file URI's authority that names this machine rather than a network share.
LOCAL_HOSTS = ("", "localhost")


def file_uri_path(uri: str) -> str | None:
    """The file-system path a ``file:`` URI names, or None for any other scheme."""
    parts = urlsplit(uri)
    if parts.scheme != "file":
        return None
    path = url2pathname(parts.path)
    if parts.netloc not in LOCAL_HOSTS:
        # A network share, file://server/share/x, is the UNC path //server/share/x.
        return f"//{parts.netloc}{path}"
    return path


def workspace_path(root: Path, uri: str) -> str | None:
    """The workspace-relative POSIX path of a ``file:`` URI, or None when it lies outside ``root``.

    Symbolic links are resolved first, so a link that leaves the workspace counts as outside.
    """
    fs_path = file_uri_path(uri)
    if fs_path is None:
        return None
    try:
        full = Path(os.path.realpath(fs_path))
    except (OSError, ValueError):
        # A path no file can have (an embedded NUL, say) lies in no workspace folder.
        return None
    try:
        relative = full.relative_to(root)
    except ValueError:
        return None
    return relative.as_posix() if relative.parts else None


def innermost_folder(roots: Sequence[Path], uri: str) -> tuple[int, str] | None:
    """The position of the innermost of ``roots`` holding a ``file:`` URI, and the URI's path
    relative to it; None when no root holds it. Nested workspace folders route to the inner one."""
    found: tuple[int, str] | None = None
    depth = -1
    for position, root in enumerate(roots):
        path = workspace_path(root, uri)
        if path is not None and len(root.parts) > depth:
            found, depth = (position, path), len(root.parts)
    return found
