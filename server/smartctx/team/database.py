"""Reaching the team's PostgreSQL database: connect within a time limit, create or check the schema,
and turn the driver's failures into one sentence a user can act on.

A connection never waits longer than ``CONNECT_TIMEOUT_S`` for a server that is down, unreachable or
silent (a URL's own ``connect_timeout`` wins), and TCP keepalives notice a server that vanishes
mid-publish. Messages name the server as ``user@host:port/database``, never with the password.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources

import psycopg
from psycopg import errors
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import TupleRow

from smartctx.team import PublishError

SCHEMA_VERSION = 4
SCHEMA_FILE = f"schema_pg_v{SCHEMA_VERSION}.sql"
# Schemas a publisher upgrades in place to this one, one version after another, keeping every
# published commit: by version, the digest of the text that made it (schema_digest) and the file
# that upgrades it to the next version.
UPGRADES = {
    1: ("551a8879387c4728", "schema_pg_v1_to_v2.sql"),
    2: ("0326b801b341798f", "schema_pg_v2_to_v3.sql"),
    3: ("2d73413137f0ead0", "schema_pg_v3_to_v4.sql"),
}
# The oldest schema an editor searches: v3's term lists are what it reads (v4 only adds indexes).
READABLE_SCHEMA_VERSION = 3
URL_SCHEMES = ("postgresql://", "postgres://")
CONNECT_TIMEOUT_S = 10
# A server that stops answering mid-publish is given up on after about a minute, not TCP's hours.
_KEEPALIVE_SETTINGS = {
    "keepalives": "1",
    "keepalives_idle": "30",
    "keepalives_interval": "10",
    "keepalives_count": "3",
}
# How the server names smartctx's sessions (pg_stat_activity): a publisher, or an editor reading a base.
PUBLISH_APPLICATION = "smartctx publish"
READ_APPLICATION = "smartctx base"
# Serialises schema creation between publishers that find none (pg_advisory_xact_lock's key).
_SCHEMA_LOCK_KEY = 0x736D617274637478  # "smartctx"
_PASSWORD_IN_URL = re.compile(r"(//[^:/@\s]*:)[^@\s]*@")


class TeamDatabaseError(PublishError):
    """The team database cannot be used as asked; the message says why and what to do."""


@dataclass(frozen=True)
class DatabaseAddress:
    """A parsed URL: the driver's parameters, and how to name the server in a message."""

    parameters: dict[str, str]
    display: str


def parse_url(url: str, application: str = PUBLISH_APPLICATION) -> DatabaseAddress:
    """The connection parameters of a ``postgresql://`` URL, with smartctx's time limits and
    ``application`` name added where it sets none."""
    if not url.startswith(URL_SCHEMES):
        raise TeamDatabaseError(
            f"{_without_password(url)!r} is not a PostgreSQL URL: give postgresql://USER@HOST:PORT/DATABASE"
        )
    try:
        given = {key: str(value) for key, value in conninfo_to_dict(url).items()}
    except psycopg.ProgrammingError as error:
        raise TeamDatabaseError(
            f"not a valid PostgreSQL URL ({_without_password(str(error)).strip()}):"
            " give postgresql://USER@HOST:PORT/DATABASE, with special characters %-encoded"
        ) from None
    parameters = {
        "connect_timeout": str(CONNECT_TIMEOUT_S),
        "application_name": application,
        **_KEEPALIVE_SETTINGS,
        **given,
    }
    user = given.get("user", "")
    host = given.get("host", "") or "localhost"
    port = given.get("port", "") or "5432"
    display = f"{user + '@' if user else ''}{host}:{port}/{given.get('dbname', '') or user or '?'}"
    return DatabaseAddress(parameters, display)


