"""BS035 recompile_limit: Recompile limit reached.

The rule's whole behaviour: its entry.
"""
from __future__ import annotations

from .model import Rule

RULE = Rule(
    "BS035", "recompile_limit", "recompile-limit",
    'Recompile limit reached',
    why='The function was recompiled more than `recompile_limit` times (a guard keeps '
        'failing), so it now runs eagerly.',
    suggestion='Find the changing guard (`TORCH_LOGS=recompiles`): compile with '
               '`dynamic=True`/`mark_dynamic`, stop mutating globals in forward; raise the '
               'limit only when the recompiles are expected.',
    before="CALLS['n'] += 1\nreturn self.fc(x)",
    after='return self.fc(x)  # count in the caller',
    ids=('GB0039'))
