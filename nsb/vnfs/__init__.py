"""VNFs: programs that run on nodes, as systems under test or traffic generators."""
