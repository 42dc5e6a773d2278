"""Reading files the suite did not write (untrusted, bounded) and writing its own (private, by rename)."""
