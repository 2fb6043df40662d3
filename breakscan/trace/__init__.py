"""``breakscan trace``: a job's TORCH_TRACE files read record by record (no torch), each rank
through analysis, and the ranks merged into one report."""
