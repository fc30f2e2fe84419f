"""An ingest's thread budget: conversion jobs and embedder threads never hold more tokens
than the budget has, and tokens go to whoever asked first."""

from __future__ import annotations

import threading
import time

import pytest

from drac.local.cores import ThreadBudget, available_cores, budget_size, grant


@pytest.mark.parametrize(
    ("cores", "jobs", "size"),
    [(2, 2, 2), (2, 1, 2), (4, 2, 4), (2, 8, 8), (1, 1, 1), (0, 0, 1)],
)
def test_the_budget_is_the_cores_or_the_jobs_asked_for_when_more(
    cores: int, jobs: int, size: int
) -> None:
    assert budget_size(cores, jobs) == size


@pytest.mark.parametrize(
    ("free", "wanted", "granted"),
    [(2, 4, 2), (1, 4, 1), (4, 2, 2), (3, 3, 3), (1, 1, 1)],
)
def test_the_embedder_gets_the_free_tokens_it_wants(free: int, wanted: int, granted: int) -> None:
    assert grant(free, wanted) == granted


def test_the_embedder_gets_one_thread_at_least() -> None:
    assert grant(0, 4) == 1 and grant(3, 0) == 1


def test_available_cores_follow_the_affinity() -> None:
    import os

    assert available_cores() == len(os.sched_getaffinity(0))


def test_jobs_and_embedder_threads_never_hold_more_than_the_budget() -> None:
    budget = ThreadBudget(3)
    held: list[int] = []
    guard = threading.Lock()
    holding = [0]

    def hold(count: int) -> None:
        with guard:
            holding[0] += count
            held.append(holding[0])
        time.sleep(0.002)
        with guard:
            holding[0] -= count

    def job() -> None:
        for _ in range(30):
            with budget.job():
                hold(1)

    def embedder() -> None:
        for _ in range(30):
            with budget.threads(4) as granted:
                assert 1 <= granted <= 3
                hold(granted)

    threads = [threading.Thread(target=job) for _ in range(3)]
    threads.append(threading.Thread(target=embedder))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert held and max(held) <= 3 and budget.in_use == 0


def test_the_embedder_waits_for_a_token_then_takes_what_is_free() -> None:
    budget = ThreadBudget(2)
    release = threading.Event()
    granted: list[int] = []

    def converting() -> None:
        with budget.job():
            release.wait(10)

    jobs = [threading.Thread(target=converting) for _ in range(2)]
    for thread in jobs:
        thread.start()
    while budget.in_use < 2:
        time.sleep(0.001)

    def embedding() -> None:
        with budget.threads(4) as count:
            granted.append(count)

    waiting = threading.Thread(target=embedding)
    waiting.start()
    time.sleep(0.05)
    assert granted == []  # every core converts: the embedder waits
    release.set()
    for thread in [*jobs, waiting]:
        thread.join(timeout=10)
    assert granted and 1 <= granted[0] <= 2


def test_tokens_go_first_to_whoever_asked_first() -> None:
    budget = ThreadBudget(1)
    order: list[str] = []
    first = budget.job()
    first.__enter__()

    def ask(name: str, wanted: int | None) -> None:
        if wanted is None:
            with budget.job():
                order.append(name)
        else:
            with budget.threads(wanted):
                order.append(name)

    embedder = threading.Thread(target=ask, args=("embedder", 2))
    embedder.start()
    while not budget._waiting:  # the embedder is queued before the next job asks
        time.sleep(0.001)
    job = threading.Thread(target=ask, args=("job", None))
    job.start()
    while len(budget._waiting) < 2:
        time.sleep(0.001)
    first.__exit__(None, None, None)
    for thread in (embedder, job):
        thread.join(timeout=10)
    assert order == ["embedder", "job"]


def test_a_job_lends_its_token_while_it_waits_and_takes_one_again() -> None:
    budget = ThreadBudget(1)
    with budget.job():
        assert budget.in_use == 1
        with budget.lent():
            assert budget.in_use == 0
            with budget.job():  # another job (a LibreOffice batch) can run meanwhile
                assert budget.in_use == 1
        assert budget.in_use == 1
    assert budget.in_use == 0


def test_outside_a_job_nothing_is_lent() -> None:
    budget = ThreadBudget(2)
    with budget.lent():
        assert budget.in_use == 0
    with budget.threads(2), budget.lent():  # the embedder's threads are not a job's token
        assert budget.in_use == 2
    assert budget.in_use == 0


def test_a_result_waited_for_in_short_polls_is_the_futures_own() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from drac.local.cores import join, result_of

    with ThreadPoolExecutor(max_workers=2) as pool:
        slow = pool.submit(lambda: time.sleep(0.6) or "rendered")  # longer than one poll
        failing = pool.submit(lambda: (_ for _ in ()).throw(TimeoutError("the work's own")))
        assert result_of(slow) == "rendered"
        with pytest.raises(TimeoutError, match="the work's own"):
            result_of(failing)
    thread = threading.Thread(target=time.sleep, args=(0.6,))
    thread.start()
    join(thread)
    assert not thread.is_alive()
