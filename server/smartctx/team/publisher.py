"""``smartctx index --publish``'s two halves around the local index: what must hold before indexing
(the URL, the commit, the repository's name, a reachable server), so that a mistake fails at once
rather than after minutes of indexing, and the publish itself once the index is built: the whole
commit's, one shard's (``--shard I/N``), or the finish of a commit's shards (``--finish``), which
indexes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from smartctx.core.shards import Shard
from smartctx.store.export import IndexExport, IndexNotSettledError
from smartctx.team import PublishError
from smartctx.team.checkout import (
    describe_differences,
    differences_from_commit,
    read_checkout,
    repository_identity,
)
from smartctx.team.database import connect, parse_url
from smartctx.team.publish import DEFAULT_KEEP, PublishReport, ShardReport, finish, publish, publish_shard


class Publisher:
    """An open connection to the team database and the commit checked out at ``root``. Close it."""

    def __init__(self, root: Path, url: str, repository: str | None, keep: int | None) -> None:
        self.root = root
        self.keep = keep if keep is not None else DEFAULT_KEEP
        self.address = parse_url(url)
        self.commit = read_checkout(root).commit
        self.repository = repository or repository_identity(root) or ""
        if not self.repository:
            raise PublishError(
                f"{root} has no origin remote to name the repository by: name it with --repository NAME"
            )
        self.connection = connect(self.address)

    def publish(self, index_path: Path, smartctx_version: str) -> PublishReport:
        """Publish the index at ``index_path``, built from ``root``, if the work tree is still the
        commit it was when this publisher opened."""
        with self._settled(index_path) as export:
            return publish(
                self.connection,
                self.address,
                export,
                repository=self.repository,
                commit=self.commit,
                keep=self.keep,
                smartctx_version=smartctx_version,
            )

    def publish_shard(self, index_path: Path, smartctx_version: str, shard: Shard) -> ShardReport:
        """Publish the index at ``index_path``, of ``shard``'s files of ``root``, as that shard; its
        references need not be resolved (the finish step resolves them)."""
        with self._settled(index_path, resolved=False) as export:
            return publish_shard(
                self.connection,
                self.address,
                export,
                repository=self.repository,
                commit=self.commit,
                shard=shard,
                smartctx_version=smartctx_version,
            )

    def finish(self, smartctx_version: str) -> PublishReport:
        """Complete the commit from its published shards."""
        return finish(
            self.connection,
            self.address,
            repository=self.repository,
            commit=self.commit,
            keep=self.keep,
            smartctx_version=smartctx_version,
        )

    @contextmanager
    def _settled(self, index_path: Path, *, resolved: bool = True) -> Iterator[IndexExport]:
        """The index at ``index_path``, checked to be of the commit this publisher opened at, and
        to be resolved and scored unless not ``resolved``."""
        now = read_checkout(self.root)
        if now.commit != self.commit:
            raise PublishError(
                f"the checkout moved from {self.commit[:12]} to {now.commit[:12]} while indexing;"
                " publish again once it is settled"
            )
        with IndexExport(index_path) as export:
            differences = differences_from_commit(now, {record.path for record in export.files()})
            if differences:
                raise PublishError(describe_differences(now.commit, differences))
            try:
                if resolved:
                    export.check_settled()
                else:
                    export.check_words()
            except IndexNotSettledError as error:
                raise PublishError(f"the index is not complete ({error}); run smartctx index again") from None
            yield export

    def close(self) -> None:
        self.connection.close()
