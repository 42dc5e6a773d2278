"""Orchestration of the suite: running cases and captures, and writing reports."""
