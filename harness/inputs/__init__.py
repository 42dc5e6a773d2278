"""What a run is given: manifests, address layouts, the catalogue, reason codes, spec versions, the provider probe, libfabric prefixes."""
