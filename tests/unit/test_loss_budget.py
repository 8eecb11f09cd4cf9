"""A trial's loss laid along its path: counts of a known drop at one hop give that hop
and kind, the losses add up to sent less received, blind stretches are said to be."""

from nsb.contexts.base import Link
from nsb.loss_budget import budget
from nsb.nodes.node import Endpoint
from nsb.paths import pairs_forwarding, walk
from nsb.port_counts import PortCount, difference
from nsb.trial_paths import merged

TG0, TG1 = Endpoint("tg", "xe0"), Endpoint("tg", "xe1")
SUT0, SUT1 = Endpoint("sut", "xe0"), Endpoint("sut", "xe1")
LINKS = [Link(TG0, SUT0), Link(SUT1, TG1)]


def forward(end: Endpoint):
    other = pairs_forwarding(["xe0", "xe1"]).get(end.interface)
    return Endpoint(end.node, other) if other else None


def test_the_walk_follows_the_links_and_the_dut_s_forwarding():
    path = walk(TG0, LINKS, forward)
    assert path.ends == (TG0, SUT0, SUT1, TG1) and path.complete
    assert path.name == "tg:xe0 -> tg:xe1"
    assert walk(TG1, LINKS, forward).ends == (TG1, SUT1, SUT0, TG0)


def test_a_walk_through_a_switch_crosses_its_two_ports_of_the_link():
    sw_a, sw_b = Endpoint("ovs", "br0-0a"), Endpoint("ovs", "br0-0b")
    links = [Link(TG0, TG1, via="br0", switch_a=sw_a, switch_b=sw_b)]
    assert walk(TG0, links, lambda end: None).ends == (TG0, sw_a, sw_b, TG1)


def _counts(sut_in: PortCount, sut_out: PortCount, gen_rx: PortCount):
    return {TG0: PortCount(tx=1_000_000), SUT0: sut_in, SUT1: sut_out, TG1: gen_rx}


def test_imissed_at_the_dut_is_the_hop_to_blame_and_the_budget_adds_up():
    counts = _counts(PortCount(rx=990_000, drops={"imissed": 9_000}),
                     PortCount(tx=989_500, drops={"oerrors": 0}),
                     PortCount(rx=989_500))
    result = budget(walk(TG0, LINKS, forward), counts, {"sut": "testpmd0"})
    assert result.lost == 10_500
    assert {(loss.hop, loss.kind): loss.frames for loss in result.losses} == {
        ("link tg:xe0 -> sut:xe0", "link"): 1_000, ("sut:xe0 rx", "imissed"): 9_000,
        ("sut (testpmd0) xe0 -> xe1", "forwarding"): 500}
    assert result.unaccounted == 0 and result.blind == ()
    worst = result.worst()
    assert worst.hop == "sut:xe0 rx" and worst.kind == "imissed"
    assert "the DUT did not poll fast enough" in worst.words


def test_a_loss_free_trial_counts_every_frame_at_every_hop():
    counts = _counts(PortCount(rx=1_000_000), PortCount(tx=1_000_000),
                     PortCount(rx=1_000_000))
    result = budget(walk(TG0, LINKS, forward), counts)
    assert [p.frames for p in result.points] == [1_000_000] * len(result.points)
    assert result.worst() is None and result.lost == 0


def test_a_port_without_counters_makes_a_blind_stretch_that_still_adds_up():
    counts = {TG0: PortCount(tx=1000), SUT1: PortCount(tx=900), TG1: PortCount(rx=900)}
    result = budget(walk(TG0, LINKS, forward), counts)
    (loss,) = result.losses
    assert loss.kind == "unaccounted" and loss.frames == 100
    assert loss.hop == "tg:xe0 tx .. sut:xe1 handed"
    assert "sut:xe0 arrived" in result.blind and result.unaccounted == 0


def test_the_generator_s_own_receive_drops_are_its_own():
    counts = _counts(PortCount(rx=1_000_000), PortCount(tx=1_000_000),
                     PortCount(rx=999_000, drops={"generator_rx": 1_000}))
    (loss,) = budget(walk(TG0, LINKS, forward), counts).losses
    assert (loss.hop, loss.kind, loss.frames) == ("tg:xe1 rx", "generator_rx", 1_000)


