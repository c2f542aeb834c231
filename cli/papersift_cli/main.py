"""`papersift run` (the whole pipeline on an embedded AWS) and `papersift extract` (library only).

Exit codes: 0 when every input got a recorded status (a bad input is a result, not a failure),
1 when papersift itself broke (a runner exception, or an input left without any status),
2 for bad usage or settings (an --out that cannot be a folder, a --timeout or --port out of range,
a missing extra), 130 when Ctrl-C stopped it. A reader that closes stdout early (`papersift run ... |
head`) costs only the rest of the summary: the results are on disk, and the code is the one the run
earned.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import logging
import os
import shutil
import signal
import stat
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from papersift.errors import SettingsError
from papersift.export import EXPORT_FORMATS, EXPORT_UNITS
from papersift.layout import INCOMING_PREFIX, REPORT_FILE, REPORT_PAGE_FILE, members_prefix, results_prefix, work_prefix
from papersift.names import name_text
from papersift.settings import API_AUTH_MODES, OCR_MODES, OCR_OFF, Settings, check_env_names
from papersift.steps.contracts import DocumentOptions, DocumentRef, document_id
from papersift.storage import LocalDirStore
from papersift_cli.output import FileResult, ResultWriter, print_summary, system_reason, unique_names
from papersift_cli.progress import Progress

EXIT_OK, EXIT_BROKEN, EXIT_USAGE = 0, 1, 2
#: Ctrl-C, as a shell reports a command SIGINT stopped
EXIT_INTERRUPTED = 130
#: Retry waits of the workflow are multiplied by this locally: a laptop has no throttling to wait out
CLI_RETRY_TIME_SCALE = 0.05


#: the `local` extra (pyproject.toml): the embedded AWS `papersift run` and `serve` run on
LOCAL_EXTRA_MODULES = frozenset({"moto", "werkzeug", "flask", "flask_cors"})
LOCAL_EXTRA_HINT = "pip install 'papersift[local]'"
#: highest TCP port
MAX_PORT = 65535


class Stopped(KeyboardInterrupt):
    """SIGTERM (`timeout`, systemd, a container runtime) or SIGHUP (a closed terminal), raised in
    the main thread: a KeyboardInterrupt, so every path that cleans up after Ctrl-C (the lanes
    killed, the work and temporary folders removed) cleans up after these too."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_stopped(signum: int, _frame: Any) -> None:
    for other in (signal.SIGTERM, signal.SIGHUP):  # a second one must not cut the clean-up short
        signal.signal(other, signal.SIG_IGN)
    raise Stopped(signum)


@contextlib.contextmanager
def _stop_signals_as_interrupts() -> Iterator[None]:
    """SIGTERM and SIGHUP handled like Ctrl-C while the work runs (main thread only: a caller
    running main() in a thread keeps its own handlers); the previous handlers are back after."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _raise_stopped) for signum in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class UsageError(Exception):
    """Bad usage found before any work starts: one line on stderr, exit 2."""


def papersift_version() -> str:
    """From the installed package's metadata, so it cannot drift from pyproject.toml."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("papersift")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed: pip install -e .)"


