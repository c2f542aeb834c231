"""The document verdict: one status and reason for a document from its pages, its errors and its
plan, for an archive from its members, and for a document that holds files from both. The one place
that decides trust."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from papersift import archives
from papersift.errors import input_error_code
from papersift.report import (
    TRUSTED_DOCUMENT_STATUSES,
    TRUSTED_PAGE_STATUSES,
    DocumentStatus,
    ErrorRecord,
    MemberReport,
    PageReport,
    PageStatus,
    limit_code_of,
    status_for_error,
)
from papersift.steps.contracts import ArchiveListing, Plan, Route, StepError

#: unpack statuses that are no problem: a nested archive whose members are listed on their own
_UNPACK_ONLY = frozenset({archives.MemberStatus.EXPANDED})


def archive_verdict(listing: ArchiveListing, members: list[MemberReport]) -> tuple[DocumentStatus, str]:
    """An archive is trusted only when every member document is and none was left out; a member
    cut short or skipped by a limit makes the whole archive limit_exceeded."""
    documents = [m for m in members if m.doc_id]
    archive_ok = listing.status == archives.ArchiveStatus.OK
    if not documents:
        if archive_ok:
            status = DocumentStatus.EMPTY if not members else DocumentStatus.NEEDS_REVIEW
        else:
            status = status_for_error(listing.status)
        return status, listing.reason or f"no member could be extracted ({len(members)} listed)"
    untrusted = [m for m in documents if m.status not in TRUSTED_DOCUMENT_STATUSES]
    not_extracted = [m for m in members if not m.doc_id and m.status not in _UNPACK_ONLY]
    if archive_ok and not not_extracted and all(m.status == DocumentStatus.EMPTY for m in documents):
        return DocumentStatus.EMPTY, f"every member ({len(documents)}) is empty"
    limits = {DocumentStatus.LIMIT_EXCEEDED, archives.MemberStatus.SKIPPED_LIMIT}
    limited = [m for m in (*untrusted, *not_extracted) if m.status in limits]
    problems = list(dict.fromkeys(f"{m.path}: {m.status}" for m in (*limited, *untrusted, *not_extracted)))
    if not archive_ok:
        problems.insert(0, f"archive {listing.status}: {listing.reason}")
    if problems:
        more = f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""
        # a member cut short or left out by a limit makes the whole archive's text incomplete
        cut = limited or listing.status == archives.ArchiveStatus.LIMIT_EXCEEDED
        status = DocumentStatus.LIMIT_EXCEEDED if cut else DocumentStatus.NEEDS_REVIEW
        return status, "; ".join(problems[:5]) + more
    recovered = any(m.status == DocumentStatus.PARTIALLY_RECOVERED for m in documents)
    status = DocumentStatus.PARTIALLY_RECOVERED if recovered else DocumentStatus.CLEAN
    return status, f"all {len(documents)} member document(s) trusted"


def _limit_failed(pages: Sequence[PageReport]) -> list[PageReport]:
    """Pages a limit stopped (past unit_memory_mb, past page_seconds, a picture no OCR tile can
    hold a line of): failed, but not damaged."""
    return [p for p in pages if p.status == PageStatus.FAILED and (limit_code_of(p.signals) or (
        p.errors and all(status_for_error(e.code) is DocumentStatus.LIMIT_EXCEEDED for e in p.errors)))]


def _limit_verdict(plan: Plan | None, pages: Sequence[PageReport], counts: Counter[str], max_pages: int) -> str:
    """Why the text is cut short (units truncated by a limit or a bomb, pages a limit stopped, pages
    beyond max_pages), or ''."""
    parts: list[str] = []
    truncated = [p for p in pages if p.status == PageStatus.TRUNCATED]
    if truncated:
        first = truncated[0]
        parts.append(f"{len(truncated)} of {len(pages)} unit(s) cut short (unit {first.number}: {first.reason})")
    stopped = _limit_failed(pages)
    if stopped:
        first = stopped[0]
        parts.append(f"{len(stopped)} of {len(pages)} page(s) stopped by a limit ({first.reason})")
    beyond = (plan.page_count - len(pages)) if plan is not None and plan.page_count > max_pages else 0
    skipped = counts[PageStatus.SKIPPED_LIMIT]
    if beyond > 0 or skipped:
        parts.append(f"the document has {max(plan.page_count if plan else 0, len(pages))} pages; only the first "
                     f"{max_pages} are extracted (max_pages)")
    return "; ".join(parts)


def document_verdict(plan: Plan | None, pages: Sequence[PageReport], errors: list[ErrorRecord],
                     failure: StepError | None, max_pages: int, has_text: bool) -> tuple[DocumentStatus, str]:
    """A step's failure, then the plan's final status, then the pages: one bad or unread page is
    enough for review, a limit for limit_exceeded; clean only when every page's text is trusted.
    ``pages``: the pages' reports (not their text: assemble streams the text of a long document);
    ``has_text``: whether any page's text is more than whitespace."""
    if failure is not None:
        code = input_error_code(failure.error)  # the input's fault, even when a step let it escape
        if code is not None:
            return status_for_error(code), failure.reason
        return DocumentStatus.FAILED, "pipeline step failed: " + failure.reason
    if plan is not None and plan.route() is Route.ASSEMBLE:
        return DocumentStatus(plan.status), plan.reason
    if errors and not pages:
        return status_for_error(errors[0].code), errors[0].reason
    if not pages:
        return DocumentStatus.EMPTY, "no text units were extracted"
    counts = Counter(p.status for p in pages)
    total = len(pages)
    bad = counts[PageStatus.CORRUPT_UNRECOVERABLE] + counts[PageStatus.FAILED]
    review = bad + counts[PageStatus.NEEDS_OCR] + counts[PageStatus.LOW_CONFIDENCE]
    if bad == total and not _limit_failed(pages):  # a page a limit stopped is not damaged
        return DocumentStatus.CORRUPT_UNRECOVERABLE, f"no page of {total} has usable text"
    limited = _limit_verdict(plan, pages, counts, max_pages)
    if limited:
        return DocumentStatus.LIMIT_EXCEEDED, limited
    if review:
        parts = [f"{n} page(s) {s}" for s, n in sorted(counts.items()) if s not in TRUSTED_PAGE_STATUSES]
        return DocumentStatus.NEEDS_REVIEW, "; ".join(parts) + f" of {total}"
    if not has_text:
        engines = ", ".join(sorted({p.engine for p in pages if p.engine})) or "no engine"
        return DocumentStatus.EMPTY, f"no text found in {total} unit(s) ({engines})"
    if counts[PageStatus.RECOVERED] or counts[PageStatus.OCR]:
        how = [f"{counts[PageStatus.RECOVERED]} page(s) recovered by a fallback engine"] \
            if counts[PageStatus.RECOVERED] else []
        blank = sum(1 for p in pages if p.status == PageStatus.OCR and "blank_page" in p.signals)
        how += [f"{counts[PageStatus.OCR] - blank} page(s) read by OCR"] if counts[PageStatus.OCR] > blank else []
        how += [f"{blank} blank page(s)"] if blank else []
        return DocumentStatus.PARTIALLY_RECOVERED, f"{', '.join(how)} of {total}, all trusted"
    return DocumentStatus.CLEAN, f"all {total} page(s) have a trusted text layer"


