"""Writing FOCUS rows (`ledger.domain.focus_export`) as CSV text chunks or as a Parquet file in
row groups (docs/exports.md). Both take an iterator and hold at most one chunk or row group in
memory, so a team's million entries stream through in bounded memory."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from typing import IO, Any

from ledger.domain import focus_export

CSV_ROWS_PER_CHUNK = 1000
# A spreadsheet runs a cell that begins with one of these as a formula (OWASP "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(column: str, value: Any) -> str:
    """A text cell that a spreadsheet would run as a formula gets a leading apostrophe
    (OWASP's advice); numbers and times are written as they are (-12.50 is a number)."""
    text = focus_export.text_cell(value)
    if column in focus_export.DECIMAL_COLUMNS or column in focus_export.TIME_COLUMNS:
        return text
    return "'" + text if text.startswith(FORMULA_STARTS) else text


PARQUET_ROW_GROUP = 20_000


def csv_chunks(
    rows: Iterable[dict[str, Any]], per_chunk: int = CSV_ROWS_PER_CHUNK
) -> Iterator[str]:
    """The header, then the rows, `per_chunk` rows per yielded string."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(focus_export.COLUMNS)
    for count, row in enumerate(rows, 1):
        writer.writerow([csv_cell(c, row[c]) for c in focus_export.COLUMNS])
        if count % per_chunk == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def parquet_schema() -> Any:
    import pyarrow as pa

    def kind(column: str) -> Any:
        if column in focus_export.DECIMAL_COLUMNS:
            # Unit prices to 6 places × quantities to 4: a cost has at most 10.
            return pa.decimal128(38, 10)
        if column in focus_export.TIME_COLUMNS:
            return pa.timestamp("us", tz="UTC")
        return pa.string()

    return pa.schema(
        [pa.field(c, kind(c)) for c in focus_export.COLUMNS],
        metadata={"focus_version": focus_export.FOCUS_VERSION},
    )


def write_parquet(
    rows: Iterable[dict[str, Any]], sink: IO[bytes], row_group: int = PARQUET_ROW_GROUP
) -> int:
    """Write the rows to `sink` as Parquet, one row group per `row_group` rows; the row count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = parquet_schema()
    written = 0
    # Column lists, not row dicts: a row group holds each value once, with no per-row dict.
    columns: dict[str, list[Any]] = {c: [] for c in focus_export.COLUMNS}
    pending = 0
    with pq.ParquetWriter(sink, schema, compression="zstd") as writer:
        for row in rows:
            for c in focus_export.COLUMNS:
                columns[c].append(row[c])
            pending += 1
            if pending >= row_group:
                writer.write_table(pa.Table.from_pydict(columns, schema=schema))
                written += pending
                columns, pending = {c: [] for c in focus_export.COLUMNS}, 0
        if pending or not written:
            writer.write_table(pa.Table.from_pydict(columns, schema=schema))
            written += pending
    return written
