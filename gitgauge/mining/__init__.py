"""Stage 1, `gitgauge mine`: walk history, pick bug-fix candidates, prove them, write tasks."""
