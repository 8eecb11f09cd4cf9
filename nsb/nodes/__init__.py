"""Nodes and what nsb does against them: the node model (``node``), platform facts
(``platform``), NFVi sampling (``nfvi``), pre-flight checks (``preflight``), the
hugepage pool (``hugepage_pool``) and Ansible inventories of a pod (``inventory``)."""
