"""Service chains on one network: TRex sends every chain's frames from its one port
pair, each chain's to the MAC of its first port (the switch forwards by it), and
counts each chain apart by TRex's flow statistics (a pg_id per chain's stream).

What a chain's pg_id counts on transmit is what TRex's streams made; what its port
took can be less (a vhost-user ring it found full: measured here, 60,001 made and
58,823 sent), and which chain's frames stayed behind TRex does not say (``split``
says what is known then). On receive the pg_ids count exactly what came back (their
sum was the port's count in every trial measured).
"""

from __future__ import annotations

from dataclasses import replace

from nsb.frames import Frame
from nsb.vnfs.trex import stats, streams

FIRST_PG_ID = 100  # chain k's data stream is 100 + 2k, its latency stream 101 + 2k


def destinations(given: list[str] | None, nodes: dict, where) -> list[str]:
    """Each chain's first port's MAC from ``chain_destinations`` ("node:interface")."""
    macs = []
    for index, text in enumerate(given or []):
        node, _, iface = text.partition(":")
        found = nodes.get(node)
        if found is None or iface not in found.interfaces:
            raise where.error(f"{text!r} is no node:interface of the context (each chain's "
                              "first port, which its frames are sent to)",
                              "chain_destinations", index)
        macs.append(found.interfaces[iface].mac)
    return macs


def pg_ids(chain: int) -> tuple[int, int]:
    """(data, latency) pg_ids of chain ``chain``."""
    return FIRST_PG_ID + 2 * chain, FIRST_PG_ID + 2 * chain + 1


def chain_streams(api, path: streams.Path, spec, frame: Frame, data_pps: float,
                  latency_pps: float, macs: list[str], burst: int | None) -> list:
    """Per chain a data stream (and a latency stream) at its even share, each to its
    chain's MAC and counted by its own pg_id."""
    loaded = []
    for chain, mac in enumerate(macs):
        data_pg, latency_pg = pg_ids(chain)
        to_chain = replace(spec, name=f"{spec.name}_chain{chain}", dst_mac=mac)
        share = burst_share(burst, len(macs), chain)
        if data_pps > 0 and share != 0:
            loaded += streams.data_streams(api, path, to_chain, frame, data_pps / len(macs),
                                           share, pg_id=data_pg)
        if latency_pps > 0:
            loaded.append(streams.latency_stream(api, path, to_chain, frame,
                                                 latency_pps / len(macs), latency_pg))
    return loaded


def burst_share(burst: int | None, chains: int, chain: int) -> int | None:
    """Chain ``chain``'s frames of a ``burst`` (the first chains take the remainder)."""
    if burst is None:
        return None
    return burst // chains + (1 if chain < burst % chains else 0)


def counts(pgid_stats: dict, chains: int, port_tx: int, port_rx: int) -> tuple[dict, int]:
    """Each chain's frames and latency by its pg_ids, and how many frames its streams
    made that the port did not send (``split``)."""
    flow = pgid_stats.get("flow_stats", {})

    def total(pg_id: int, key: str) -> int:
        found = flow.get(pg_id, {}).get(key, {})
        return int(found.get("total", 0)) if isinstance(found, dict) else 0

    made = [sum(total(pg, "tx_pkts") for pg in pg_ids(k)) for k in range(chains)]
    got = [sum(total(pg, "rx_pkts") for pg in pg_ids(k)) for k in range(chains)]
    sent, unsent = split(made, got, port_tx, port_rx)
    return {k: {"tx_packets": sent[k], "rx_packets": got[k],
                "latency": stats.latency(pgid_stats, [pg_ids(k)[1]])}
            for k in range(chains)}, unsent


def split(made: list[int], got: list[int], port_tx: int, port_rx: int
          ) -> tuple[list[int], int]:
    """Each chain's frames sent, and the frames made but never sent.

    All of them when the port sent every frame the streams made. Else which chain's
    frames stayed in TRex is unknown; what is known: a chain was sent at most what its
    streams made and at least what came back, the chains were sent the port's count
    together, and they lost ``port_tx - port_rx`` together. So each chain is given what
    it received plus the loss it certainly had (more than the unsent frames can hide),
    and the rest of the trial's loss in proportion to what it may have lost: a trial
    that lost nothing loses nothing on any chain, and a chain is never given a loss it
    could not have had."""
    unsent = max(0, sum(made) - port_tx)
    if not unsent:
        return list(made), 0
    loss = max(0, port_tx - port_rx)
    certain = [max(0, m - unsent - g) for m, g in zip(made, got, strict=True)]
    room = [max(0, m - g - c) for m, g, c in zip(made, got, certain, strict=True)]
    rest = max(0, loss - sum(certain))
    extra = _in_proportion(room, min(rest, sum(room)))
    return [g + c + e for g, c, e in zip(got, certain, extra, strict=True)], unsent


def _in_proportion(weights: list[int], amount: int) -> list[int]:
    """``amount`` split in proportion to ``weights`` (largest remainders first)."""
    whole = sum(weights)
    if whole <= 0 or amount <= 0:
        return [0] * len(weights)
    exact = [w * amount / whole for w in weights]
    shares = [int(e) for e in exact]
    for k in sorted(range(len(weights)), key=lambda k: exact[k] - shares[k],
                    reverse=True)[:amount - sum(shares)]:
        shares[k] += 1
    return shares


def describe(destinations: list[str], macs: list[str]) -> list[str]:
    """The dry-run's line per chain: where its frames go and its pg_ids."""
    return [f"chain {k}: the rate's 1/{len(macs)} from port 0 to {mac} ({dest}), counted "
            f"by pg_id {pg_ids(k)[0]} (its latency stream: {pg_ids(k)[1]})"
            for k, (dest, mac) in enumerate(zip(destinations, macs, strict=True))]


def chain_macs(options: dict, port_count: int, nodes: dict, where) -> list[str]:
    """Each chain's MAC where the chains share one network (one port pair, one way)."""
    given = options.get("chain_destinations")
    if given and (port_count != 2 or options["bidirectional"]):
        raise where.error("chains on one network are sent from one port pair, one way: "
                          "give one port pair and bidirectional: false", "chain_destinations")
    return destinations(given, nodes, where)