def holder_verdict(own: tuple[str, str], members: tuple[DocumentStatus, str]) -> tuple[DocumentStatus, str]:
    """A document that holds files (a PDF, an email): its own verdict (``document_verdict``), unless
    its members' (``archive_verdict``) make the result less trustworthy. A member left out by a
    limit makes its text incomplete (``limit_exceeded``, as in an archive); any other trouble with
    them (untrusted, unreadable, a listing that broke off) leaves its own text sound and the whole
    to review (``needs_review``)."""
    (own_status, own_reason), (members_status, members_reason) = (DocumentStatus(own[0]), own[1]), members
    reason = f"{own_reason}; attachments: {members_reason}"
    if members_status in TRUSTED_DOCUMENT_STATUSES or members_status == DocumentStatus.EMPTY:
        if members_status == DocumentStatus.EMPTY or own_status not in TRUSTED_DOCUMENT_STATUSES:
            return own_status, own_reason
        recovered = DocumentStatus.PARTIALLY_RECOVERED in (own_status, members_status)
        return (DocumentStatus.PARTIALLY_RECOVERED if recovered else own_status), reason
    worse = DocumentStatus.LIMIT_EXCEEDED if members_status == DocumentStatus.LIMIT_EXCEEDED \
        else DocumentStatus.NEEDS_REVIEW
    if own_status in TRUSTED_DOCUMENT_STATUSES or own_status == DocumentStatus.EMPTY or (
            own_status == DocumentStatus.NEEDS_REVIEW and worse == DocumentStatus.LIMIT_EXCEEDED):
        return worse, reason
    return own_status, reason
