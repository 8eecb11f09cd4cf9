"""Test double: a context with no nodes, for pipeline tests that need no machine."""

from nsb.contexts.base import Context


class NullContext(Context):
    """Double: deploys nothing; records that teardown ran."""

    def __init__(self, spec, options, run):
        super().__init__(spec, options, run)
        self.deployed = False
        self.undeployed = False

    def deploy(self) -> None:
        self.deployed = True

    def undeploy(self) -> None:
        self.undeployed = True
