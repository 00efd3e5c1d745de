"""The benchmark tables, re-exported from :mod:`skdp_synth._tables` (the demo
uses them too)."""

from skdp_synth._tables import TABLES, bin_labels, load_table, load_tables

__all__ = ["TABLES", "bin_labels", "load_table", "load_tables"]
