"""The data that flows between the stages and across processes: records, results, verdicts,
the raw captures, the carried source lines, and their JSON form. No stage logic."""
