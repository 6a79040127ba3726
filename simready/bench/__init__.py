"""Benchmarks: the performance figures each issue names, one module per stage.

``python -m simready.bench [SECTION ...]`` (what ``make bench`` runs) prints every
section in DAG order; ``python -m simready.bench.<stage>`` runs one with its own
options. Figures are measured, never asserted: the machine is shared and noisy,
so read them as orders of magnitude and compare ratios printed side by side.
Nothing in the pipeline imports this package.
"""
