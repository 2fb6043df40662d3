"""``breakscan lint``: the static pre-scan that reads source with ``ast`` (no torch): a walker
that knows the code's shape and one small check per pattern."""