def connect(address: DatabaseAddress) -> psycopg.Connection[TupleRow]:
    """An open connection in autocommit mode: every write is in a transaction block of its caller's."""
    try:
        return psycopg.connect(make_conninfo("", **address.parameters), autocommit=True)
    except psycopg.OperationalError as error:
        detail = _first_line(error)
        if "password" in detail or "authentication" in detail or "role" in detail:
            hint = "check the user and password in the URL"
        elif "timeout" in detail:
            hint = f"the server did not answer within {address.parameters['connect_timeout']} s"
        else:
            hint = "is the server running, and the host, port and database in the URL right?"
        raise TeamDatabaseError(
            f"cannot connect to PostgreSQL at {address.display}: {detail}; {hint}"
        ) from None


@contextmanager
def reported(address: DatabaseAddress, doing: str) -> Iterator[None]:
    """Turn the driver's errors inside the block into a :class:`TeamDatabaseError` that says what was
    being done, and what to do about it."""
    try:
        yield
    except (errors.InsufficientPrivilege, errors.ReadOnlySqlTransaction) as error:
        raise TeamDatabaseError(
            f"PostgreSQL at {address.display} refused to let this role write while {doing}"
            f" ({_first_line(error)}): publishing needs a role that may create and write tables in the"
            " schema smartctx of a primary server (a read-only role is enough for editors)"
        ) from None
    except psycopg.OperationalError as error:
        raise TeamDatabaseError(
            f"lost the connection to PostgreSQL at {address.display} while {doing} ({_first_line(error)});"
            " nothing was published: what was written stays invisible and the next publish replaces it"
        ) from None
    except psycopg.Error as error:
        raise TeamDatabaseError(
            f"PostgreSQL at {address.display} failed while {doing}: {_first_line(error)}"
        ) from None


def ensure_schema(connection: psycopg.Connection[TupleRow]) -> None:
    """Create the schema if the database has none, upgrade one this smartctx knows how to; refuse
    one of another version or digest."""
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK_KEY,))
        exists = connection.execute("SELECT to_regclass('smartctx.schema_version')").fetchone()
        if exists is None or exists[0] is None:
            connection.execute(_schema_text(SCHEMA_FILE).encode())
            _record_version(connection, SCHEMA_VERSION, schema_digest())
            return
        rows = connection.execute("SELECT version, digest FROM smartctx.schema_version").fetchall()
        found = {int(str(version)): str(digest) for version, digest in rows}
        newest = max(found, default=0)
        while newest in UPGRADES and found[newest] == UPGRADES[newest][0]:
            connection.execute(_schema_text(UPGRADES[newest][1]).encode())
            newest += 1
            found[newest] = schema_digest() if newest == SCHEMA_VERSION else UPGRADES[newest][0]
            _record_version(connection, newest, found[newest])
    if found.get(SCHEMA_VERSION) == schema_digest():
        return
    if SCHEMA_VERSION in found:
        raise TeamDatabaseError(
            f"the database's smartctx schema v{SCHEMA_VERSION} was made by a development build with"
            " another schema text: publish into another database (or drop the schema smartctx)"
        )
    newest = max(found, default=0)
    relation = "a newer" if newest > SCHEMA_VERSION else "an older"
    raise TeamDatabaseError(
        f"the database holds {relation} smartctx schema (v{newest}) than this smartctx writes"
        f" (v{SCHEMA_VERSION}): publish with the smartctx version the team's editors use"
    )


def schema_digest() -> str:
    """A fingerprint of the schema text, so two builds with different schemas of one version number
    never write into each other's tables."""
    return hashlib.sha256(_schema_text(SCHEMA_FILE).encode()).hexdigest()[:16]


def _record_version(connection: psycopg.Connection[TupleRow], version: int, digest: str) -> None:
    connection.execute(
        "INSERT INTO smartctx.schema_version (version, digest) VALUES (%s, %s)", (version, digest)
    )


def _schema_text(name: str) -> str:
    return resources.files("smartctx.team").joinpath(name).read_text("utf-8")


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return _without_password(lines[0]) if lines else type(error).__name__


def _without_password(text: str) -> str:
    return _PASSWORD_IN_URL.sub(r"\1***@", text)
