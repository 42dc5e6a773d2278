"""The submission package: certify writes it, verify checks it offline."""
