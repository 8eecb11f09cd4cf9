"""nsb's built-in TRex ASTF profiles: what each connection of a stateful trial does,
written with TRex's own ASTF API (``trex.astf.api``), one template at 1 connection per
second so that ``start(mult=cps)`` is the trial's connection rate.

- ``tcp_cps``: handshake, one request and one response, close (CSIT's NAT44 CPS
  transaction);
- ``udp_cps``: one datagram each way;
- ``http``: an HTTP-like request and a response of ``response_bytes``;
- ``long_lived``: a handshake, then the connection held open ``hold_s`` seconds (and
  ``data_pps_per_session`` packets a second of data from the client while held),
  closed by the client: concurrent sessions;
- ``udp_stream``: a datagram each way (the DUT's state made), a wait of ``hold_s``
  (until every session is open), then ``data_pps_per_session`` datagrams a second of
  ``request_bytes`` for ``data_s`` seconds from the client: stateful throughput, whose
  loss is a count of datagrams (TCP would send a lost segment again).

Client addresses come from ``client_range`` (behind the generator's client port),
server addresses from ``server_range`` (behind its server port); the DUT routes them.
"""

from __future__ import annotations

from dataclasses import dataclass

from nsb.sessions import SessionLoad

HTTP_REQUEST = b"GET /nsb HTTP/1.1\r\nHost: nsb\r\nConnection: close\r\n\r\n"


@dataclass(frozen=True)
class Ranges:
    """The addresses connections are opened from and to: 'first-last' each."""

    client: tuple[str, str]
    server: tuple[str, str]
    server_port: int = 80


def profile(api, load: SessionLoad, ranges: Ranges, limit: int | None = None):
    """The ASTFProfile of a built-in program; ``limit``: at most that many connections
    (the trial's intended ones: each opened exactly once, as FD.io CSIT's profiles)."""
    build = {"tcp_cps": _tcp_cps, "udp_cps": _udp_cps, "http": _http,
             "long_lived": _long_lived, "udp_stream": _udp_stream}[load.program]
    client, server = build(api, load)
    ip_gen = api.ASTFIPGen(glob=api.ASTFIPGenGlobal(ip_offset="0.0.0.1"),
                           dist_client=api.ASTFIPGenDist(ip_range=list(ranges.client),
                                                         distribution="seq"),
                           dist_server=api.ASTFIPGenDist(ip_range=list(ranges.server),
                                                         distribution="seq"))
    # TRex's client template serves UDP programs too (stream=False)
    client_t = api.ASTFTCPClientTemplate(program=client, ip_gen=ip_gen, cps=1,
                                         port=ranges.server_port, limit=limit)
    server_t = api.ASTFTCPServerTemplate(
        program=server, assoc=api.ASTFAssociationRule(port=ranges.server_port))
    template = api.ASTFTemplate(client_template=client_t, server_template=server_t)
    return api.ASTFProfile(default_ip_gen=ip_gen, templates=template)


def _tcp_cps(api, load: SessionLoad):
    request, response = b"q" * load.request_bytes, b"r" * load.response_bytes
    client = api.ASTFProgram()
    client.send(request)
    client.recv(len(response))
    server = api.ASTFProgram()
    server.recv(len(request))
    server.send(response)
    return client, server


def _udp_cps(api, load: SessionLoad):
    request, response = b"q" * load.request_bytes, b"r" * load.response_bytes
    client = api.ASTFProgram(stream=False)
    client.send_msg(request)
    client.recv_msg(1)
    server = api.ASTFProgram(stream=False)
    server.recv_msg(1)
    server.send_msg(response)
    return client, server


def _http(api, load: SessionLoad):
    header = f"HTTP/1.1 200 OK\r\nContent-Length: {load.response_bytes}\r\n\r\n".encode()
    response = header + b"x" * load.response_bytes
    client = api.ASTFProgram()
    client.send(HTTP_REQUEST)
    client.recv(len(response))
    server = api.ASTFProgram()
    server.recv(len(HTTP_REQUEST))
    server.send(response)
    return client, server


def _long_lived(api, load: SessionLoad):
    """Held ``hold_s`` by the client, sending ``data_pps_per_session`` small segments a
    second meanwhile (none: a delay alone), then closed."""
    client = api.ASTFProgram()
    client.connect()
    server = api.ASTFProgram()
    server.accept()
    segments = round(load.data_pps_per_session * load.hold_s)
    if segments > 0:
        gap_us = round(1e6 / load.data_pps_per_session)
        client.set_var("var1", segments)
        client.set_label("a:")
        client.send(b"d" * load.request_bytes)
        client.delay(gap_us)
        client.jmp_nz("var1", "a:")
        server.recv(load.request_bytes * segments)
    else:
        client.delay(round(load.hold_s * 1e6))
    server.wait_for_peer_close()
    return client, server


def _udp_stream(api, load: SessionLoad):
    """Hello and its answer (the session made), ``hold_s`` waited, then the data."""
    hello, answer = b"h" * load.request_bytes, b"a" * load.response_bytes
    client = api.ASTFProgram(stream=False)
    client.send_msg(hello)
    client.recv_msg(1)
    server = api.ASTFProgram(stream=False)
    server.recv_msg(1)
    server.send_msg(answer)
    count = load.data_packets_per_session
    if load.hold_s > 0:
        client.delay(round(load.hold_s * 1e6))
    if count > 0:
        client.set_var("var1", count)
        client.set_label("a:")
        client.send_msg(b"d" * load.request_bytes)
        client.delay(round(1e6 / load.data_pps_per_session))
        client.jmp_nz("var1", "a:")
        server.recv_msg(count)
    return client, server
