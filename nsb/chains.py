"""Service chains measured apart: a scenario's ``chains: N`` splits the generator's port
pairs into N chains (each its own pairs, in order), so that every trial's counts are
also counted per chain, a trial passes only when every chain is within the tolerated
loss, and an answer says each chain's share and which chain failed first above it.

A chain's frames leave and come back on its own ports (a separate network per chain):
its loss is what its ports sent less what they received.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from nsb.trial import latency_record

MAX_CHAINS = 64
ALIAS = "service_chain_count"  # NFVbench's name for the same count
# a port's count key: the seconds it sent for, where the generator times ports apart
TX_SECONDS = "tx_seconds"


@dataclass(frozen=True)
class Chain:
    """Chain ``index`` (from 0) and the generator ports it sends and receives on."""

    index: int
    ports: tuple[str, ...]
    pairs: tuple[int, ...] = ()  # the generator's port pairs it is made of, by index
    vnfs: tuple[str, ...] = ()  # the VNFs its frames cross (a shared switch's too)
    nodes: tuple[str, ...] = ()  # the nodes its frames cross that no other chain's do
    # on one network with the other chains (their ports are its ports): its frames are
    # told apart by the generator's streams, not by port
    shared: bool = False


@dataclass(frozen=True)
class ChainCounts:
    """One chain's share of a trial."""

    chain: int
    tx_packets: int
    rx_packets: int
    latency: object = None  # LatencyStats of its own pair's latency stream, if measured
    # the seconds its ports sent for where the generator times each port apart (a trafgen
    # per pair); None: the trial's (one schedule for every port, as TRex's)
    seconds: float | None = None

    @property
    def loss_pct(self) -> float:
        if self.tx_packets <= 0:
            return 0.0
        return 100.0 * max(0, self.tx_packets - self.rx_packets) / self.tx_packets

    def record(self, result) -> dict:
        """As results.json holds it; its rate is its share of the trial's (``result``,
        a TrialResult): the frames it sent of all that were sent."""
        share = self.tx_packets / result.tx_packets if result.tx_packets > 0 else 0.0
        rate = self.tx_packets / self.seconds if self.seconds else result.tx_rate_pps * share
        return {"chain": self.chain, "tx_packets": self.tx_packets,
                "rx_packets": self.rx_packets, "loss_pct": self.loss_pct,
                "tx_rate_pps": rate,
                "latency": latency_record(self.latency)}


def latency_of(result, measured):
    """``result`` (a TrialResult) with the latency ``measured`` (a later trial at its rate,
    one with latency streams) found: the whole trial's and each chain's own."""
    by_chain = {share.chain: share.latency for share in measured.chains}
    shares = tuple(replace(share, latency=by_chain.get(share.chain)) for share in result.chains)
    return replace(result, latency=measured.latency, chains=shares)


def split(pairs: list[tuple[str, str]], count: int) -> tuple[Chain, ...]:
    """``count`` chains over the generator's port ``pairs``, each ``len(pairs) // count``
    consecutive pairs (the caller checked that they divide)."""
    per = len(pairs) // count
    return tuple(Chain(k, tuple(p for pair in pairs[k * per:(k + 1) * per] for p in pair),
                       tuple(range(k * per, (k + 1) * per)))
                 for k in range(count))


def problem(pairs: list[tuple[str, str]], count: int) -> str:
    """Why ``count`` chains cannot be laid over the generator's port ``pairs`` ('' if
    they can)."""
    if not pairs:
        return (f"{count} chains need a generator that drives its ports in pairs (trex, "
                "trafgen, prox_tg with port_pairs): each chain is its own pairs")
    if len(pairs) % count:
        return (f"{count} chains over the generator's {len(pairs)} port pair(s): each chain "
                f"needs as many pairs as the others (give the generator a multiple of "
                f"{count} pairs, or {len(pairs)} chains)")
    return ""


def on_one_network(pair: tuple[str, str], count: int) -> tuple[Chain, ...]:
    """``count`` chains on one network, all on the generator's port ``pair``."""
    return tuple(Chain(k, tuple(pair), (0,), shared=True) for k in range(count))


def counts(chains: tuple[Chain, ...], ports: dict[str, dict[str, int]],
           pair_latency: dict | None = None,
           chain_counts: dict | None = None) -> tuple[ChainCounts, ...]:
    """Each chain's frames in a trial, from the generator's per-port counts, and its
    latency where it is one pair whose latency the generator measured apart; chains on
    one network from the generator's counts per chain (``chain_counts``)."""
    if chain_counts:
        return tuple(ChainCounts(c.index, chain_counts[c.index]["tx_packets"],
                                 chain_counts[c.index]["rx_packets"],
                                 chain_counts[c.index].get("latency")) for c in chains)
    pair_latency = pair_latency or {}
    return tuple(ChainCounts(c.index,
                             sum(ports.get(p, {}).get("tx_packets", 0) for p in c.ports),
                             sum(ports.get(p, {}).get("rx_packets", 0) for p in c.ports),
                             pair_latency.get(c.pairs[0]) if len(c.pairs) == 1 else None,
                             _seconds(c, ports))
                 for c in chains)


