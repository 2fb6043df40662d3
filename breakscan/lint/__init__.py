"""``breakscan lint``: the static pre-scan that reads source with ``ast`` (no torch): the file's
names (``names``), which values are tensors (``tensors``), which calls are followed (``calls``),
the walk (``walker``), one small check per pattern (``checks``) and the entry points (``run``)."""
