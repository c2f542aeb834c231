"""Everything else through external tools (7z, then unar, then patool), listing first.

The listing is judged against the limits before anything is extracted; what the tool writes
is judged again on disk, and every call runs with a timeout, a file-size rlimit and a
disk-usage watchdog.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import stat
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from papersift.archives.limits import ArchiveLimits, Run, Stop
from papersift.archives.members import ArchiveStatus, MemberStatus
from papersift.archives.sink import MemberSink
from papersift.names import clean_member_name

#: archive kinds (papersift.sniff) read by external tools (7z, unar, patool); zip, tar and bare
#: streams are read in-process
TOOL_KINDS = frozenset({"7z", "rar", "cab", "arj", "lzh", "iso", "cpio", "ar"})



def read_with_tools(frame: MemberSink, path: Path, kind: str) -> tuple[ArchiveStatus, str]:
    engines = ("unar", "7z") if kind in ("rar", "lzh") else ("7z", "unar")
    reasons: list[str] = []
    listed_empty: list[str] = []
    for engine in engines:
        listing = _list_7z if engine == "7z" else _list_lsar
        try:
            entries, password = listing(path, frame.run)
        except _EncryptedListing as exc:
            return ArchiveStatus.ENCRYPTED, str(exc)
        except ToolError as exc:
            reasons.append(f"{engine}: {exc}")
            continue
        if not entries:
            # an empty listing is believed only if no other tool finds the file broken
            listed_empty.append(engine)
            continue
        return _extract_listed(frame, path, engine, entries, password)
    if listed_empty:
        if reasons:
            return ArchiveStatus.CORRUPT, "; ".join(reasons) + f"; {', '.join(listed_empty)}: lists no member"
        return ArchiveStatus.OK, ""
    try:
        return _patool(frame, path)
    except ToolError as exc:
        reasons.append(f"patool: {exc}")
    return ArchiveStatus.CORRUPT, "; ".join(reasons)


def _extract_listed(
    frame: MemberSink, path: Path, engine: str, entries: list[_Entry], password: str | None
) -> tuple[ArchiveStatus, str]:
    """Check the listing against the limits, extract what passes, re-check on disk."""
    run, lim = frame.run, frame.run.limits
    wanted: list[_Entry] = []
    planned = 0
    stopped = ""
    for entry in entries:
        if entry.is_dir:
            continue
        if not stopped and run.member_count + len(wanted) >= lim.max_members:
            stopped = f"more than {lim.max_members} members (max_archive_members)"
        if stopped:
            run.stop_reason = run.stop_reason or stopped
            frame.skip_rest(iter([entry.name]), stopped)
            continue
        verdict = _judge_listed(entry, password, lim)
        if verdict is not None:
            run.member_count += 1
            frame.record(entry.name, verdict[0], verdict[1], entry.size)
            continue
        if planned + entry.size > run.budget_left():
            stopped = (
                f"the listing declares more than the {run.budget_left()} bytes left of the budget "
                "(max_archive_total_bytes / max_compression_ratio)"
            )
            run.stop_reason = run.stop_reason or stopped
            frame.skip_rest(iter([entry.name]), stopped)
            continue
        planned += entry.size
        wanted.append(entry)
    if wanted:
        out = run.tmp_dir()
        try:
            partial = len(wanted) != sum(1 for e in entries if not e.is_dir)
            error = _run_extract(path, engine, out, wanted, partial, password, run)
            _collect(frame, out, wanted, error)
        finally:
            shutil.rmtree(out, ignore_errors=True)
    if stopped:
        raise Stop(stopped)
    return ArchiveStatus.OK, ""


def _collect(frame: MemberSink, out: Path, wanted: list[_Entry], error: str) -> None:
    """Walk what the tool wrote; never follow links; match files back to the listing."""
    found: dict[str, Path] = {}
    for root, dirs, files in os.walk(out, followlinks=False):
        for fname in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            full = Path(root) / fname
            found[full.relative_to(out).as_posix()] = full
    remaining = iter(wanted)
    try:
        for entry in remaining:
            key = _tool_key(entry.name)
            stub = key in found and error and entry.packed > 0 and found[key].lstat().st_size == 0
            if stub:  # the tool failed while writing it: an empty stub is not the member
                found.pop(key)
            if key not in found:
                status = MemberStatus.ENCRYPTED if entry.encrypted else MemberStatus.ERROR
                count_member(frame, entry.name)
                frame.record(entry.name, status, f"not extracted by the tool: {error or 'no output'}", entry.size)
                continue
            _take(frame, entry.name, found.pop(key))
        for rel in sorted(found):  # written but not in the listing (renamed by the tool)
            _take(frame, rel, found.pop(rel))
    except Stop as stop:  # every member still gets its entry, skipped_limit with the reason
        rest = [e.name for e in remaining]
        listed = {_tool_key(name) for name in rest}
        frame.skip_rest(iter([*rest, *(rel for rel in sorted(found) if rel not in listed)]), str(stop))
        raise


def count_member(frame: MemberSink, name: str) -> None:
    """Count a member without bytes; past the limit it is listed skipped_limit like any other."""
    try:
        frame.run.count_member()
    except Stop as stop:
        frame.skip_rest(iter([name]), str(stop))
        raise


def _take(frame: MemberSink, raw: str, full: Path) -> None:
    st = full.lstat()
    if not stat.S_ISREG(st.st_mode):
        count_member(frame, raw)
        frame.record(raw, MemberStatus.UNSAFE_PATH, "link or special file written by the tool: not followed")
        return
    frame.add_file(raw, lambda: open(full, "rb"), declared_size=st.st_size)  # noqa: SIM115


def _patool(frame: MemberSink, path: Path) -> tuple[ArchiveStatus, str]:
    """Last resort without a listing: extract, then judge every file on disk."""
    out = frame.run.tmp_dir()
    try:
        script = (
            "import sys, patoolib; patoolib.extract_archive(sys.argv[1], outdir=sys.argv[2], "
            "interactive=False, verbosity=-1, password=sys.argv[3] or None)"
        )
        password = frame.run.passwords[0] if frame.run.passwords else ""
        rc, _, err = _run_tool([sys.executable, "-c", script, str(path), str(out), password], out, frame.run)
        files = [p for p in out.rglob("*") if p.is_file() or p.is_symlink()]
        if rc != 0:
            # a failed run leaves empty stubs of what it was writing: artefacts, not members
            files = [p for p in files if p.is_symlink() or p.stat().st_size > 0]
            if not files:
                raise ToolError(_last_line(err) or f"exit code {rc}")
        for full in sorted(files):
            _take(frame, full.relative_to(out).as_posix(), full)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    if rc != 0:
        # what was written before the failure is kept and listed; the archive is still damaged
        return ArchiveStatus.CORRUPT, f"patool: {_last_line(err) or f'exit code {rc}'}"
    return ArchiveStatus.OK, ""


def _judge_listed(entry: _Entry, password: str | None, lim: ArchiveLimits) -> tuple[MemberStatus, str] | None:
    """Why a listed member must not be extracted, or None when it may be."""
    if entry.is_link:
        return MemberStatus.UNSAFE_PATH, "link: not followed"
    clean, note = clean_member_name(entry.name)
    if clean is None:
        return MemberStatus.UNSAFE_PATH, note
    if entry.size > lim.max_member_bytes:
        return (
            MemberStatus.SKIPPED_LIMIT,
            f"declared size {entry.size} bytes is above {lim.max_member_bytes} (max_file_bytes)",
        )
    if entry.packed and entry.size > lim.ratio_floor_bytes and entry.size > lim.max_ratio * entry.packed:
        return MemberStatus.SKIPPED_LIMIT, (
            f"compression ratio above {lim.max_ratio}:1 ({entry.size} bytes from {entry.packed}; max_compression_ratio)"
        )
    if entry.encrypted and password is None:
        return MemberStatus.ENCRYPTED, "encrypted; no supplied password opens it"
    return None


def _tool_key(name: str) -> str:
    """How 7z/unar lay out a listed name on disk (relative, no leading slash)."""
    return "/".join(p for p in name.replace("\\", "/").split("/") if p not in ("", "."))


class ToolError(Exception):
    pass


class _EncryptedListing(Exception):
    pass


@dataclass
class _Entry:
    name: str
    size: int
    packed: int
    is_dir: bool
    is_link: bool
    encrypted: bool
    index: int


def _run_tool(cmd: list[str], out: Path | None, run: Run) -> tuple[int, str, str]:
    """Run with a timeout, a per-file size rlimit and a watchdog on disk usage under ``out``."""
    limit = run.limits.max_member_bytes + 1
    budget = run.budget_left()
    timeout = max(1.0, min(run.limits.tool_timeout_seconds, run.seconds_left()))

    def confine() -> None:  # runs in the child: a file beyond the limit gets SIGXFSZ
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=confine,
        start_new_session=True,
        env={**os.environ, "LC_ALL": "C.UTF-8"},
    )
    deadline = time.monotonic() + timeout
    killed = ""
    stdout_chunks: list[bytes] = []
    try:
        while True:
            try:
                out_b, err_b = proc.communicate(timeout=0.25)
                stdout_chunks.append(out_b)
                break
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() > deadline:
                killed = f"timed out after {timeout:g} s"
            elif out is not None and _disk_usage(out) > budget:
                killed = f"output grew beyond the {budget} bytes left of the budget"
            if killed:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, 9)
                out_b, err_b = proc.communicate()
                break
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = err_b.decode("utf-8", "replace").strip()
    if killed:
        raise ToolError(f"{Path(cmd[0]).name} {killed}")
    return proc.returncode, b"".join(stdout_chunks).decode("utf-8", "replace"), err


def _disk_usage(root: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(root):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, f)).st_size
    return total


def _list_7z(path: Path, run: Run) -> tuple[list[_Entry], str | None]:
    """List with 7z -slt; returns entries and the password that opens them (None: none needed/found)."""
    tried: list[str | None] = [None, *run.passwords]
    for pw in tried:
        rc, out, err = _run_tool(["7z", "l", "-slt", "-bd", "-sccUTF-8", f"-p{pw or ''}", "--", str(path)], None, run)
        if "Cannot open encrypted archive" in err or "Wrong password" in err:
            continue
        if rc != 0 and "----------" not in out:
            raise ToolError(_last_line(err) or f"7z exit code {rc}")
        entries = _parse_7z_slt(out)
        if any(e.encrypted for e in entries):
            return entries, _find_password_7z(path, run)
        return entries, pw
    if run.passwords:
        raise _EncryptedListing("the file list is encrypted and no supplied password opens it")
    raise _EncryptedListing("the file list is encrypted and no password was supplied")


def _find_password_7z(path: Path, run: Run) -> str | None:
    for pw in run.passwords:
        rc, _, _ = _run_tool(["7z", "t", "-bd", f"-p{pw}", "--", str(path)], None, run)
        if rc == 0:
            return pw
    return None


def _parse_7z_slt(out: str) -> list[_Entry]:
    _, _, body = out.partition("\n----------\n")
    entries: list[_Entry] = []
    for index, block in enumerate(b for b in body.split("\n\n") if b.strip()):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, sep, value = line.partition(" = ")
            if sep:
                fields[key.strip()] = value
        if "Path" not in fields:
            continue
        attrs = fields.get("Attributes", "")
        unix = attrs.split(" ")[-1] if " " in attrs else ""
        entries.append(
            _Entry(
                name=fields["Path"],
                size=_int(fields.get("Size")),
                packed=_int(fields.get("Packed Size")),
                is_dir=fields.get("Folder") == "+" or attrs.startswith("D") or unix.startswith("d"),
                is_link=bool(fields.get("Symbolic Link")) or bool(fields.get("Hard Link")) or unix.startswith("l"),
                encrypted=fields.get("Encrypted") == "+",
                index=index,
            )
        )
    return entries


def _list_lsar(path: Path, run: Run) -> tuple[list[_Entry], str | None]:
    tried: list[str | None] = [None, *run.passwords]
    for pw in tried:
        cmd = ["lsar", "-j", "-nr", *(["-p", pw] if pw else []), "--", str(path)]
        rc, out, err = _run_tool(cmd, None, run)
        try:
            doc = json.loads(out)
        except json.JSONDecodeError as exc:
            if "password" in (out + err).lower() or "encrypt" in (out + err).lower():
                continue
            raise ToolError(_last_line(err) or _last_line(out) or f"lsar exit code {rc}") from exc
        if doc.get("lsarError") and not doc.get("lsarContents"):
            raise ToolError(f"lsar error {doc.get('lsarError')}")
        if "lsarContents" not in doc and "lsarFormatName" not in doc:
            # lsar exits 0 with an empty document for bytes it cannot read as any archive
            raise ToolError("lsar does not recognise the file as an archive")
        entries = [
            _Entry(
                name=str(item.get("XADFileName", "")),
                size=_int(item.get("XADFileSize")),
                packed=_int(item.get("XADCompressedSize")),
                is_dir=bool(item.get("XADIsDirectory")),
                is_link=bool(item.get("XADIsLink")) or bool(item.get("XADIsHardLink")),
                encrypted=bool(item.get("XADIsEncrypted")),
                index=int(item.get("XADIndex", i)),
            )
            for i, item in enumerate(doc.get("lsarContents", []))
        ]
        if any(e.encrypted for e in entries):
            return entries, _find_password_lsar(path, run)
        return entries, pw
    raise _EncryptedListing("the file list is encrypted and no supplied password opens it")


def _find_password_lsar(path: Path, run: Run) -> str | None:
    for pw in run.passwords:
        rc, out, _ = _run_tool(["lsar", "-t", "-nr", "-p", pw, "--", str(path)], None, run)
        if rc == 0 and "wrong password" not in out.lower():
            return pw
    return None


def _run_extract(
    path: Path, engine: str, out: Path, wanted: list[_Entry], partial: bool, password: str | None, run: Run
) -> str:
    """Extract ``wanted`` into ``out``; returns the tool's error text ('' when clean)."""
    try:
        if engine == "7z":
            cmd = ["7z", "x", "-y", "-bd", "-spd", f"-p{password or ''}", f"-o{out}"]
            if partial:
                listfile = out.parent / (out.name + ".list")
                listfile.write_text("\n".join(e.name for e in wanted) + "\n", encoding="utf-8")
                cmd += ["-scsUTF-8", f"-i@{listfile}"]
            cmd += ["--", str(path)]
        else:
            cmd = ["unar", "-q", "-nr", "-f", "-D", "-k", "skip", "-o", str(out)]
            if password:
                cmd += ["-p", password]
            if partial:  # the arguments after the archive are lsar indexes
                cmd += ["-i", "--", str(path), *(str(e.index) for e in wanted)]
            else:
                cmd += ["--", str(path)]
        rc, stdout, err = _run_tool(cmd, out, run)
    except ToolError as exc:
        return str(exc)
    return "" if rc == 0 else (_last_line(err) or _last_line(stdout) or f"exit code {rc}")


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _int(value: object) -> int:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return 0
