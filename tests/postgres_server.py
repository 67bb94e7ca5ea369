"""A throw-away PostgreSQL server for the tests, from the machine's own PostgreSQL binaries.

`start` runs ``initdb`` into a fresh temporary folder and ``pg_ctl start`` with the server listening
only on a Unix socket in that folder (no TCP port to collide with another run), and `PostgresServer.stop`
stops it by its data folder and removes the folder. ``initdb`` refuses to run as root, and CI runs as
root: there every server command runs as the ``postgres`` system user that Debian's package creates,
and the folder belongs to that user.

The binaries are looked up on PATH, then in Debian's versioned ``/usr/lib/postgresql/*/bin`` (which
the package does not put on PATH), newest version first.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

# The environment variable that makes a missing PostgreSQL a failure rather than a skip (.ci/run sets it).
REQUIRE_VARIABLE = "SMARTCTX_REQUIRE_POSTGRES"
# The system user Debian's postgresql package creates; the server runs as it when the tests run as root.
SERVER_USER = "postgres"
# The one role the tests connect as: a superuser that the local socket lets in without a password.
SUPERUSER = "smartctx_test"
# The port names the socket file (.s.PGSQL.PORT) in the server's own folder; nothing listens on TCP.
SOCKET_PORT = 5432
START_TIMEOUT_S = 60
COMMAND_TIMEOUT_S = 120
# Durability costs time and buys nothing for a server that is deleted after the run.
_SERVER_SETTINGS = (
    "-c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    " -c max_connections=40 -c shared_buffers=32MB"
)
_DEBIAN_BINARIES = Path("/usr/lib/postgresql")


class PostgresUnavailableError(Exception):
    """No PostgreSQL server binaries on this machine, or no user to run them as; says what to install."""


@dataclass(frozen=True)
class PostgresServer:
    """A running server: its folder (data and socket) and how to reach it."""

    folder: Path
    bin_dir: Path
    run_as: str | None

    @property
    def data_dir(self) -> Path:
        return self.folder / "data"

    def url(self, database: str = "postgres", user: str = SUPERUSER) -> str:
        """A libpq URL that reaches the server over its socket."""
        return f"postgresql://{user}@/{database}?host={self.folder}&port={SOCKET_PORT}"

    def stop(self) -> None:
        """Stop the server (fast: open sessions are ended) and remove its folder."""
        try:
            _run(
                self,
                [str(self.bin_dir / "pg_ctl"), "stop", "-D", str(self.data_dir), "-m", "fast", "-w"],
            )
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


def find_bin_dir() -> Path:
    """The folder holding initdb, pg_ctl and postgres."""
    on_path = shutil.which("pg_ctl")
    if on_path is not None:
        folder = Path(on_path).resolve().parent
        if all((folder / name).exists() for name in ("initdb", "postgres")):
            return folder
    versions = sorted(
        (path for path in _DEBIAN_BINARIES.glob("*/bin") if (path / "initdb").exists()),
        key=lambda path: [int(part) for part in re.findall(r"\d+", path.parent.name)],
        reverse=True,
    )
    if versions:
        return versions[0]
    raise PostgresUnavailableError(
        "no PostgreSQL server binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql/*/bin:"
        " install them, e.g. 'apt-get install postgresql' on Debian"
    )


def start() -> PostgresServer:
    """initdb into a new temporary folder and start the server on a socket there."""
    bin_dir = find_bin_dir()
    run_as: str | None = None
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam(SERVER_USER)
        except KeyError:
            raise PostgresUnavailableError(
                f"the tests run as root, which initdb refuses, and there is no {SERVER_USER!r} user to run"
                " the server as: install Debian's postgresql package, which creates it"
            ) from None
        run_as = SERVER_USER
    # In /tmp itself, not pytest's folder: the server user must be able to reach it, and a Unix
    # socket's path must stay under about 100 bytes.
    folder = Path(tempfile.mkdtemp(prefix="smartctx-pg-"))
    if run_as is not None:
        os.chown(folder, owner.pw_uid, owner.pw_gid)
    server = PostgresServer(folder, bin_dir, run_as)
    try:
        _run(
            server,
            [
                str(bin_dir / "initdb"),
                "-D",
                str(server.data_dir),
                "-U",
                SUPERUSER,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            ],
        )
        _run(
            server,
            [
                str(bin_dir / "pg_ctl"),
                "start",
                "-D",
                str(server.data_dir),
                "-w",
                "-t",
                str(START_TIMEOUT_S),
                "-l",
                str(folder / "server.log"),
                "-o",
                f"{_SERVER_SETTINGS} -k {folder} -p {SOCKET_PORT}",
            ],
        )
    except BaseException:
        log = folder / "server.log"
        detail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        shutil.rmtree(folder, ignore_errors=True)
        if detail:
            raise RuntimeError(f"PostgreSQL did not start; the end of its log:\n{detail}") from None
        raise
    return server


def _run(server: PostgresServer, command: list[str]) -> None:
    """Run a server command as the server's user; its output is in the error when it fails."""
    if server.run_as is not None:
        command = ["runuser", "-u", server.run_as, "--", *command]
    completed = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        check=False,
        cwd=server.folder,
        stdin=subprocess.DEVNULL,
    )
    if completed.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} failed (exit {completed.returncode}):\n{completed.stdout}{completed.stderr}"
        )
