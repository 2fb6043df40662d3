"""Running many scans: the isolated runner, the gate, `check`'s targets, the cache, shards and
their results files, expected counts, and `compare` of two targets. `check` and `merge` share
their logic from here, not from the CLI."""
