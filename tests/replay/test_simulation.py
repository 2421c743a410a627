"""The replay loop on small traces: waits, late starts keeping their runtime, evictions re-running,
gangs starting whole, time-weighted figures, and the same figures every time."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import numpy as np
import pytest

from loadmaster.core.model import Job, Node, Queue, SchedulerConfig, Task, TaskStatus
from loadmaster.core.search_backoff import SearchBackoff
from loadmaster.replay.figures import summary_of, time_weighted_mean
from loadmaster.replay.run import Window
from loadmaster.replay.run_config import RunConfig, run_config_of
from loadmaster.replay.simulation import JobRecord, Replay
from loadmaster.replay.trace import Arrivals, Trace, TraceJob
from loadmaster.replay.traces import load_trace
from loadmaster.scenario.errors import ScenarioError

TIMING = ("scheduler_cpu_s", "wall_s")


def node(name: str, cpu: int = 4000) -> Node:
    alloc = {"cpu": cpu, "memory": 2**30}
    return Node(name, alloc, alloc)


def job(
    name: str, cpu: int, tasks: int = 1, min_available: int = 1, priority: int = 50, preemptible: bool = True
) -> Job:
    return Job(
        name,
        tuple(Task(f"{name}-{i}", name, {"cpu": cpu}) for i in range(tasks)),
        priority=priority,
        preemptible=preemptible,
        min_available=min_available,
    )


def placed_at(jobs: list[JobRecord], name: str) -> float | None:
    return next(j.placed_s for j in jobs if j.name == name)


def test_a_job_waits_for_room_and_keeps_its_runtime_when_it_starts_late() -> None:
    trace = Trace(
        "t", (node("n1"),), Arrivals.of((TraceJob(job("a", 4000), 0, 100), TraceJob(job("b", 4000), 10, 50)))
    )
    result = Replay(trace, RunConfig()).run()
    assert placed_at(result.jobs, "a") == 0 and placed_at(result.jobs, "b") == 100
    assert [s.at_s for s in result.samples] == [0, 10, 100, 150]  # b leaves 50 s after its late start
    assert result.samples[-1].cpu_used == 0
    summary = summary_of(result)
    assert summary["wait_s"] == {"p50": 0.0, "p95": 90.0, "p99": 90.0}
    assert (summary["placed"], summary["never_placed"]) == (2, 0)


def test_an_evicted_job_runs_its_whole_runtime_again_once_placed_anew() -> None:
    low = job("low", 4000, priority=10, preemptible=True)
    high = job("high", 4000, priority=200, preemptible=False)
    trace = Trace("t", (node("n1"),), Arrivals.of((TraceJob(low, 0, 100), TraceJob(high, 30, 40))))
    config = RunConfig(scheduler=SchedulerConfig(actions=("allocate", "preempt")))
    result = Replay(trace, config).run()
    assert result.evictions == 1
    assert placed_at(result.jobs, "high") == 30
    assert placed_at(result.jobs, "low") == 0  # placed once, at 0: its wait counts its first start
    # high leaves at 70; low starts again then and runs its whole 100 s: the last departure is at 170
    assert result.samples[-1].at_s == 170


def test_a_gang_starts_whole_when_enough_nodes_are_free() -> None:
    nodes = (node("n1", 1000), node("n2", 1000))
    trace = Trace(
        "t",
        nodes,
        Arrivals.of(
            (TraceJob(job("solo", 1000), 0, 60), TraceJob(job("gang", 1000, 2, min_available=2), 5, 10))
        ),
    )
    result = Replay(trace, RunConfig()).run()
    assert placed_at(result.jobs, "gang") == 60  # not at 5 with one task: all or nothing
    assert max(s.cpu_used for s in result.samples) == 2000


def test_a_job_that_never_fits_is_counted_never_placed() -> None:
    trace = Trace("t", (node("n1", 1000),), Arrivals.of((TraceJob(job("huge", 8000), 0, 10),)))
    summary = summary_of(Replay(trace, RunConfig()).run())
    assert (summary["placed"], summary["never_placed"], summary["wait_s"]["p50"]) == (0, 1, None)


def test_utilisation_is_a_time_weighted_mean() -> None:
    # half the cluster for 100 s, then all of it for 100 s: 75 % over the 200 s
    trace = Trace(
        "t",
        (node("n1"),),
        Arrivals.of((TraceJob(job("a", 2000), 0, 200), TraceJob(job("b", 2000), 100, 100))),
    )
    result = Replay(trace, RunConfig()).run()
    assert time_weighted_mean(result.samples, "cpu_used") == 3000
    assert summary_of(result)["utilisation"]["cpu"] == 0.75


def test_the_same_trace_and_config_give_the_same_figures(traces: Path) -> None:
    trace = Window(11_000_000, 11_100_000).apply(load_trace("openb", traces))
    assert len(trace.jobs) > 50
    config = RunConfig(name="pack", scheduler=SchedulerConfig(profile="gpu_pack"))
    first, second = (summary_of(Replay(trace, config, until_s=11_100_000).run()) for _ in range(2))
    for timing in TIMING:
        first.pop(timing), second.pop(timing)
    assert first == second
    assert first["placed"] > 0


class TrackedTask(Task):
    """A task a weak reference can follow: it shows when the replay lets a task go."""

    __slots__ = ("__weakref__",)


def test_a_streamed_trace_makes_each_job_as_it_arrives_and_lets_it_go_once_its_tasks_have_left() -> None:
    arrivals_s, runtime_s = [0.0, 20.0, 40.0, 60.0], 10.0
    made: list[weakref.ref[Task]] = []

    def make(i: int) -> TraceJob:
        name = f"j{i}"
        task = TrackedTask(f"{name}-0", name, {"cpu": 1000})
        made.append(weakref.ref(task))
        return TraceJob(Job(name, (task,)), arrivals_s[i], runtime_s)

    counts = np.ones(len(arrivals_s), dtype=np.int64)
    trace = Trace("t", (node("n1"),), Arrivals(np.array(arrivals_s), counts, make))
    seen: list[tuple[float, int, int]] = []  # (instant, jobs made, their tasks still alive)

    def look(now: float, placed: int) -> None:
        gc.collect()  # a cycle's snapshot refers to itself: what is left after a collection is kept
        seen.append((now, len(made), sum(ref() is not None for ref in made)))

    Replay(trace, RunConfig()).run(look)
    # each job is made at its arrival; once it has left (10 s later) only the next cycle's task is alive
    # (the snapshot cache holds the last cycle's columns until the next cycle)
    assert seen == [
        (0, 1, 1),
        (10, 1, 1),
        (20, 2, 1),
        (30, 2, 1),
        (40, 3, 1),
        (50, 3, 1),
        (60, 4, 1),
        (70, 4, 1),
    ]


def test_a_streamed_trace_replays_as_the_same_jobs_made_up_front_and_the_same_every_time(
    traces: Path,
) -> None:
    streamed = Window(0, 1200).apply(load_trace("alibaba-2017:400", traces))
    made = Trace(streamed.name, streamed.nodes, Arrivals.of(list(streamed.jobs)))
    assert len(streamed.jobs) > 100
    summaries = [
        summary_of(Replay(trace, RunConfig(), until_s=1200).run()) for trace in (streamed, made, streamed)
    ]
    for summary in summaries:
        for timing in TIMING:
            summary.pop(timing)
    assert summaries[0] == summaries[1] == summaries[2]
    assert summaries[0]["placed"] > 100


def test_a_trace_with_queues_of_its_own_replays_with_them_unless_the_config_names_others() -> None:
    queues = (Queue("team-a", deserved={"cpu": 4000}),)
    queued = Job("a", (Task("a-0", "a", {"cpu": 1000}),), queue="team-a")
    trace = Trace("t", (node("n1"),), Arrivals.of((TraceJob(queued, 0, 10),)), queues)
    assert summary_of(Replay(trace, RunConfig()).run())["placed"] == 1
    other = RunConfig(queues=(Queue("team-b"),))
    assert summary_of(Replay(trace, other).run())["never_placed"] == 1  # team-a is not a queue there


def test_the_progress_counts_jobs_placed_by_each_instant() -> None:
    trace = Trace(
        "t", (node("n1"),), Arrivals.of((TraceJob(job("a", 4000), 0, 100), TraceJob(job("b", 4000), 10, 50)))
    )
    told: list[tuple[float, int]] = []
    Replay(trace, RunConfig()).run(lambda now, placed: told.append((now, placed)))
    assert told == [(0, 1), (10, 1), (100, 2), (150, 2)]  # b waits from 10 s and starts at 100 s


def test_tasks_placed_counts_each_task_once_however_often_it_is_evicted_and_restarted() -> None:
    low = job("low", 2000, tasks=2, priority=10, preemptible=True)
    high = job("high", 4000, priority=200, preemptible=False)
    trace = Trace("t", (node("n1"),), Arrivals.of((TraceJob(low, 0, 100), TraceJob(high, 30, 40))))
    replay = Replay(trace, RunConfig(scheduler=SchedulerConfig(actions=("allocate", "preempt"))))
    seen: list[tuple[float, int]] = []
    result = replay.run(lambda now, placed: seen.append((now, replay.tasks_placed)))
    assert result.evictions == 2  # both of low's tasks make room for high, and start again at 70
    # 100 is the evicted runs' stale departure; 170 the restarted runs' own (their whole runtime anew)
    assert seen == [(0, 2), (30, 3), (70, 3), (100, 3), (170, 3)]
    assert replay.tasks_placed == 3


def test_a_running_task_keeps_the_gpu_devices_it_was_bound_to() -> None:
    """b binds to device 1 while a holds device 0; once a leaves, c gets device 0. Derived again from
    input order each cycle, b would count as holding device 0 and c would be given device 1."""
    alloc = {"cpu": 4000, "memory": 2**30, "gpu": 2000}

    def gpu_job(name: str) -> Job:
        return Job(name, (Task(f"{name}-0", name, {"cpu": 100, "gpu": 1000}),))

    trace = Trace(
        "t",
        (Node("g1", alloc, alloc),),
        Arrivals.of(
            (
                TraceJob(gpu_job("a"), 0, 50),
                TraceJob(gpu_job("b"), 10, None),
                TraceJob(gpu_job("c"), 60, None),
            )
        ),
    )
    replay = Replay(trace, RunConfig())
    replay.run()
    assert (replay._runs["b-0"].devices, replay._runs["c-0"].devices) == ((1,), (0,))


def test_fragmentation_is_measured_as_often_as_the_run_asks_and_held_in_between() -> None:
    # two devices: a half-GPU task, then a whole-GPU one; the half left on the first device is a fragment
    # for the whole-GPU shape, which exists from 10 s on
    alloc = {"cpu": 4000, "memory": 2**30, "gpu": 2000}
    half = Job("half", (Task("half-0", "half", {"cpu": 100, "gpu": 500}),))
    whole = Job("whole", (Task("whole-0", "whole", {"cpu": 100, "gpu": 1000}),))
    trace = Trace(
        "t", (Node("n1", alloc, alloc),), Arrivals.of((TraceJob(half, 0, 100), TraceJob(whole, 10, 100)))
    )
    hourly = Replay(trace, RunConfig()).run().samples
    every_instant = Replay(trace, RunConfig(), fragmentation_every_s=0.0).run().samples
    assert [s.at_s for s in hourly][:2] == [s.at_s for s in every_instant][:2] == [0, 10]
    assert hourly[1].fragmented_gpu == hourly[0].fragmented_gpu == 0.0  # held from 0 s
    assert every_instant[1].fragmented_gpu > 0.0


def fragmented_by_small_tasks() -> Trace:
    """Five 4-CPU nodes: n1 full (a, c, k), the others with 1 CPU free each; n3 runs a 1-CPU task m.
    Two 2-CPU jobs wait: e gets n3 by moving m to another node (one move), f gets n1 only by moving both
    c and k off it: two moves in one cycle, onto the two nodes m's move left alone (the move ledger
    closes m's destination for 2 minutes)."""
    running = {"a": ("n1", 2000), "c": ("n1", 1000), "k": ("n1", 1000), "b": ("n2", 3000)}
    running |= {"g": ("n3", 2000), "m": ("n3", 1000), "h": ("n4", 3000), "x": ("n5", 3000)}
    jobs = [
        Job(name, (Task(f"{name}-0", name, {"cpu": cpu}, TaskStatus.RUNNING, where),), priority=50)
        for name, (where, cpu) in running.items()
    ]
    jobs += [job("e", 2000), job("f", 2000)]
    return Trace(
        "t", tuple(node(f"n{i}") for i in range(1, 6)), Arrivals.of(TraceJob(j, 0, None) for j in jobs)
    )