def _seconds(chain: Chain, ports: dict[str, dict]) -> float | None:
    """The longest its ports sent for, where the generator says (``TX_SECONDS``)."""
    timed = [ports[p][TX_SECONDS] for p in chain.ports if TX_SECONDS in ports.get(p, {})]
    return max(timed) if timed else None


def seconds_of(share: ChainCounts, result) -> float:
    """The seconds a chain's frames were sent over: its own where the generator timed
    it apart, else the trial's (``result``, a TrialResult)."""
    return share.seconds or result.elapsed_s or 1.0


def intended(chains: tuple[Chain, ...], trial, intended_packets: int) -> list[float]:
    """The frames each chain was to be sent in ``trial`` (a Trial): its pairs' own
    rates where the trial gives them, else an even share of ``intended_packets``."""
    if trial.pair_rates_pps:
        return [sum(trial.pair_rate_pps(p) for p in c.pairs) * trial.duration_s
                for c in chains]
    return [intended_packets / len(chains)] * len(chains)


def short_of_share(per_chain: tuple[ChainCounts, ...], shares: list[float],
                   tolerance: float) -> list[tuple[ChainCounts, float]]:
    """The chains the generator sent more than ``tolerance`` (a fraction) below their
    ``shares`` (the frames each was to be sent), each with its share."""
    return [(c, share) for c, share in zip(per_chain, shares, strict=True)
            if share > 0 and c.tx_packets < share * (1 - tolerance)]


def even(per_chain: tuple[ChainCounts, ...], tolerance: float) -> bool:
    """Whether every chain was sent within ``tolerance`` (a fraction) of the most any
    chain was: only then does the trial's total stand for its chains' even split."""
    if not per_chain:
        return True
    most = max(c.tx_packets for c in per_chain)
    return min(c.tx_packets for c in per_chain) >= most * (1 - tolerance)


def even_tx_rate_pps(result) -> float:
    """The part of a trial's (a TrialResult's) sending rate its chains got evenly: the
    chains times the least any chain was sent. A chain the generator sent less than the
    others caps what the trial shows the chains carry together at the even split."""
    if not result.chains or result.tx_packets <= 0:
        return result.tx_rate_pps
    least = min(c.tx_packets for c in result.chains)
    return result.tx_rate_pps * len(result.chains) * least / result.tx_packets


def over_tolerance(per_chain: tuple[ChainCounts, ...], tolerated_loss_pct: float
                   ) -> list[ChainCounts]:
    """The chains that lost more than tolerated, the worst first."""
    return sorted((c for c in per_chain if c.loss_pct > tolerated_loss_pct),
                  key=lambda c: (-c.loss_pct, c.chain))


def first_failing(failed_above: list, tolerated_loss_pct: float) -> dict | None:
    """Of the trials that failed above an answer (TrialResults), the chain that failed
    at the lowest rate (the worst there): the first to give way as the load grew."""
    for result in sorted(failed_above, key=lambda r: r.trial.rate_pps):
        worst = over_tolerance(result.chains, tolerated_loss_pct)
        if worst:
            kept_back = int(result.extra.get("chain_frames_not_sent", 0))
            return {"chain": worst[0].chain, "loss_pct": worst[0].loss_pct,
                    "rate_pps": result.trial.rate_pps,
                    "chains_failed": [c.chain for c in worst],
                    # chains on one network whose split the generator's counts leave open
                    **({"frames_kept_back": kept_back} if kept_back else {})}
    return None


def lossy_hop(chain: Chain, trials: list, paths_of) -> dict | None:
    """Where ``chain``'s frames died: the hop that lost the most of them in the first of
    ``trials`` (the answer's, then the failed ones above it, slowest first) in which
    the chain lost frames and its paths were laid out; None when it lost none or no
    count says where. ``paths_of(result)``: (trial index, TrialPaths or None)."""
    if chain.shared:  # its ports carry every chain's frames: their counts are not its own
        return None
    for result in trials:
        share = next((c for c in result.chains if c.chain == chain.index), None)
        if share is None or share.tx_packets <= share.rx_packets:
            continue
        index, paths = paths_of(result)
        worst = paths.worst(chain.ports) if paths is not None else None
        if worst is not None:
            return {"trial_index": index, "hop": worst.hop, "kind": worst.kind,
                    "frames": worst.frames, "words": worst.words}
    return None
