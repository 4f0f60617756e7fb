"""Type stubs of the C extension timelake._timelake."""

from typing import Any, Mapping, Optional, Protocol, Sequence, Union
import os

import pyarrow as pa

from timelake._types import (
    AppendResult,
    CacheStats,
    IndexCacheStats,
    MaintainReport,
    TableInfo,
    UpgradeReport,
)

LIBRARY_VERSION: str
"""The version of libtimelake the module was built with."""

class _ArrowStream(Protocol):
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...

class _ArrowArray(Protocol):
    def __arrow_c_array__(self, requested_schema: Optional[object] = None) -> tuple[object, object]: ...

class _ArrowSchema(Protocol):
    def __arrow_c_schema__(self) -> object: ...

class _HasSchema(Protocol):
    @property
    def schema(self) -> _ArrowSchema: ...

class ConflictError(RuntimeError):
    """A concurrent commit won and this one could not be rebased onto it."""

class ArrowData:
    """Arrow data from timelake, exported once through the Arrow PyCapsule interface."""

    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object:
        """An ArrowArrayStream PyCapsule (once)."""
    def __arrow_c_schema__(self) -> object:
        """An ArrowSchema PyCapsule (once)."""

class Lake:
    """A warehouse of Timelake tables (a local path or a file:// URL)."""

    def __init__(
        self,
        location: Union[str, os.PathLike[str]],
        storage_options: Optional[Mapping[str, str]] = None,
        settings: Optional[Mapping[str, str]] = None,
    ) -> None:
        """Opens a warehouse. ``settings`` are session settings for every query, such as
        ``{"read_dedup": "false"}``; they override the tables' own.

        Raises ValueError for a bad location, storage option or setting.
        """
    @property
    def location(self) -> str:
        """The normalized URL of the warehouse, such as ``file:///data/lake``."""
    def create_table(
        self,
        name: str,
        schema: Union[_ArrowSchema, _HasSchema, _ArrowStream],
        time_column: Optional[str] = None,
        series_key: Optional[Sequence[str]] = None,
        chunk: Optional[str] = None,
        retention: Optional[str] = None,
        dedup: Optional[bool] = None,
        properties: Optional[Mapping[str, str]] = None,
        *,
        ingest_time: Optional[bool] = None,
    ) -> Table:
        """Creates a table at version 1.

        Raises FileExistsError if it exists; ValueError for a bad name, schema, chunk
        (``"hour"``, ``"day"`` or ``"month"``), retention (a duration such as ``"90d"``) or property.
        """
    def table(self, name: str) -> Table:
        """The table at its latest version. Raises KeyError if it does not exist."""
    def tables(self) -> list[str]:
        """All tables, as sorted ``"namespace.table"`` names."""
    def sql(self, query: str, namespace: str = "default") -> pa.Table:
        """Runs SQL; unqualified table names resolve in ``namespace``.

        Besides queries it runs ``CREATE``, ``REFRESH`` and ``DROP MATERIALIZED ROLLUP``, which
        return one row: the rollup and the rows it took. ``FROM t AT (VERSION => snapshot_id)``
        or ``AT (TIMESTAMP => time)`` reads a table as of an earlier snapshot.

        Raises KeyError for an unknown table or snapshot (naming the earliest kept, or saying
        it was expired), RuntimeError when the query fails.
        """
    def cache_stats(self) -> Optional[CacheStats]:
        """What the read cache did since the lake was opened; None with the cache off (a local lake)."""
    def index_cache_stats(self) -> IndexCacheStats:
        """The last-value indexes the lake's table handles keep for their next append: bytes held,
        limit_bytes (storage option ``timelake_index_cache_bytes``; without it the process's
        64 MiB, shared by every lake opened without it; the oldest dropped first), indexes, hits,
        misses, dropped."""
    def latest(self, table: str) -> pa.Table:
        """The newest row of every series of ``table``. Raises KeyError if it does not exist."""
    def drop_table(self, name: str) -> None:
        """Deletes a table and its files; dropping a missing table does nothing."""

class Table:
    """One table. ``append`` and ``maintain`` advance the handle to the version they commit."""

    @property
    def name(self) -> str:
        """``"namespace.table"``."""
    @property
    def location(self) -> str:
        """The table's root URL."""
    @property
    def version(self) -> int:
        """The metadata version this handle is at."""
    @property
    def schema(self) -> pa.Schema:
        """The table's schema."""
    def append(
        self,
        data: Union[_ArrowStream, _ArrowArray],
        batch_id: Optional[str] = None,
        maintain: Optional[bool] = None,
    ) -> AppendResult:
        """Appends Arrow data as one atomic commit, without copying it.

        Raises TypeError for an object that is not Arrow data, ValueError when the data
        does not fit the table, ConflictError (a RuntimeError) when a concurrent commit
        could not be rebased.
        """
    def replace(
        self,
        data: Union[_ArrowStream, _ArrowArray],
        schema: Optional[Union[_ArrowSchema, _HasSchema, _ArrowStream]] = None,
        partition_by: Optional[Sequence[str]] = None,
        batch_id: Optional[str] = None,
    ) -> AppendResult:
        """Replaces every row of the table with ``data`` in one commit: readers see the old
        table or the new one, never a mix or a missing table.

        With ``schema`` the table's columns become those (a column keeping its name and type,
        or widening it, continues; others are new; columns left out are dropped); with
        ``partition_by`` (such as ``["region", "month(day)"]``, besides the time partition) its
        partitioning. Either alone takes the other from the data's columns and the table's
        partitioning; with neither, only the rows change. Earlier snapshots stay readable
        under their own columns.

        Raises ValueError, with nothing written, for a bad schema or partition_by entry or
        rows that do not fit; ConflictError when a concurrent commit changed the columns too.
        """
    def maintain(
        self, compact: bool = True, retention: bool = True, expire: bool = True, rollups: bool = True
    ) -> MaintainReport:
        """Runs retention, compaction, the refresh of the table's rollups and snapshot expiry, each a commit."""
    def upgrade(self, dry_run: bool = False, compact: bool = True, keep_snapshots: str = "7d") -> UpgradeReport:
        """Brings the table to the current format, each step a commit; no snapshot expires for
        ``keep_snapshots``, so ``rollback(report["snapshot_before"])`` undoes it."""
    def set_properties(self, properties: Mapping[str, Optional[str]]) -> None:
        """Changes table settings in one metadata commit; ``None`` returns one to its default.

        Raises ValueError for an unknown setting, a bad value or one fixed at creation.
        """
    def rollback(self, snapshot_id: int) -> None:
        """Makes an earlier snapshot current again. Raises KeyError for an unknown snapshot."""
    def info(self) -> TableInfo:
        """Contract, size and layout of this version."""
    def refresh(self) -> None:
        """Reloads the latest committed version."""

def _input_buffer_addresses(data: Any) -> list[list[int]]:
    """Buffer addresses of the first batch of ``data`` as append reads it (for tests)."""