def test_frames_the_generator_s_own_kernel_port_refused_are_blamed_there():
    """TRex counted 1,000,000 sent on its veth; the kernel sent 990,000 (10,000 over
    the port's MTU never reached its driver) and its driver dropped 2,000 the other
    end did not take: neither is the link's loss."""
    own = PortCount(rx=0, tx=1_000_000)
    kernel = PortCount(rx=0, tx=988_000, drops={"rx_dropped": 0, "tx_dropped": 2_000})
    counts = {TG0: merged(kernel, own, refused="refused"), SUT0: PortCount(rx=988_000),
              SUT1: PortCount(tx=988_000), TG1: PortCount(rx=988_000)}
    result = budget(walk(TG0, LINKS, forward), counts, {"sut": "testpmd0"})
    assert result.sent == 1_000_000 and result.lost == 12_000
    assert {(loss.hop, loss.kind): loss.frames for loss in result.losses} == {
        ("tg:xe0 tx", "refused"): 10_000, ("tg:xe0 tx", "tx_dropped"): 2_000}
    assert result.unaccounted == 0
    assert "never sent by its own kernel port" in result.worst().words


def test_a_frame_a_veth_peer_refused_is_lost_once_not_at_both_ends():
    """A veth counts a frame over its peer's MTU as the sender's tx drop and again as
    the receiver's rx drop: the budget lays it at the sender's tx, once."""
    counts = _counts(PortCount(rx=1_000_000), PortCount(tx=990_000, drops={"tx_dropped": 10_000}),
                     PortCount(rx=990_000, drops={"rx_dropped": 10_000}))
    result = budget(walk(TG0, LINKS, forward), counts, {"sut": "testpmd0"})
    assert {(loss.hop, loss.kind): loss.frames for loss in result.losses} == {
        ("sut:xe1 tx", "tx_dropped"): 10_000}
    assert result.unaccounted == 0


def test_a_generator_port_without_kernel_counters_keeps_its_own_counts():
    own = PortCount(rx=5, tx=1_000, drops={"generator_rx": 1})
    assert merged(None, own, refused="refused") == own


def test_the_generator_s_kernel_port_tells_a_receive_ring_overflow_from_the_wire():
    own = PortCount(rx=900, tx=0, drops={"generator_rx": 0})
    kernel = PortCount(rx=1000, tx=0, drops={"rx_dropped": 0, "tx_dropped": 0})
    assert merged(kernel, own, refused="refused").rx_drops() == {"rx_dropped": 100}


def test_cumulative_counters_are_differenced():
    before = PortCount(rx=100, tx=50, drops={"imissed": 3})
    after = PortCount(rx=1100, tx=1050, drops={"imissed": 10, "rx_nombuf": 2})
    assert difference(after, before) == PortCount(rx=1000, tx=1000,
                                                  drops={"imissed": 7, "rx_nombuf": 2})


def test_the_answer_names_the_hop_that_lost_most_in_the_failed_trial_above_it():
    from nsb import units
    from nsb.events import ResultReady, TrialDone
    from nsb.loss_budget import TrialPaths, record
    from nsb.outputs.records import result_record, trial_record
    from nsb.traffic_profiles.binsearch import BinSearchProfile
    from nsb.traffic_profiles.measurer import Measurer, TrialHooks
    from tests.doubles.profiles import make_profile
    from tests.doubles.simulated_dut import SimulatedDutGenerator

    class PathHooks(TrialHooks):
        """A DUT whose receive side misses what it cannot forward (imissed)."""

        def __init__(self):
            self.last = None

        def trial_measured(self, index, result=None):
            lost = result.lost_packets
            counts = _counts(PortCount(rx=result.tx_packets - lost, drops={"imissed": lost}),
                             PortCount(tx=result.rx_packets),
                             PortCount(rx=result.rx_packets))
            counts[TG0] = PortCount(tx=result.tx_packets)
            self.last = (index, TrialPaths((budget(walk(TG0, LINKS, forward), counts,
                                                   {"sut": "testpmd0"}),)))

        def trial_paths(self, index):
            return self.last[1] if self.last and self.last[0] == index else None

    events = []
    line = units.line_rate_pps(64, 1, ports=2)
    profile = make_profile(BinSearchProfile, packet_sizes=[64], duration=1, test_precision=1,
                           interface_speed_gbps=1)
    profile.execute(Measurer(SimulatedDutGenerator(0.5 * line), "t", "s", events.append,
                             PathHooks()))
    (result,) = [e for e in events if isinstance(e, ResultReady)]
    blamed = result.extra["lossy_hop"]
    assert (blamed["hop"], blamed["kind"]) == ("sut:xe0 rx", "imissed")
    failing = [e for e in events if isinstance(e, TrialDone) and e.trial_index ==
               blamed["trial_index"]][0]
    # the failed trial just above the answer, its loss all imissed at sut:xe0
    assert failing.verdict == "fail" and blamed["frames"] == failing.result.lost_packets
    above = [e.result.trial.rate_pps for e in events if isinstance(e, TrialDone)
             and e.verdict == "fail"]
    assert failing.result.trial.rate_pps == min(above)
    assert trial_record(failing)["path"] == record(failing.path)
    assert result_record(result)["lossy_hop"]["words"].startswith("sut:xe0 rx: imissed")


