"""Stage 2, `gitgauge run`: every agent configuration on every task, in fresh workspaces, scored."""
