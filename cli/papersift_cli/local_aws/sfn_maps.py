"""moto's Map iterations, with what made large Maps fail or grow taken out (same behaviour otherwise).

- A Map worker ran its jobs by recursion: ``_eval_pool`` evaluated one job and called itself for the
  next, one Python frame per job, each keeping its finished job alive until the last returned. A
  Distributed Map of 20,000 archive members with MaxConcurrency 10 nests 2,000 deep per worker:
  past the recursion limit (1,000) the worker thread died with RecursionError, its job was never
  closed and the Map (and ``papersift run``) waited forever. :func:`inline_eval_pool` and
  :func:`distributed_eval_pool` are the same steps as a loop.
- A Distributed Map's child executions wrote their history events into one event manager created
  for the Map Run, which moto never shows (AWS keeps a history per child execution; moto lists no
  child executions) and drops when the Map ends: every state of every child, inputs and outputs
  included, stayed in memory until then (tens of events per archive member).
  :class:`UnrecordedEventManager` numbers the events as before and keeps none.
- moto appends every thread its Step Functions start (a few per state of every iteration) to a
  module-level list, ``TMP_THREADS``, that nothing reads or empties: 16 finished threads a member,
  each with its locks and events, ~50 KB a member of a big archive's run. :class:`LiveThreads`
  keeps only those still running.
"""

from __future__ import annotations

import threading
from typing import Any

from moto.stepfunctions.parser.asl.eval.event.event_manager import EventManager


def inline_eval_pool(worker: Any, job: Any, worker_frame: Any) -> None:
    """``IterationWorker._eval_pool`` (inline Maps) without the recursion."""
    _eval_jobs(worker, job, worker_frame, distributed=False)


def distributed_eval_pool(worker: Any, job: Any, worker_frame: Any) -> None:
    """``DistributedItemProcessorWorker._eval_pool`` (Distributed Maps) without the recursion."""
    _eval_jobs(worker, job, worker_frame, distributed=True)


def _eval_jobs(worker: Any, job: Any, worker_frame: Any, *, distributed: bool) -> None:
    """moto's two ``_eval_pool``s as one loop: they differ only in that a Distributed Map's frames
    are deleted, not closed, and an inline Map's last iteration is the source of what follows."""
    def done(owner: Any, frame: Any) -> None:
        (owner.delete_frame if distributed else owner.close_frame)(frame)

    while job is not None:
        job_frame = worker_frame.open_inner_frame()
        worker._eval_job(env=job_frame, job=job)
        done(worker_frame, job_frame)
        next_job = None
        if not (isinstance(job.job_output, Exception) or worker.stopped()):
            next_job = worker._job_pool.next_job()
            if next_job is None and not distributed:
                # the last iteration's events are the source of the states that follow the Map
                worker_frame.event_history_context.source_event_id = \
                    job_frame.event_history_context.last_published_event_id
        if next_job is None:
            done(worker._env, worker_frame)
            worker._job_pool.close_job(job)
            return
        worker._job_pool.close_job(job)
        job = next_job
    done(worker._env, worker_frame)


class UnrecordedEventManager(EventManager):
    """Event ids and CloudWatch log records as moto's, no history kept (a Map Run's children)."""

    def _publish_history_event(self, *args: Any, **kwargs: Any) -> None:
        return None


class LiveThreads(list[threading.Thread]):
    """``TMP_THREADS`` that forgets finished threads (looked at when it has doubled since)."""

    def __init__(self, threads: list[threading.Thread]) -> None:
        super().__init__(threads)
        self._pruned_at = len(self)

    def append(self, thread: threading.Thread) -> None:
        super().append(thread)
        if len(self) >= 2 * max(self._pruned_at, 64):
            self[:] = [t for t in self if t.is_alive() or not t.ident]  # not yet started: kept
            self._pruned_at = len(self)
