"""Stage 3, `gitgauge report` and `compare`: results to rows, intervals, paired tests, HTML."""
