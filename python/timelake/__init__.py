"""timelake: time series in your own bucket or directory, as Apache Iceberg v2
tables of Parquet files -- this package is the C implementation's Python API.

Arrow goes in (pyarrow, polars, or anything with ``__arrow_c_stream__``) and
pyarrow Tables come out; every call releases the GIL while the library works.

>>> import pyarrow as pa, timelake
>>> lake = timelake.Lake("/tmp/lake")
>>> t = lake.create_table("iot.readings", schema, time_column="time", series_key=["device_id"])
>>> t.append(batch)["rows"]
"""

from timelake._timelake import LIBRARY_VERSION, ArrowData, ConflictError, Lake, Table
from timelake._types import (
    AppendResult,
    ArrowArrayExportable,
    ArrowSchemaExportable,
    ArrowStreamExportable,
    CacheStats,
    HasArrowSchema,
    IndexCacheStats,
    MaintainReport,
    TableInfo,
    UpgradeReport,
)

__version__ = LIBRARY_VERSION

__all__ = [
    "AppendResult",
    "ArrowArrayExportable",
    "ArrowData",
    "ArrowSchemaExportable",
    "ArrowStreamExportable",
    "CacheStats",
    "ConflictError",
    "HasArrowSchema",
    "IndexCacheStats",
    "Lake",
    "MaintainReport",
    "Table",
    "TableInfo",
    "UpgradeReport",
    "__version__",
]