def test_consolidation_makes_at_most_the_control_plane_s_moves_per_cycle_unless_the_config_allows_more() -> (
    None
):
    capped = Replay(fragmented_by_small_tasks(), RunConfig()).run()  # the server's default: one move a cycle
    assert (capped.moves, capped.cycles) == (1, 2)  # e's move, e bound; f would need two at once
    assert placed_at(capped.jobs, "e") == 0 and placed_at(capped.jobs, "f") is None
    wider = RunConfig(max_moves_per_cycle=16)  # the scheduler's own budget (16) is then the cap
    free = Replay(fragmented_by_small_tasks(), wider).run()
    assert (free.moves, free.cycles) == (3, 2)  # e's move and f's two in one cycle, both bound next
    assert placed_at(free.jobs, "e") == placed_at(free.jobs, "f") == 0


def test_a_run_s_moves_per_cycle_are_the_scheduler_s_capped_by_the_control_plane_s() -> None:
    assert RunConfig().cycle_config.max_consolidation_moves == 1
    assert RunConfig(max_moves_per_cycle=16).cycle_config.max_consolidation_moves == 16
    few = RunConfig(scheduler=SchedulerConfig(max_consolidation_moves=2), max_moves_per_cycle=5)
    assert few.cycle_config.max_consolidation_moves == 2
    assert run_config_of({"max_moves_per_cycle": 3}, "x").max_moves_per_cycle == 3
    assert run_config_of({}, "x").max_moves_per_cycle == 1
    with pytest.raises(ScenarioError) as refused:
        run_config_of({"max_moves_per_cycle": -1}, "x")
    assert refused.value.path == "max_moves_per_cycle"


