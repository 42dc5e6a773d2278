"""Runs against runs: compare, a CI baseline, the history index and site."""
