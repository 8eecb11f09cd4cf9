"""PROX's generator in port pairs: a pair's frames leave by its tx port, sent by the
gen tasks there, and come back on its rx port, counted by the lat tasks there. The
pairs are what service chains are made of, so each must name ports the config's tasks
really use: one line at ``options.port_pairs`` before anything starts otherwise."""

from __future__ import annotations

from dataclasses import dataclass

from nsb.trial import Trial


@dataclass(frozen=True)
class PortPair:
    tx: int  # PROX's port numbers
    rx: int
    tx_name: str  # the node's interface names
    rx_name: str


def checked(raw: list, gen_tasks: list, lat_tasks: list, names: dict[int, str],
            where) -> list[PortPair]:
    """``options.port_pairs`` ([[tx, rx], ...] by interface name) as PortPairs; a
    TaskError at the option when a name is no port of PROX's, its tx port has no gen
    task or its rx port no lat task, or a port is in two pairs."""
    number = {name: n for n, name in names.items()}
    pairs, seen = [], set()
    for index, (tx_name, rx_name) in enumerate(raw):
        at = ("port_pairs", index)
        for name in (tx_name, rx_name):
            if name not in number:
                raise where.error(f"{name!r} is no port of this PROX (its ports: "
                                  f"{', '.join(names.values()) or 'none'})", *at)
            if name in seen:
                raise where.error(f"port {name} is in two pairs", *at)
            seen.add(name)
        pair = PortPair(number[tx_name], number[rx_name], tx_name, rx_name)
        if not any(t.tx_port == pair.tx for t in gen_tasks):
            raise where.error(f"no mode=gen task sends on {tx_name} (PROX port {pair.tx}): "
                              "give the config one with 'tx port' there", *at)
        if not any(t.rx_port == pair.rx for t in lat_tasks):
            raise where.error(f"no mode=lat task receives on {rx_name} (PROX port {pair.rx}): "
                              "give the config one with 'rx port' there", *at)
        pairs.append(pair)
    return pairs


def rates(trial: Trial, count: int) -> list[float]:
    """Each of ``count`` pairs' frames per second: its own where the trial gives the
    pairs theirs (an isolation trial), else an even share of the trial's rate."""
    if not trial.pair_rates_pps:
        return [trial.rate_pps / count] * count
    return [trial.pair_rate_pps(k) for k in range(count)]
