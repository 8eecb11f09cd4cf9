"""PROX: the VNF and its generator, their config, client and log."""