class _VersionWhenAsked(argparse._VersionAction):
    """--version, the installed version read from the package metadata only when it is asked for
    (reading it cost every command ~5 ms)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        self.version = f"papersift {papersift_version()}"
        super().__call__(parser, namespace, values, option_string)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="papersift", description="Extract text from documents, page by page.")
    parser.add_argument("--version", action=_VersionWhenAsked)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run the whole pipeline on an embedded AWS (moto), in this process")
    extract = commands.add_parser("extract", help="extract with the core library only (no AWS)")
    for sub in (run, extract):
        sub.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files or directories (walked)")
        sub.add_argument("--out", type=Path, required=True, metavar="DIR", help="output directory")
        sub.add_argument("--password", action="append", default=None, metavar="P",
                         help="password to try on encrypted files (repeatable)")
        sub.add_argument("--tables", action="store_true", default=None, help="detect tables (Markdown)")
        sub.add_argument("--ocr", choices=OCR_MODES, default=None, metavar="MODE",
                         help=f"OCR routing: {', '.join(OCR_MODES)}")
        sub.add_argument("--config", type=Path, default=None, metavar="FILE.toml", help="settings file")
        sub.add_argument("--batch-size", type=str, default=None, metavar="N", help="pages per extract batch")
        sub.add_argument("--clean", action="store_true", default=None, help="also write cleaned text")
        sub.add_argument("--flat", action="store_true",
                         help="write DIR/<name>.txt and DIR/<name>.status (the corpus scorer's layout)")
        sub.add_argument("--quiet", action="store_true", help="no progress lines")
        sub.add_argument("--open", action="store_true",
                         help=f"open the first document's {REPORT_PAGE_FILE} in a browser")
    run.add_argument("--timeout", type=float, default=3600.0, metavar="SECONDS",
                     help="give up waiting for the workflow after this long (more than 0)")
    serve = commands.add_parser("serve", help="serve the API on 127.0.0.1 against an embedded AWS, until Ctrl-C")
    serve.add_argument("--port", type=int, default=8080, metavar="N",
                       help=f"port on 127.0.0.1, 0 to {MAX_PORT} (0: any free one)")
    serve.add_argument("--auth", choices=API_AUTH_MODES, default=None, help="iam (SigV4, the default) or api_key")
    serve.add_argument("--api-key", default=None, metavar="KEY",
                       help="the key callers send as x-api-key with --auth api_key (default: a random one)")
    serve.add_argument("--config", type=Path, default=None, metavar="FILE.toml", help="settings file")
    export = commands.add_parser("export", help="every page (or block) of a results folder as JSONL or Parquet records")
    export.add_argument("results", type=Path, metavar="RESULTS_DIR", help="a folder `run` or `extract` wrote")
    export.add_argument("--format", choices=EXPORT_FORMATS, required=True, dest="export_format",
                        help="jsonl, or parquet (needs the export extra)")
    export.add_argument("--out", type=Path, required=True, metavar="FILE", help="the file to write")
    export.add_argument("--unit", choices=EXPORT_UNITS, default="page",
                        help="one record a page, or a block where pages/N.json has blocks")
    export.add_argument("--trusted-only", action="store_true", help="only pages whose text is trusted")
    export.add_argument("--workers", type=int, default=None, metavar="N",
                        help="processes reading documents (default: one a CPU; 1: this one only)")
    doctor = commands.add_parser("doctor", help="say which tools and packages are missing and how to install them")
    doctor.add_argument("--config", type=Path, default=None, metavar="FILE.toml", help="settings file")
    doctor.add_argument("--out", type=Path, default=None, metavar="DIR", help="output folder whose free disk to check")
    return parser


def load_settings(args: argparse.Namespace) -> Settings:
    """The settings from flags and the TOML file. A misspelt PAPERSIFT_* variable is refused first,
    before anything is written: the CLI does not read the variables, but a user who set one meant
    something by it, and the local pipeline's handlers would fail on it (exit 1) half-way in."""
    check_env_names(os.environ)
    overrides: dict[str, Any] = {}
    if args.password:
        overrides["passwords"] = list(args.password)
    if args.tables:
        overrides["extract_tables"] = True
    if args.ocr is not None:
        overrides["ocr_mode"] = args.ocr
    if args.batch_size is not None:
        overrides["page_batch_size"] = args.batch_size
    if args.clean:
        overrides["clean_text"] = True
    if args.config is not None:
        return Settings.from_toml(args.config, overrides)
    return Settings.from_mapping(overrides, source="command line")


def collect_inputs(paths: Sequence[Path]) -> list[Path]:
    """Files as given, directories walked in sorted order; a missing path is a usage error (a typo).
    Whatever else is there, a FIFO, a dangling symlink, a file it may not read, is an input: it
    gets a `failed` result saying why (:func:`input_problem`), beside the others."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if not p.is_dir()))
        elif path.exists() or path.is_symlink():
            files.append(path)
        else:
            raise FileNotFoundError(f"no such file or directory: {path}")
    return files


_NOT_REGULAR = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
                (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def input_problem(path: Path) -> str:
    """Why an input cannot be read, naming it as the user gave it ('' when it can): checked before
    it goes anywhere, so the reason is not about a copy in a work folder, and a FIFO is never
    opened (a read would wait for a writer)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if path.is_symlink():
            return f"{path} is a symbolic link to {os.readlink(path)}, which does not exist"
        return f"{path} is gone (removed since it was listed)"
    except OSError as exc:
        return cannot_read(path, exc)
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _NOT_REGULAR if test(mode)), "not a file")
        return f"{path} is {kind}, not a regular file"
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        return cannot_read(path, exc)
    return ""