def one_move_when_c_leaves(p_arrives_s: float, c_leaves_s: float) -> Trace:
    """First fit on three 4-CPU nodes: n1 full with b, c, d (all started at t = 0), n2 and n3 with 1 CPU
    free each. p (2 CPU) arrives: no single move makes room (two of c, d would have to go), so
    consolidate's search fails. Once c leaves, moving d to n2 makes room for p on n1. Everything else
    runs to t = 2000."""
    jobs = (
        TraceJob(job("b", 2000), 0, 2000),
        TraceJob(job("c", 1000), 0, c_leaves_s),
        TraceJob(job("d", 1000), 0, 2000),
        TraceJob(job("a", 3000), 0, 2000),
        TraceJob(job("e", 3000), 0, 2000),
        TraceJob(job("p", 2000), p_arrives_s, 100),
    )
    return Trace("t", (node("n1"), node("n2"), node("n3")), Arrivals.of(jobs))


FIRST_FIT = SchedulerConfig(profile="first_fit")


def test_a_task_started_in_the_last_ten_minutes_is_not_moved() -> None:
    """The move ledger's replica cooldown, as the server keeps it: d started at t = 0, so when c leaves
    at t = 10 it may not move and p waits for a to leave at t = 2000; when c leaves at t = 650, d moves."""
    early = Replay(one_move_when_c_leaves(1, 10), RunConfig(scheduler=FIRST_FIT)).run()
    assert (placed_at(early.jobs, "p"), early.moves) == (2000, 0)
    late = Replay(one_move_when_c_leaves(1, 650), RunConfig(scheduler=FIRST_FIT)).run()
    assert (placed_at(late.jobs, "p"), late.moves) == (650, 1)


