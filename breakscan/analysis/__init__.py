"""Stage 3, torch-free at import: what the records mean (break messages, root causes, origins,
advice, impact and ranking, recompiles); serves both a live scan and ``breakscan trace``."""