def cannot_read(path: Path, exc: OSError) -> str:
    """'cannot read PATH: permission denied': the user's path, the system's reason."""
    return f"cannot read {path}: {(exc.strerror or type(exc).__name__).lower()}"


def refused_result(name: str, reason: str) -> FileResult:
    """An input that never went in: failed, with its reason (a recorded status, not a breakage)."""
    return FileResult(name=name, status="failed", reason=reason)


def check_out(out: Path) -> None:
    """--out must be a folder papersift can write into: made here (parents too), before any work,
    so a file in its place or a read-only parent is one line, not a traceback at the end."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot make the folder: {system_reason(exc)}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out}: the folder is not writable")


def check_timeout(seconds: float) -> None:
    if not seconds > 0:  # NaN too
        raise UsageError(f"--timeout must be a number of seconds above 0, not {seconds:g}")


def check_port(port: int) -> None:
    if not 0 <= port <= MAX_PORT:
        raise UsageError(f"--port must be 0 to {MAX_PORT}, not {port}")


def require_local_extra(command: str) -> None:
    """`run` and `serve` need the embedded AWS: without the `local` extra, say which package is
    missing and how to install it, before any work starts."""
    import importlib

    needs = ["papersift_cli.local_aws"] + (["papersift_cli.api_server"] if command == "serve" else [])
    try:
        for module in needs:
            importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").partition(".")[0]
        if missing not in LOCAL_EXTRA_MODULES:
            raise
        raise UsageError(f"`papersift {command}` needs the local extra ({missing} is not installed): "
                         f"{LOCAL_EXTRA_HINT}") from None


def require_export_extra() -> None:
    """The export step (Settings.export_parquet) needs pyarrow, the export extra: without it, say
    so and how to install it, before any work starts."""
    from papersift.errors import MissingExtraError
    from papersift.parquet import require_pyarrow

    try:
        require_pyarrow()
    except MissingExtraError as exc:
        raise UsageError(f"setting export_parquet: {exc}") from None


def document_options(settings: Settings) -> DocumentOptions:
    """Per-upload options (S3 metadata): passwords never go into the Lambdas' environment."""
    return DocumentOptions(extract_tables=settings.extract_tables, ocr_mode=settings.ocr_mode,
                           clean_text=settings.clean_text, passwords=settings.passwords)


def main(argv: Sequence[str] | None = None) -> int:
    """The command. A reader that closes the pipe early (``| head``) ends it quietly: with the code
    the run earned when only its summary was cut short (its results are on disk), else 0 (the
    reader took what it wanted, as ``--help | head`` does)."""
    exit_code = EXIT_OK
    try:
        exit_code = _main(argv)
        sys.stdout.flush()  # here, not at interpreter exit, where a broken pipe is a traceback
    except BrokenPipeError:  # stdout's or stderr's reader: either way the command is ending
        _silence_closed_pipe(sys.stdout, sys.stderr)
    return exit_code


