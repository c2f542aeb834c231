"""Parquet for the export: the pinned columns (:data:`papersift.export.EXPORT_COLUMNS`) as an
Arrow schema, written a row group at a time. One writer for `papersift export --format parquet`
(a results folder) and the workflow's export step (``papersift.steps.export``: a document in the
bucket, ``exports/<doc_id>.parquet``).

pyarrow is an optional dependency: the ``export`` extra, and the container image (not the zip
Lambdas' layer, which it would not fit). It loads only when Parquet is written; missing, the writer
says which install command brings it (:data:`PARQUET_EXTRA_HINT`). No zip function imports this
module (tests/infra/test_layer_build.py holds the layer to what they import).
"""

from __future__ import annotations

import concurrent.futures
import functools
import itertools
from typing import IO, Any

from papersift.errors import MissingExtraError
from papersift.export import (
    EXPORT_COLUMNS,
    OWN_COLUMNS,
    SHARED_COLUMNS,
    DocumentRecords,
    EncodedRecords,
)

#: a row group is written once it holds this many rows or this many characters of text, whichever first
ROW_GROUP_ROWS = 50_000
ROW_GROUP_TEXT_CHARS = 32 * 1024 * 1024
#: what a missing pyarrow says (the CLI prints it, exit 2)
PARQUET_EXTRA_HINT = "pip install 'papersift[export]'"


def arrow_schema() -> Any:
    """:data:`EXPORT_COLUMNS` as a pyarrow schema."""
    pa = _pyarrow()
    types = {"string": pa.string(), "int32": pa.int32(), "float64": pa.float64(), "bool": pa.bool_(),
             "list<string>": pa.list_(pa.string()), "list<float64>": pa.list_(pa.float64())}
    return pa.schema([pa.field(c.name, types[c.arrow_type], nullable=c.nullable) for c in EXPORT_COLUMNS])


def encode_parquet(document: DocumentRecords) -> EncodedRecords:
    """The records' own columns (:data:`~papersift.export.OWN_COLUMNS`) as an Arrow record batch,
    for :class:`ParquetWriter`, with the characters of text they hold (a row group's bound)."""
    pa = _pyarrow()
    records = document.records
    schema = _own_schema()
    batch = pa.RecordBatch.from_arrays(
        [pa.array([record[name] for record in records], type=schema.field(name).type) for name in OWN_COLUMNS],
        schema=schema)
    return EncodedRecords(document.shared, len(records),
                          (_Batch(batch), sum(len(record["text"]) for record in records)))


class _Batch:
    """A record batch that goes to another process (the CLI's pool) as an Arrow IPC stream: for a
    small document's batch a quarter of what pickling its arrays costs (30 against 130 µs)."""

    __slots__ = ("batch",)

    def __init__(self, batch: Any) -> None:
        self.batch = batch

    def __reduce__(self) -> tuple[Any, tuple[bytes]]:
        sink = _pyarrow().BufferOutputStream()
        with _pyarrow().ipc.new_stream(sink, self.batch.schema) as stream:
            stream.write_batch(self.batch)
        return _batch_from_stream, (sink.getvalue().to_pybytes(),)


def _batch_from_stream(data: bytes) -> _Batch:
    return _Batch(_pyarrow().ipc.open_stream(data).read_next_batch())


@functools.cache
def _own_schema() -> Any:
    schema = arrow_schema()
    return _pyarrow().schema([schema.field(name) for name in OWN_COLUMNS])


class ParquetWriter:
    """Parquet with the export schema, a row group at a time: documents' rows gather until
    :data:`ROW_GROUP_ROWS` rows or :data:`ROW_GROUP_TEXT_CHARS` characters of text (a group
    ends at a document's end, so it may pass them by one document), then go out: memory holds one
    row group whatever the export's size (two while one is written). A document comes in as its
    records or already encoded (:func:`encode_parquet`: its own columns as Arrow arrays, built
    where it was read); a group is compressed and written on a thread of its own (pyarrow lets go
    of the GIL) while the next one is read."""

    @staticmethod
    def encode(document: DocumentRecords) -> EncodedRecords:
        return encode_parquet(document)

    def __init__(self, stream: IO[bytes], row_group_rows: int = ROW_GROUP_ROWS,
                 row_group_text_chars: int = ROW_GROUP_TEXT_CHARS) -> None:
        pq = _pyarrow_parquet()
        self._schema = arrow_schema()
        self._writer = pq.ParquetWriter(stream, self._schema, compression="snappy")
        self._row_group_rows, self._row_group_text_chars = row_group_rows, row_group_text_chars
        self._shared: dict[str, list[Any]] = {name: [] for name in SHARED_COLUMNS}
        self._batches: list[Any] = []
        self._pending, self._text_chars = 0, 0
        self.rows = 0
        self._writing = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="parquet")
        self._written: concurrent.futures.Future[None] | None = None

    def write(self, document: DocumentRecords) -> None:
        self.write_encoded(encode_parquet(document))

    def write_encoded(self, document: EncodedRecords) -> None:
        count = document.rows
        if not count:
            return
        batch, text_chars = document.payload
        for name in SHARED_COLUMNS:
            self._shared[name].extend(itertools.repeat(document.shared[name], count))
        self._batches.append(batch.batch)
        self._pending += count
        self._text_chars += text_chars
        self.rows += count
        if self._pending >= self._row_group_rows or self._text_chars >= self._row_group_text_chars:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        pa = _pyarrow()
        own = pa.Table.from_batches(self._batches, schema=_own_schema())
        shared = [pa.chunked_array([pa.array(self._shared[name], type=self._schema.field(name).type)])
                  for name in SHARED_COLUMNS]
        table = pa.Table.from_arrays([*shared, *own.columns], schema=self._schema)
        self._wait()  # one group in writing at a time: memory stays at two
        self._written = self._writing.submit(self._write_group, table)
        self._shared = {name: [] for name in SHARED_COLUMNS}
        self._batches = []
        self._pending, self._text_chars = 0, 0

    def _write_group(self, table: Any) -> None:
        """One row group, its columns made whole first (a document's batch each until then)."""
        self._writer.write_table(table.combine_chunks(), row_group_size=table.num_rows)

    def _wait(self) -> None:
        if self._written is not None:
            self._written.result()  # a failed write raises here
            self._written = None

    def close(self) -> None:
        try:
            self._flush()
            self._wait()
        finally:
            self._writing.shutdown(wait=True)
        self._writer.close()


def require_pyarrow() -> None:
    """Raise :class:`~papersift.errors.MissingExtraError` (naming the install command) unless
    pyarrow can be imported: a command that will write Parquet says so before any work starts."""
    _pyarrow()


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ModuleNotFoundError as exc:
        raise MissingExtraError(f"Parquet needs pyarrow, which is not installed: {PARQUET_EXTRA_HINT}") from exc
    return pyarrow


def _pyarrow_parquet() -> Any:
    _pyarrow()
    import pyarrow.parquet

    return pyarrow.parquet
