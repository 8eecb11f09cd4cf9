"""Several contexts as one: a task's ``contexts:`` list (a netns or Node context for
the generator, a libvirt context for the VNF). Their nodes share one namespace of
names; a context whose links reach nodes of another (``CrossLinking``) is given
those nodes before anything is deployed and deploys after them."""

from __future__ import annotations

import logging

from nsb.contexts.base import Context

LOG = logging.getLogger(__name__)


class CrossLinking:
    """A context with links to nodes of the contexts before it; alone in a task it
    is given no other nodes."""

    def link_across(self, others: dict) -> None:
        """Resolve this context's links against ``others`` (node name -> Node)."""
        raise NotImplementedError


def combine(contexts: list[Context]) -> Context:
    """The task's context: the only one, or all of them as one."""
    if len(contexts) == 1:
        if isinstance(contexts[0], CrossLinking):
            contexts[0].link_across({})
        return contexts[0]
    return CombinedContext(contexts)


class CombinedContext(Context):
    def __init__(self, contexts: list[Context]):
        first = contexts[0]
        super().__init__(first.spec, first.options, first.run)
        self.contexts = contexts
        for context in contexts:
            for name, node in context.nodes.items():
                if name in self.nodes:
                    raise context.spec.where.error(
                        f"node '{name}' is also in an earlier context; node names must be "
                        "unique across contexts")
                self.nodes[name] = node
        for index, context in enumerate(contexts):
            if isinstance(context, CrossLinking):
                earlier = {name: node for c in contexts[:index] for name, node in c.nodes.items()}
                context.link_across(earlier)
        self.links = [link for context in contexts for link in context.links]

    def deploy(self) -> None:
        for context in self.contexts:
            LOG.info("deploying %s context", context.spec.type)
            context.deploy()

    def pending_nodes(self) -> list[str]:
        return [name for context in self.contexts for name in context.pending_nodes()]

    def deploy_pending(self) -> None:
        for context in self.contexts:
            context.deploy_pending()

    def undeploy(self) -> None:
        """Every context, last first, even when one of them fails."""
        failure = None
        for context in reversed(self.contexts):
            try:
                context.undeploy()
            except Exception as exc:  # the others must still be cleaned up
                LOG.error("undeploying the %s context failed: %s", context.spec.type, exc)
                failure = failure or exc
        if failure is not None:
            raise failure

    def collect_kpi(self) -> list:
        return [kpis for context in self.contexts for kpis in context.collect_kpi()]

    def describe(self) -> dict:
        described = [context.describe() for context in self.contexts]
        return {"type": "+".join(c.spec.type for c in self.contexts),
                "nodes": {k: v for d in described for k, v in d["nodes"].items()},
                "links": [link for d in described for link in d["links"]],
                "contexts": [{k: v for k, v in d.items() if k != "nodes"}
                             for d in described]}