def _silence_closed_pipe(*streams: Any) -> None:
    """The recipe of the signal module's docs (note on SIGPIPE): /dev/null in place of the stream,
    so what is still buffered for it is dropped at exit without a word."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in streams:
        with contextlib.suppress(OSError, ValueError):
            os.dup2(devnull, stream.fileno())
    os.close(devnull)


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its recoverable-file warnings are in the report
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # Tesseract on one core a page, as in the image
    if args.command == "serve":
        return serve(args)
    if args.command == "export":
        return export(args)
    if args.command == "doctor":
        from papersift_cli.doctor import run_doctor

        try:
            return run_doctor(args.config, args.out)
        except SettingsError as exc:
            print(f"papersift: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
    try:
        settings = load_settings(args)
        if args.command == "run":
            check_timeout(args.timeout)
            require_local_extra(args.command)
            if settings.export_parquet:  # the workflow's export step writes Parquet: without pyarrow
                require_export_extra()   # every document's export would fail, recorded one by one
        inputs = collect_inputs(args.paths)
        if not inputs:
            raise UsageError("no input files")
        check_out(args.out)
    except (SettingsError, FileNotFoundError, UsageError) as exc:
        print(f"papersift: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from papersift_cli.leftovers import remove_stale, remove_stale_output

    remove_stale()  # a killed run's temporary folders (kill -9 leaves them): their owner is gone
    remove_stale_output(args.out)  # and those it left in the output folder (a work folder, a half-written result)
    names = unique_names(inputs)
    progress = Progress(len(inputs), stream=open_devnull() if args.quiet else None, live=False if args.quiet else None)
    started = time.monotonic()
    writer = ResultWriter(args.out, names, args.flat)
    try:
        with _stop_signals_as_interrupts():
            results = _run_command(args, inputs, names, settings, progress, writer)
    except Exception as exc:
        progress.close()
        print(f"papersift: runner failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_BROKEN
    except KeyboardInterrupt as exc:
        progress.close()
        signum = exc.signum if isinstance(exc, Stopped) else signal.SIGINT
        how = "" if signum == signal.SIGINT else f" ({signal.Signals(signum).name})"
        print_stopped_summary(how, writer.written, len(inputs), args.out, sys.stderr)
        return 128 + signum
    finally:
        progress.close()
    exit_code = EXIT_BROKEN if any(r.broken for r in results) else EXIT_OK
    try:
        print_summary(results, sys.stdout, time.monotonic() - started)
    except BrokenPipeError:  # the reader has gone: the results are on disk all the same
        _silence_closed_pipe(sys.stdout)
        return exit_code
    if args.open:
        open_first_report(results, args.out, args.flat)
    return exit_code


#: finished inputs named one by one when a run is stopped (the rest are counted)
MAX_FINISHED_LISTED = 20


def print_stopped_summary(how: str, finished: Sequence[FileResult], total: int, out: Path, stream: Any) -> None:
    """What a stopped run kept: how many inputs finished, and each one's name and status, so a user
    whose `timeout` fired knows what is on disk without reading the folder."""
    print(f"papersift: interrupted{how}; {len(finished)} of {total} input(s) finished, in {out}", file=stream)
    for result in finished[:MAX_FINISHED_LISTED]:
        print(f"  {result.name}: {result.status}", file=stream)
    if len(finished) > MAX_FINISHED_LISTED:
        print(f"  ... and {len(finished) - MAX_FINISHED_LISTED} more", file=stream)


def _run_command(args: argparse.Namespace, inputs: Sequence[Path], names: Sequence[str], settings: Settings,
                 progress: Progress, writer: ResultWriter) -> list[FileResult]:
    """`run` or `extract`. Stopped (Ctrl-C, SIGTERM, SIGHUP), `run` leaves threads that hold page
    workers and will not unwind: its descendants are killed and its temporary folders removed here."""
    from papersift_cli.leftovers import kill_descendants, remove_own

    try:
        refused = _refuse_unreadable(inputs, names, writer, progress)
        if args.command == "run":
            return run_pipeline(inputs, names, settings, progress, args.timeout, writer, refused)
        return extract_locally(inputs, names, settings, progress, writer, args.out, refused)
    except KeyboardInterrupt:
        remove_own(killed=kill_descendants())
        raise


def _refuse_unreadable(inputs: Sequence[Path], names: Sequence[str], writer: ResultWriter,
                       progress: Progress) -> dict[int, FileResult]:
    """The inputs that cannot be read (:func:`input_problem`), by index, each written out and
    reported as failed now: they never reach a work folder or the embedded AWS."""
    refused: dict[int, FileResult] = {}
    for index, (path, name) in enumerate(zip(inputs, names, strict=True)):
        reason = input_problem(path)
        if reason:
            refused[index] = _refuse(index, name, reason, writer, progress)
    return refused


def _refuse(index: int, name: str, reason: str, writer: ResultWriter, progress: Progress) -> FileResult:
    result = writer.write(index, refused_result(name, reason))
    progress.finished(name, result.status, 0, 0.0, reason)
    return result


def open_devnull() -> Any:
    return open(os.devnull, "w")


def open_first_report(results: Sequence[FileResult], out: Path, flat: bool) -> None:
    """`papersift run --open`: the first document's report.html in the default browser."""
    import webbrowser

    first = next((r for r in results if REPORT_PAGE_FILE in r.files), None)
    if first is None or flat:
        print(f"papersift: no {REPORT_PAGE_FILE} to open" + (" (--flat writes none)" if flat else ""), file=sys.stderr)
        return
    page = (out / first.folder / REPORT_PAGE_FILE).resolve()
    if not webbrowser.open(page.as_uri()):
        print(f"papersift: no browser to open {page}", file=sys.stderr)


# -- papersift serve ----------------------------------------------------------------------


