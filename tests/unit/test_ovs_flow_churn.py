"""OVS's rule churn as ovs-ofctl is given it: every flow added is removed by the next
change, strictly by its cookie, priority and match, a tick's changes per ovs-ofctl."""

from nsb.vnfs.ovs import flow_churn


class Ofctl:
    def __init__(self):
        self.calls: list[tuple[tuple, str | None]] = []

    def __call__(self, *args, input=None):  # noqa: A002
        self.calls.append((args, input))
        return ""


def test_a_churn_adds_and_removes_each_flow_once_a_tick_at_a_time():
    ofctl = Ofctl()
    assert flow_churn.churn(ofctl, installed=5, changes_per_s=100, churn_s=0.3) == 30
    assert len(ofctl.calls) == 3  # 0.1 s ticks of 10 changes
    lines = [line for args, text in ofctl.calls for line in text.splitlines()]
    assert all(args == ("add-flows", "-") for args, _ in ofctl.calls)
    assert len(lines) == 30
    for number, line in enumerate(lines):
        address = f"nw_src=240.0.0.{6 + number // 2}"  # after the 5 installed
        if number % 2 == 0:
            assert line == f"add cookie=0x6e736263,priority=10,ip,{address},actions=drop"
        else:  # a delete matches the cookie with a mask and takes no actions
            assert line == f"delete_strict cookie=0x6e736263/-1,priority=10,ip,{address}"


def test_installed_flows_come_in_batches_and_are_counted_by_their_cookie():
    ofctl = Ofctl()
    flow_churn.install(ofctl, 25000)
    assert [len(text.splitlines()) for _, text in ofctl.calls] == [10000, 10000, 5000]
    listed = ("cookie=0x6e736263, duration=1s, priority=10,ip,nw_src=240.0.0.1 actions=drop\n"
              "cookie=0x0, duration=1s, in_port=1 actions=output:2\n")
    assert flow_churn.flows(lambda *args, input=None: listed) == 1  # noqa: A002
