"""smartctx's folder in the user cache: where indexes live unless ``--index-dir`` says otherwise, and
where compiled data that costs time to build is kept between processes."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "smartctx"


def cache_folder() -> Path:
    """The user cache folder for smartctx, absolute. ``SMARTCTX_CACHE_DIR`` overrides it (tests and
    CI use it to stay hermetic); a relative one is taken from the current folder."""
    base = Path(os.environ.get("SMARTCTX_CACHE_DIR") or platformdirs.user_cache_dir(APP_NAME))
    return base.expanduser().absolute()