def export(args: argparse.Namespace) -> int:
    """`papersift export`: one line of counts on stdout (and one on stderr naming the reports it
    could not read: a run killed while writing one); a folder that is none, or Parquet without
    pyarrow, is a usage error (exit 2) before anything is written."""
    from papersift.errors import MissingExtraError
    from papersift_cli.export import export_results

    if not args.results.is_dir():
        print(f"papersift: error: {args.results} is not a folder", file=sys.stderr)
        return EXIT_USAGE
    if args.workers is not None and args.workers < 1:
        print(f"papersift: error: --workers {args.workers}: at least 1", file=sys.stderr)
        return EXIT_USAGE
    if args.out.is_dir():
        print(f"papersift: error: --out {args.out} is a folder: name the file to write", file=sys.stderr)
        return EXIT_USAGE
    if not args.out.absolute().parent.is_dir():
        print(f"papersift: error: --out {args.out}: its folder {args.out.absolute().parent} does not exist",
              file=sys.stderr)
        return EXIT_USAGE
    started = time.monotonic()
    try:
        count = export_results(args.results, args.out, args.export_format, args.unit, args.trusted_only,
                               args.workers)
    except MissingExtraError as exc:
        print(f"papersift: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"{count.records} record(s) of {count.documents} document(s) to {args.out} "
          f"({time.monotonic() - started:.2f}s)")
    if count.unreadable:
        print(f"papersift: warning: {len(count.unreadable)} report(s) could not be read, their documents left out: "
              f"{', '.join(map(str, count.unreadable[:3]))}{' ...' if len(count.unreadable) > 3 else ''}",
              file=sys.stderr)
    return EXIT_OK


