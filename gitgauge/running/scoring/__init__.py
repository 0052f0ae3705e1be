"""Scoring an agent's work: diff size, protected files, resolved / regressed."""
