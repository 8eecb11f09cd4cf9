"""OPNFV SampleVNF applications (vFW, vACL, vCGNAPT, UDP_Replay) as NSB runs them:
their pipeline config and CLI script generated from the node's ports and NSB's
``vnf_config`` and ``rules``, started under a pseudo-terminal and driven at their
CLI prompt (``pipeline>``, ``Replay>``), KPIs from their own stats commands."""
