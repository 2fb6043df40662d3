"""``--fix``: the fix planned per break, verified in its own child process and judged, the
switches on a break's path, and the exact source rewrites (libcst) ``--write`` applies."""
