"""The shapes of the dicts timelake returns, for type checkers."""

from __future__ import annotations

from typing import List, Optional, TypedDict


class MaintainReport(TypedDict):
    """What ``Table.maintain()`` (or inline maintenance after an append) did."""

    partitions_compacted: int
    files_rewritten: int
    files_written: int
    rows_rewritten: int
    duplicates_removed: int
    partitions_dropped: int
    snapshots_expired: int
    objects_deleted: int
    seconds: float


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
    ``maintenance_error`` when it failed (the appended rows are committed even so).
    """

    maintenance: MaintainReport
    maintenance_error: str


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
