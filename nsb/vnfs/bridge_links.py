"""The links a switch VNF's bridge carries (``{ends: [a:if, b:if], via: br0}``) and the
option naming that bridge: shared by every switch (OVS, the Linux bridge)."""

from __future__ import annotations

BRIDGE_OPTION = {"description": "the bridge the links via it are on",
                 "type": "string", "default": "br0"}


def links_via(bridge: str, node, context, where) -> list:
    """The context's links via ``bridge`` of ``node``; none is a located line."""
    links = [link for link in context.links
             if link.via == bridge and link.switch_a.node == node.name]
    if not links:
        raise where.error(
            f"no link goes via bridge '{bridge}' of node {node.name}; write links as "
            f"{{ends: [a:if, b:if], via: {bridge}}} and list the bridge in the node's "
            "'bridges'", "bridge")
    return links