def _written_task(tmp_path):
    """A results file whose failed trial lost frames to imissed at sut:xe0."""
    from nsb.loss_budget import TrialPaths, record
    from tests.unit.test_report import result, write_task

    counts = _counts(PortCount(rx=990_000, drops={"imissed": 10_000}),
                     PortCount(tx=990_000), PortCount(rx=990_000))
    paths = TrialPaths((budget(walk(TG0, LINKS, forward), counts, {"sut": "testpmd0"}),))
    trial = {"scenario": "l3fwd", "trial_index": 4, "frame_size": 64, "verdict": "fail",
             "requested_rate_pps": 1e6, "tx_rate_pps": 1e6, "path": record(paths)}
    worst = paths.worst()
    row = {**result(64, 900_000), "lossy_hop": {"trial_index": 4, "hop": worst.hop,
                                                "kind": worst.kind, "frames": worst.frames,
                                                "words": worst.words}}
    write_task(tmp_path, "lossy", [row], trials=[trial])
    return worst


def test_task_show_path_names_the_hop_and_walks_its_trial(nsb_main, tmp_path):
    worst = _written_task(tmp_path)
    code, out, err = nsb_main("task", "show", "lossy", "--results-dir", str(tmp_path),
                              "--path")
    assert code == 0, err
    assert (f"l3fwd, 64 B: the hop to blame: {worst.words} (10,000 frames, trial 4)"
            in out)
    assert "tg:xe0 -> tg:xe1: sent 1,000,000, received 990,000, lost 10,000" in out
    assert "lost: sut:xe0 rx, imissed: 10,000" in out


def test_the_html_report_draws_the_path_with_the_lossy_hop_marked(tmp_path):
    from nsb.report import html, loading

    _written_task(tmp_path)
    page = html.render([loading.load("lossy", tmp_path)])
    assert 'id="t1-s1-path-64"' in page and "Where the frames died" in page
    assert 'class="point lossy">sut:xe0 rx (imissed)' in page


def test_influxdb_gets_a_point_per_loss_along_the_path():
    from nsb.events import TrialDone, Verdict
    from nsb.loss_budget import TrialPaths
    from nsb.outputs.influxdb import hop_points
    from nsb.trial import Trial, TrialResult

    counts = _counts(PortCount(rx=990_000, drops={"imissed": 10_000}),
                     PortCount(tx=990_000), PortCount(rx=990_000))
    paths = TrialPaths((budget(walk(TG0, LINKS, forward), counts),))
    event = TrialDone("t", "s", iteration=0, trial_index=3, verdict=Verdict.FAIL,
                      result=TrialResult(Trial(64, 1e6, 1.0), 1_000_000, 990_000, 1.0),
                      rate_pct=1.0, lower_pct=0.0, upper_pct=1.0, path=paths)
    (loss, total) = hop_points.parts(event)
    assert loss[0]["hop"] == "sut:xe0 rx" and loss[0]["kind"] == "imissed"
    assert loss[1]["lost_packets"] == 10_000 and loss[1]["trial_index"] == 3
    assert total[0]["kind"] == "total" and total[1]["lost_packets"] == 10_000