def serve(args: argparse.Namespace) -> int:
    """The API on 127.0.0.1, the same handler and routes as the stack's, against an embedded AWS."""
    import secrets

    overrides: dict[str, Any] = {"api_auth": args.auth} if args.auth else {}
    try:
        check_port(args.port)
        check_env_names(os.environ)
        settings = (Settings.from_toml(args.config, overrides) if args.config
                    else Settings.from_mapping(overrides, source="command line"))
        require_local_extra("serve")
    except (SettingsError, UsageError) as exc:
        print(f"papersift: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from papersift_cli.api_server import LocalApi, describe_auth

    api_keys = [args.api_key or secrets.token_urlsafe(24)] if settings.api_auth == "api_key" else []
    try:
        with LocalApi(settings, port=args.port, api_keys=api_keys, retry_time_scale=CLI_RETRY_TIME_SCALE) as api:
            assert api.app is not None
            print(f"papersift API on {api.url} (embedded AWS at {api.aws.endpoint_url}); Ctrl-C stops it", flush=True)
            print(describe_auth(api.app), flush=True)
            try:
                while True:
                    time.sleep(2)
                    api.poll_queue()
            except KeyboardInterrupt:
                print("papersift: stopped", file=sys.stderr)
    except OSError as exc:
        print(f"papersift: cannot serve on 127.0.0.1:{args.port}: {exc}", file=sys.stderr)
        return EXIT_BROKEN
    return EXIT_OK


# -- papersift run ------------------------------------------------------------------------


def run_pipeline(inputs: Sequence[Path], names: Sequence[str], settings: Settings, progress: Progress,
                 timeout: float, writer: ResultWriter,
                 refused: Mapping[int, FileResult] | None = None) -> list[FileResult]:
    """Each input's results are written the moment its execution ends, then removed from the
    embedded AWS (LocalAws forget_finished), so memory does not grow with the run. ``refused``:
    the inputs already written out as failed (unreadable), by index; one that fails to upload
    (gone or locked since) joins them, and the rest go on."""
    from papersift_cli.local_aws import LocalAws

    options = document_options(settings)
    results: dict[int, FileResult] = dict(refused or {})
    if len(results) == len(inputs):  # nothing to upload: no embedded AWS to start
        return [results[index] for index in range(len(inputs))]
    with LocalAws(settings, retry_time_scale=CLI_RETRY_TIME_SCALE, forget_finished=True, direct_s3=True) as aws:
        index_of: dict[str, int] = {}
        for index, (path, name) in enumerate(zip(inputs, names, strict=True)):
            if index in results:
                continue
            progress.update(current=f"uploading {name}")
            try:
                index_of[aws.drop(path, options, name=name)] = index
            except OSError as exc:
                reason = cannot_read(path, exc)
                results[index] = _refuse(index, name, reason, writer, progress)
        keys = list(index_of)
        written: dict[str, FileResult] = {}

        def write_out(outcome: Any) -> None:
            index = index_of[outcome.key]
            written[outcome.key] = writer.write(index, _result_from_outcome(aws, names[index], outcome, True))
            aws.forget(outcome)

        watcher = _Watcher(aws, keys, progress)
        finished = aws.wait(keys, timeout=timeout, on_poll=watcher.on_poll, on_finished=write_out) if keys else True
        if not finished:
            progress.log(f"papersift: gave up waiting after {timeout:.0f}s")
        pending = [key for key in keys if key not in written]
        outcomes = dict(zip(pending, aws.results.outcomes(pending), strict=True)) if pending else {}
        for key, index in index_of.items():
            if key not in written:  # never finished (a timeout) or never started
                written[key] = writer.write(index, _result_from_outcome(aws, names[index], outcomes[key], finished))
            results[index] = written[key]
            watcher.report(written[key], key)
        return [results[index] for index in range(len(inputs))]


def _result_from_outcome(aws: Any, name: str, outcome: Any, finished: bool) -> FileResult:
    files = aws.results.files(outcome)  # each read when written out, none kept
    status, reason = "", ""
    if outcome.broken:
        status = "timeout" if not finished and outcome.execution_status in (None, "RUNNING") else "missing"
        reason = outcome.reason
    result = FileResult.from_files(name, files, outcome.seconds, status=status, reason=reason, broken=outcome.broken)
    if not outcome.broken:
        result.status, result.reason = outcome.status, outcome.reason
    result.members = [_member_result(aws, member, finished) for member in outcome.members]
    return result


def _member_result(aws: Any, outcome: Any, finished: bool) -> FileResult:
    """A member's result without its cost ledger: its archive's ledger has it merged, and every
    member's is held at once while their archive is written out (3.7 MB for 2,000 members)."""
    result = _result_from_outcome(aws, outcome.source_name, outcome, finished)
    result.cost = {}
    return result


class _Watcher:
    """Turns execution polls into progress: live page counts, one line per finished file."""

    def __init__(self, aws: Any, keys: Sequence[str], progress: Progress) -> None:
        self.aws = aws
        self.keys = set(keys)
        self.progress = progress
        self.reported: set[str] = set()
        self.pages_finished = 0

    def on_poll(self, executions: list[dict[str, Any]]) -> None:
        running: list[dict[str, Any]] = []
        for execution in executions:
            execution_input = execution["input"]
            key = execution_input.get("key")
            if execution_input.get("parent_doc_id") or key not in self.keys:
                continue
            if execution["status"] == "RUNNING":
                running.append(execution)
            elif key not in self.reported:
                item = self.aws.results.item(str(execution_input.get("doc_id", ""))) or {}
                stop = execution.get("stopDate")
                seconds = (stop - execution["startDate"]).total_seconds() if stop else 0.0
                pages = int(item.get("page_count") or 0)
                self.pages_finished += pages
                self.reported.add(key)
                self.progress.finished(str(execution_input.get("source_name") or key),
                                       str(item.get("status") or f"execution {execution['status'].lower()}"),
                                       pages, seconds, str(item.get("reason") or ""))
        if self.progress.live:
            in_flight = self.aws.results.count_pages_done(e["input"]["doc_id"] for e in running
                                                          if "doc_id" in e["input"])
            current = str(running[0]["input"].get("source_name", "")) if running else ""
            self.progress.update(pages_done=self.pages_finished + in_flight, current=current)

    def report(self, result: FileResult, key: str) -> None:
        if key not in self.reported:
            self.reported.add(key)
            self.progress.finished(result.name, result.status, result.pages, result.seconds, result.reason)


# -- papersift extract --------------------------------------------------------------------


def extract_locally(inputs: Sequence[Path], names: Sequence[str], settings: Settings, progress: Progress,
                    writer: ResultWriter, out: Path,
                    refused: Mapping[int, FileResult] | None = None) -> list[FileResult]:
    """The same steps as the workflow, over a directory store: ``parallel_files`` inputs at once,
    each in a lane (papersift_cli.lanes: a process of its own, so the workers reading its pages
    are forked, not sent to a fork server), each written out by ``writer`` the moment it is done
    and its work files removed. OCR reads with Tesseract where it is installed (no Textract: no
    client is configured here), and Lambda usage is priced at the deployed functions' memory.
    ``refused``: the inputs already written out as failed (unreadable), by index."""
    import threading

    from infra.deployment import memory_by_function
    from papersift.report_page import compiled_template
    from papersift.steps.extract import preload_for_workers
    from papersift_cli.lanes import run_in_lanes

    results: list[FileResult | None] = [None] * len(inputs)
    for index, result in (refused or {}).items():
        results[index] = result
    todo = [index for index in range(len(inputs)) if results[index] is None]
    if not todo:
        return [result for result in results if result is not None]
    engines = _ocr_engines(settings)
    memory = memory_by_function()
    jobs = min(settings.parallel_files or os.cpu_count() or 1, len(todo))
    with _work_folder(out) as store:
        live = _LiveExtract(store, names, progress)

        def extract_one(index: int) -> FileResult:
            """In a lane when there are lanes: its results are written there, not sent back."""
            result = _extract_one(store, inputs[index], names[index], settings, engines, memory)
            return writer.write(index, result).written()

        def done(index: int, result: FileResult) -> None:
            results[index] = result
            live.done(index, result)

        def lost(index: int, why: str) -> FileResult:
            result = writer.write(index, FileResult(name=names[index], status="failed", reason=why, broken=True))
            result.broken = True  # even when its status could not be written either
            return result

        # lanes are forked: only from a single thread. One lane for one input (or parallel_files = 1)
        # only on a terminal, where its ticks move the page count while the input is read
        # workers and lanes are forked only from a single thread (else workers come from a fork server)
        forking = threading.active_count() == 1
        if forking:  # what each worker reading a page would otherwise load for itself
            preload_for_workers()
        if not forking or (jobs <= 1 and not progress.live):
            for index in todo:
                live.started(index)
                done(index, extract_one(index))
        else:
            compiled_template()  # what the lanes would otherwise each compile for themselves
            largest_first = sorted(todo, key=lambda index: -inputs[index].stat().st_size)
            run_in_lanes(jobs, largest_first, extract_one, done, lost, started=live.started,
                         tick=live.tick if progress.live else None)
    return [result for result in results if result is not None]


def _ocr_engines(settings: Settings) -> Any:
    """Tesseract where it is installed; none with OCR off, whose engine order is empty (no page is
    read by an engine), so the OCR stage is not imported for them (~0.09 s of every run)."""
    if settings.ocr_mode == OCR_OFF:
        return None
    from papersift.steps.ocr import default_engines

    return default_engines(None, page_seconds=settings.ocr_page_seconds)


class _LiveExtract:
    """`papersift extract`'s live line: the inputs the lanes hold now, and the pages read so far,
    those of finished inputs plus the page files the running ones have written to the store."""

    def __init__(self, store: Any, names: Sequence[str], progress: Progress) -> None:
        self.store, self.names, self.progress = store, names, progress
        self.running: dict[int, str] = {}  # index -> doc_id, in the order they started
        self.pages_finished = progress.pages_done

    def started(self, index: int) -> None:
        self.running[index] = document_id("local", _work_key(self.names[index]))
        self.progress.update(current=self._current())

    def done(self, index: int, result: FileResult) -> None:
        self.running.pop(index, None)
        self.pages_finished += result.pages
        self.progress.update(pages_done=self.pages_finished + self._in_flight(), current=self._current())
        self.progress.finished(self.names[index], result.status, result.pages, result.seconds, result.reason)

    def tick(self) -> None:
        self.progress.update(pages_done=self.pages_finished + self._in_flight())

    def _current(self) -> str:
        return ", ".join(self.names[index] for index in self.running)

    def _in_flight(self) -> int:
        """Per running input, its page files: extracted (pages/) or, for a picture document whose
        pages are all OCR's, read by OCR (ocr/pages/), whichever is more. A document's members
        count when it is done."""
        from papersift.layout import PAGES_FOLDER
        from papersift.workfiles import ocr_prefix, pages_prefix

        return sum(max(len(self.store.list_keys(pages_prefix(doc_id))),
                       len(self.store.list_keys(f"{ocr_prefix(doc_id)}{PAGES_FOLDER}")))
                   for doc_id in self.running.values())


def _work_key(name: str) -> str:
    """An input's key in the extract's store (its doc_id is made from it)."""
    return f"{INCOMING_PREFIX}{name}"


def _extract_one(store: WorkStore, path: Path, name: str, settings: Settings, engines: Any,
                 memory: Any) -> FileResult:
    """One input through the steps; its results (members too) read out of the store, which then
    forgets it. A write the work folder refuses (a full disk) fails this input alone, saying so."""
    from papersift.pipeline import process_document

    key = _work_key(name)
    document = DocumentRef(doc_id=document_id("local", key), bucket="local", key=key, source_name=name_text(path.name))
    store.refused = None
    started = time.monotonic()
    try:
        try:
            store.upload_file(path, document.key)
        except OSError as exc:  # gone or locked since it was checked, or no room for it
            if store.refused is None:
                return refused_result(name, cannot_read(path, exc))
            raise
        # the output folder holds no per-page files: the store need not write them
        report = process_document(store, document, settings, engines=engines, memory=memory, page_files=False)
        result = _stored_result(store, name, report)
    except OSError:  # the store refused even the failure's record
        if store.refused is None:
            raise
    finally:
        for gone in (document.key, results_prefix(document.doc_id), work_prefix(document.doc_id),
                     members_prefix(document.doc_id)):
            store.delete_prefix(gone)
    if store.refused is not None:  # that, not a step, failed it: said as such
        result = refused_result(name, work_store_failure(store, store.refused))
    result.seconds = time.monotonic() - started
    return result


#: what a file system answers when it cannot take a write (full, over quota, too large, read-only),
#: as opposed to an input that cannot be read
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})


