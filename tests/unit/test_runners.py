import time

from nsb.runners.duration import DurationRunner
from nsb.runners.iteration import IterationRunner
from nsb.task.model import PluginSpec, Where
from nsb.task.yaml_lines import LocatedDocument


def spec(kind):
    return PluginSpec(kind, {}, Where(LocatedDocument({}, "t"), ()))


def test_iteration_runs_the_body_n_times():
    calls = []
    IterationRunner(spec("Iteration"), {"iterations": 3, "interval": 0}, None).execute(
        lambda i, stop: calls.append((i, stop())))
    assert calls == [(0, False), (1, False), (2, False)]


def test_duration_caps_one_run_and_tells_the_profile_to_stop():
    seen = []

    def body(iteration, should_stop):
        while not should_stop():  # a profile checks between trials
            time.sleep(0.01)
        seen.append(iteration)

    DurationRunner(spec("Duration"), {"duration": 0.1, "repeat": False, "interval": 0},
                   None).execute(body)
    assert seen == [0]


def test_duration_without_repeat_runs_once_when_the_profile_finishes_early():
    seen = []
    DurationRunner(spec("Duration"), {"duration": 5, "repeat": False, "interval": 0},
                   None).execute(lambda i, stop: seen.append(i))
    assert seen == [0]


def test_duration_with_repeat_loops_until_spent():
    seen = []

    def body(iteration, should_stop):
        seen.append(iteration)
        time.sleep(0.02)

    DurationRunner(spec("Duration"), {"duration": 0.1, "repeat": True, "interval": 0},
                   None).execute(body)
    assert len(seen) >= 2 and seen == list(range(len(seen)))
