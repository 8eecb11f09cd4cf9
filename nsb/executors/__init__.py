"""Where commands run: locally, inside a network namespace, or over SSH.

VNF code only ever passes argument lists; quoting is the executor's business.
"""
