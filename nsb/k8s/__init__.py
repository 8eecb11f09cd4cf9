"""Kubernetes: the cluster nsb's kubernetes context reaches, its pods and images."""
