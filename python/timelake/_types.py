"""The shapes of what timelake takes and returns, for type checkers: the
protocols of Arrow data it accepts and the dicts its calls return (the same
names and keys as the reference package's)."""

from __future__ import annotations

from typing import List, Optional, Protocol, TypedDict


class ArrowSchemaExportable(Protocol):
    """An object that exports an Arrow schema through the Arrow PyCapsule interface (a ``pyarrow.Schema``)."""

    def __arrow_c_schema__(self) -> object:
        """A PyCapsule holding an ``ArrowSchema``."""
        ...


class HasArrowSchema(Protocol):
    """An object with an Arrow ``.schema``, such as a ``pyarrow.Table``."""

    @property
    def schema(self) -> ArrowSchemaExportable:
        """The object's Arrow schema."""
        ...


class ArrowArrayExportable(Protocol):
    """One batch of Arrow data, such as a ``pyarrow.RecordBatch``."""

    def __arrow_c_array__(self, requested_schema: Optional[object] = None) -> tuple[object, object]:
        """PyCapsules holding an ``ArrowSchema`` and an ``ArrowArray``."""
        ...


class ArrowStreamExportable(Protocol):
    """A stream of Arrow batches: a ``pyarrow.Table`` or ``RecordBatchReader``, a ``polars.DataFrame``."""

    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object:
        """A PyCapsule holding an ``ArrowArrayStream``."""
        ...


class MaintainReport(TypedDict):
    """What ``Table.maintain()`` (or inline maintenance after an append) did.

    ``Table.maintain()`` adds a ``warning`` key (a str) when it repaired the table: the
    last-value index was lost or garbage and was rebuilt from the data files.
    """

    partitions_compacted: int
    files_rewritten: int
    files_written: int
    rows_rewritten: int
    duplicates_removed: int
    partitions_dropped: int
    snapshots_expired: int
    objects_deleted: int
    rollups_refreshed: int
    rollup_rows: int
    seconds: float


class CacheStats(TypedDict):
    """``Lake.cache_stats()``: reads of immutable objects answered from memory or disk, and fetched."""

    memory_hits: int
    disk_hits: int
    misses: int
    bytes_fetched: int


class IndexCacheStats(TypedDict):
    """``Lake.index_cache_stats()``: the last-value indexes table handles keep in memory for their
    next append, under the lake's budget (``timelake_index_cache_bytes``), or without it the
    process's 64 MiB shared by every lake opened without it."""

    bytes: int
    limit_bytes: int
    indexes: int
    hits: int
    misses: int
    dropped: int


class UpgradeReport(TypedDict):
    """What ``Table.upgrade()`` did, or would do with ``dry_run``.

    ``steps`` is empty when the table was already current. ``Table.rollback(snapshot_before)``
    undoes the upgrade while its snapshots are kept (until ``keep_snapshots_until_ms``, Unix ms).
    """

    steps: List[str]
    version_before: int
    snapshot_before: Optional[int]
    keep_snapshots_until_ms: Optional[int]


class _AppendRequired(TypedDict):
    rows: int
    files: int
    bytes: int
    version: int
    commit_ms: float
    attempts: int
    duplicate: bool


class AppendResult(_AppendRequired, total=False):
    """What ``Table.append()`` committed.

    ``maintenance`` appears when inline maintenance ran after the commit, and
    ``maintenance_error`` when it failed (the appended rows are committed even so);
    ``warning`` when the append repaired the table (the parent's last-value index was
    lost or garbage and was rebuilt from the data files).
    """

    maintenance: MaintainReport
    maintenance_error: str
    warning: str


class TableInfo(TypedDict):
    """``Table.info()``: contract, size and layout of the handle's version, flat."""

    name: str
    version: int
    location: str
    time_column: Optional[str]
    series_key: List[str]
    chunk: Optional[str]
    dedup: bool
    ingest_time_column: Optional[str]
    rows: int
    files: int
    bytes: int
    snapshots: int
    manifests: int
    last_value_index: Optional[str]
