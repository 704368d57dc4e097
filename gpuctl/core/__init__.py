"""Plain functions per capability: keyword arguments in, frozen result objects out; no printing."""
