"""Reading files the suite did not write (untrusted, bounded), writing its own (private, by rename), and the
suite's own identity (its commit and the hashes of its built files)."""