def test_a_node_that_received_a_move_receives_no_other_for_two_minutes() -> None:
    """n1, n2, n3 are full; n4 (unlabelled) has 4 CPUs free, room for both c and d. p1 and p2 (2 CPUs,
    only on pool=main) each need one of c, d gone: p1's move at t = 700 closes n4 to moves until
    t = 820, when the replay wakes for p2."""
    alloc, wide = {"cpu": 4000, "memory": 2**30}, {"cpu": 8000, "memory": 2**30}
    main = {"pool": "main"}
    nodes = (*(Node(f"n{i}", alloc, alloc, labels=main) for i in (1, 2, 3)), Node("n4", wide, wide))
    running = {"a": ("n1", 2000), "c": ("n1", 2000), "b": ("n2", 4000), "g": ("n3", 2000)}
    running |= {"d": ("n3", 2000), "s": ("n4", 4000)}
    jobs = [
        Job(name, (Task(f"{name}-0", name, {"cpu": cpu}, TaskStatus.RUNNING, where),), priority=50)
        for name, (where, cpu) in running.items()
    ]
    jobs += [
        Job(p, (Task(f"{p}-0", p, {"cpu": 2000}, node_selector=main),), priority=50) for p in ("p1", "p2")
    ]
    arrivals = [TraceJob(j, 0, None) for j in jobs[:-2]] + [TraceJob(j, 700, 1000) for j in jobs[-2:]]
    run = Replay(Trace("t", nodes, Arrivals.of(arrivals)), RunConfig(scheduler=FIRST_FIT)).run()
    assert (placed_at(run.jobs, "p1"), placed_at(run.jobs, "p2"), run.moves) == (700, 820, 2)