def work_store_failure(store: Any, exc: OSError) -> str:
    """'no room for its work files in DIR: no space left on device' (DIR: the output folder, which
    holds the work folder)."""
    return f"no room for its work files in {store.root.parent}: {system_reason(exc)}"


def _stored_result(store: Any, name: str, report: Any) -> FileResult:
    """A document's result files out of the store, its members' under it (as `papersift run`
    gives them); the document's work files and results are then removed from the store."""
    from papersift.report import ExtractionReport

    prefix = results_prefix(report.doc_id)
    files = {k.removeprefix(prefix): store.get(k) for k in store.list_keys(prefix) if "/" not in k.removeprefix(prefix)}
    result = FileResult.from_files(name, files, 0.0, status=report.status, reason=report.reason)
    result.pages, result.detected_type = report.page_count, report.detected_type
    for member in report.members:
        member_files = results_prefix(member.doc_id) + REPORT_FILE if member.doc_id else ""
        if member_files and store.exists(member_files):
            member_report = ExtractionReport.from_dict(json.loads(store.get(member_files)))
            result.members.append(_stored_result(store, member.path, member_report))
        else:
            result.members.append(FileResult(name=member.path, status=member.status, reason=member.reason))
    for gone in (prefix, work_prefix(report.doc_id), members_prefix(report.doc_id)):
        store.delete_prefix(gone)
    return result


