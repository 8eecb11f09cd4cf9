"""Open vSwitch: the VNF, a run's own daemons, its statistics."""
