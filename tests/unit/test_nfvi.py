"""NFVi sampling: /proc parsing and the rates derived from two reads."""

import pytest

from nsb.nodes.nfvi import NfviSampler, Watched, core_kpis, parse_snapshot, process_kpis

PROC_STAT = """cpu  100 0 50 800 50 0 0 0 0 0
cpu0 60 0 30 400 10 0 0 0 0 0
cpu1 40 0 20 400 40 0 0 0 0 0
intr 12345
"""
PID_STAT = ("4242 (dpdk-testpmd (x)) R 1 4242 4242 0 -1 4194560 100 0 0 0 "
            "{utime} {stime} 0 0 20 0 3 0 1000 500000000 2500 18446744073709551615")
PID_STATUS = "Name:\tdpdk-testpmd\nVmRSS:\t  {rss} kB\nvoluntary_ctxt_switches:\t{vol}\n" \
             "nonvoluntary_ctxt_switches:\t{nonvol}\n"


def snapshot(at, utime, stime, rss, vol, nonvol, cpu0_busy=90, cpu0_idle=410):
    text = PROC_STAT.replace("cpu0 60 0 30 400 10", f"cpu0 {cpu0_busy} 0 0 {cpu0_idle} 0")
    text += "== 4242\n" + PID_STAT.format(utime=utime, stime=stime) + "\n"
    text += PID_STATUS.format(rss=rss, vol=vol, nonvol=nonvol)
    return parse_snapshot(text, at)


def test_parse_reads_cores_and_the_process_despite_parens_in_its_name():
    snap = snapshot(10.0, 500, 20, 81920, 7, 3)
    assert snap.cores["cpu0"] == (90, 500)
    assert snap.cores["cpu1"] == (60, 500)  # iowait counts as idle
    process = snap.processes[4242]
    assert (process.utime, process.stime, process.rss_kb) == (500, 20, 81920)
    assert (process.voluntary, process.nonvoluntary) == (7, 3)


def test_a_vanished_process_is_left_out():
    snap = parse_snapshot(PROC_STAT + "== 99\n", 1.0)
    assert snap.processes == {}


def test_rates_between_two_reads():
    before = snapshot(10.0, 500, 20, 81920, 7, 3)
    after = snapshot(12.0, 690, 30, 82000, 27, 5, cpu0_busy=290, cpu0_idle=410)
    kpis = process_kpis(before.processes[4242], after.processes[4242], 2.0)
    assert kpis["cpu_user_pct"] == 95.0  # 190 ticks in 2 s at 100 ticks/s
    assert kpis["cpu_system_pct"] == 5.0
    assert kpis["rss_kb"] == 82000
    assert kpis["ctx_switches_voluntary_per_s"] == 10.0
    assert kpis["ctx_switches_nonvoluntary_per_s"] == 1.0
    cores = core_kpis(before, after)
    assert cores["cpu0_util_pct"] == 100.0  # 200 busy ticks of 200
    assert "cpu1_util_pct" not in cores  # no ticks passed on cpu1


class ScriptedExecutor:
    """Executor double: each run() returns the next /proc read."""

    def __init__(self, outputs):
        self.outputs = list(outputs)

    def run(self, argv, **_):
        from nsb.executors.base import CommandResult

        return CommandResult(argv, 0, self.outputs.pop(0) if self.outputs else "", "")


def test_sampler_emits_per_process_and_per_node_samples_for_the_trial():
    reads = []
    for utime in (0, 50, 100, 150, 200, 250, 300):
        reads.append(PROC_STAT + "== 4242\n" + PID_STAT.format(utime=utime, stime=0) + "\n"
                     + PID_STATUS.format(rss=1, vol=0, nonvol=0))
    emitted = []
    sampler = NfviSampler({"sut": ScriptedExecutor(reads)}, [Watched("testpmd0", "sut", 4242)],
                          0.05, lambda *event: emitted.append(event))
    sampler.start(trial_index=7)
    import time

    while not any(e[0] == "nfvi:testpmd0" for e in emitted):
        time.sleep(0.01)
    sampler.stop()
    process = [e for e in emitted if e[0] == "nfvi:testpmd0"]
    assert process[0][1] == "sut" and process[0][3] == 7
    assert process[0][2]["cpu_user_pct"] > 0 and process[0][2]["pid"] == 4242
    count = len(emitted)
    time.sleep(0.15)
    assert len(emitted) == count  # stopped means stopped


