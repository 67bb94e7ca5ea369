"""The wheel users install carries every file of the package: the query files, the schema and the rule
sets the code reads at run time as well as its modules, so a data file added without its
``[tool.setuptools.package-data]`` entry fails here, not at a user's first pack (issue 21)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path, PurePosixPath

REPO = Path(__file__).resolve().parents[2]
PACKAGE = PurePosixPath("server/smartctx")


def _checkout_files() -> list[PurePosixPath]:
    """The files a clean clone with this working tree's changes holds: what git tracks or would track,
    never what .gitignore leaves out (``__pycache__``, ``*.egg-info``, ``build/``)."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    # A tracked file deleted in the working tree is still listed; it is not part of the build.
    return [PurePosixPath(name) for name in listed.split("\0") if name and (REPO / name).is_file()]


def _build_wheel(source: Path, wheel_dir: Path) -> Path:
    """The build client-vscode/build-wheel.mjs runs for the .vsix (the wheel Install the Server uses)."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--wheel-dir",
            str(wheel_dir),
            str(source),
        ],
        check=True,
        timeout=300,
    )
    (wheel,) = wheel_dir.glob("smartctx-*.whl")
    return wheel


def test_the_wheel_carries_every_file_of_the_package(tmp_path: Path) -> None:
    # Built from a copy: setuptools puts into a wheel whatever an earlier build left in build/lib and
    # the egg-info's SOURCES.txt, so in a used checkout a file whose entry is gone would still ship.
    files = _checkout_files()
    source = tmp_path / "source"
    for name in files:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, source / name)
    wheel = _build_wheel(source, tmp_path / "wheel")

    with zipfile.ZipFile(wheel) as archive:
        shipped = {name for name in archive.namelist() if not name.startswith("smartctx-")}
    expected = {
        str(PurePosixPath("smartctx") / name.relative_to(PACKAGE))
        for name in files
        if name.is_relative_to(PACKAGE)
    }
    missing, extra = sorted(expected - shipped), sorted(shipped - expected)
    assert not missing, (
        f"the wheel lacks {missing}: declare them in [tool.setuptools.package-data] in pyproject.toml"
    )
    assert not extra, f"the wheel carries files that are not in server/smartctx/: {extra}"