class WorkStore(LocalDirStore):
    """The extract's store, noting the first write its file system refused (a full disk): the
    pipeline records any step's failure as the document's failure, and that one is the output
    folder's, to be said as such. Reset per input (a lane reads one input at a time)."""

    refused: OSError | None = None

    def put(self, key: str, data: bytes, content_type: str = "application/octet-stream",
            metadata: dict[str, str] | None = None) -> None:
        with self._noting_refusals():
            super().put(key, data, content_type, metadata)

    def upload_file(self, path: Path, key: str, metadata: dict[str, str] | None = None,
                    content_type: str | None = None) -> None:
        with self._noting_refusals():
            super().upload_file(path, key, metadata, content_type)

    @contextlib.contextmanager
    def _noting_refusals(self) -> Iterator[None]:
        try:
            yield
        except OSError as exc:
            if exc.errno in WRITE_ERRNOS and self.refused is None:
                self.refused = exc
            raise


@contextlib.contextmanager
def _work_folder(out: Path) -> Iterator[WorkStore]:
    """The extract's store, inside the output folder (not /tmp): a killed run leaves it where the
    user looks, and the next run over the same folder removes it (``remove_stale_output``: a result
    folder may carry any input's name, so only the exact pattern with the marker inside counts)."""
    from papersift_cli.leftovers import make_output_folder

    out.mkdir(parents=True, exist_ok=True)
    folder = make_output_folder(out, "work")
    try:
        yield WorkStore(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