def test_a_trial_shorter_than_the_interval_still_has_its_sample():
    """Stopped 0.5 s into a 60 s interval: one sample for those 0.5 s (a 2 s trial on
    nodes slow to answer had none)."""
    import time

    reads = [PROC_STAT.replace("cpu0 60", f"cpu0 {60 + utime}") + "== 4242\n"
             + PID_STAT.format(utime=utime, stime=0) + "\n"
             + PID_STATUS.format(rss=1, vol=0, nonvol=0) for utime in (0, 25)]
    emitted = []
    sampler = NfviSampler({"sut": ScriptedExecutor(reads)}, [Watched("testpmd0", "sut", 4242)],
                          60.0, lambda *event: emitted.append(event))
    sampler.start(trial_index=3)
    time.sleep(0.5)
    sampler.stop()
    [process] = [e for e in emitted if e[0] == "nfvi:testpmd0"]
    assert process[3] == 3 and process[2]["cpu_user_pct"] > 0
    assert [e[0] for e in emitted].count("node:sut") == 1


def test_a_record_that_cannot_be_written_while_sampling_stops_the_run_from_the_trial():
    """A full results disk met first by the sampler's thread: the thread ends without a
    traceback and keeps the error, which the trial's own thread raises once the trial is
    measured (before, the error ended the sampler's thread alone and the run went on)."""
    from nsb.errors import RunError
    from nsb.scenario_hooks import ScenarioHooks

    reads = [PROC_STAT + "== 4242\n" + PID_STAT.format(utime=utime, stime=0) + "\n"
             + PID_STATUS.format(rss=1, vol=0, nonvol=0) for utime in (0, 50, 100, 150)]
    full = RunError("cannot write the results: No space left on device; the run stopped")
    calls = []

    def emit(*event):
        calls.append(event)
        raise full

    sampler = NfviSampler({"sut": ScriptedExecutor(reads)}, [Watched("testpmd0", "sut", 4242)],
                          0.05, emit)
    sampler.start(trial_index=0)
    thread = sampler._thread
    thread.join(5)
    assert not thread.is_alive()  # it ended at the first failed write
    assert len(calls) == 1 and sampler.failure is full
    hooks = ScenarioHooks.__new__(ScenarioHooks)
    hooks.sampler = sampler
    with pytest.raises(RunError) as raised:
        hooks.trial_measured(0)
    assert raised.value is full


def test_a_wrapper_process_counts_its_descendants_the_real_program():
    from nsb.nodes.nfvi import tree_kpis

    def read(at, child_utime, rss):
        wrapper = PID_STAT.replace("4242 (dpdk-testpmd (x))", "100 (sh)").format(utime=1, stime=0)
        child = PID_STAT.replace("4242 (dpdk-testpmd (x))", "101 (_t-rex-64)").format(
            utime=child_utime, stime=0)
        text = PROC_STAT + "=== 100 101 \n" + "== 100\n" + wrapper + "\n" + \
            PID_STATUS.format(rss=1700, vol=0, nonvol=0) + "== 101\n" + child + "\n" + \
            PID_STATUS.format(rss=rss, vol=10, nonvol=0)
        return parse_snapshot(text, at)

    before, after = read(10.0, 1000, 900_000), read(12.0, 1180, 910_000)
    assert after.tree(100) == (100, 101) and after.tree(7) == (7,)
    kpis = tree_kpis(before, after, 100, 2.0)
    assert kpis["cpu_user_pct"] == 90.0  # the child's 180 ticks in 2 s; the wrapper's 0
    assert kpis["rss_kb"] == 911_700 and kpis["processes"] == 2 and kpis["pid"] == 100
    assert tree_kpis(before, after, 555, 2.0) is None
