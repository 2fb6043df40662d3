"""Running work in child processes: the isolation that knows no job type, the jobs it can run,
and the runner that takes one target from its isolated scan to its gate's verdict."""