def test_a_failed_search_rests_as_the_run_s_backoff_says() -> None:
    plain = Replay(one_move_when_c_leaves(601, 610), RunConfig(scheduler=FIRST_FIT)).run()
    assert (placed_at(plain.jobs, "p"), plain.moves) == (610, 1)  # searched again at t = 610: d moves
    backoff = SearchBackoff(consolidate_min_s=30, consolidate_max_s=300)
    rested = Replay(
        one_move_when_c_leaves(601, 610), RunConfig(scheduler=FIRST_FIT, search_backoff=backoff)
    ).run()
    # p's search rests until t = 631 after failing at t = 601: at t = 610 it is not searched; the replay
    # wakes when the rest ends, as the server's tick would come then
    assert (placed_at(rested.jobs, "p"), rested.moves) == (631, 1)
    # 5 s after each failure (no maximum: the minimum): searched at the wake at t = 606 (c still runs),
    # again at t = 611, when d moves
    short = SearchBackoff(consolidate_min_s=5)
    shortly = Replay(one_move_when_c_leaves(601, 610), RunConfig(scheduler=FIRST_FIT, search_backoff=short))
    assert placed_at(shortly.run().jobs, "p") == 611


def test_a_run_s_search_backoff_is_read_as_the_server_reads_it() -> None:
    config = run_config_of({"search_backoff": {"consolidate_min": "30s", "consolidate_max": "5m"}}, "x")
    assert config.search_backoff == SearchBackoff(consolidate_min_s=30, consolidate_max_s=300)
    assert config.as_json()["search_backoff"] == {"consolidate_min": 30, "consolidate_max": 300}
    assert "search_backoff" not in run_config_of({}, "x").as_json()  # off: the summary as before
    for bad, path in (
        ({"consolidate_min": "-5s"}, "search_backoff.consolidate_min"),
        ({"consolidate_minimum": "5s"}, "search_backoff.consolidate_minimum"),
        ({"preempt_max": "soon"}, "search_backoff.preempt_max"),
        ("30s", "search_backoff"),
    ):
        with pytest.raises(ScenarioError) as refused:
            run_config_of({"search_backoff": bad}, "x")
        assert refused.value.path == path


def test_a_job_that_never_fits_does_not_keep_a_run_with_a_backoff_going_once_the_trace_is_over() -> None:
    """Its rests end every 30 s for ever; with no arrival or departure left the run ends (a timer alone
    changes nothing a cycle could use: the job is never placed)."""
    jobs = (TraceJob(job("a", 3000), 0, 50), TraceJob(job("huge", 8000), 1, 10))
    backoff = SearchBackoff(consolidate_min_s=30)
    run = Replay(Trace("t", (node("n1"),), Arrivals.of(jobs)), RunConfig(search_backoff=backoff)).run()
    assert placed_at(run.jobs, "huge") is None
    assert [s.at_s for s in run.samples] == [0, 1, 31, 50]  # the wake at 31 s, then a leaves
