"""The results model and what is derived from it alone: expectations, causes, coverage, the conformance statement."""
