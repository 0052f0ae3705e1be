"""The export stage: mined tasks as other harnesses' datasets (`gitgauge export`): SWE-bench JSON
lines (`swebench.py`, which also holds what every format shares) and Harbor task folders
(`harbor.py`). It reads tasks and the repository, never runs or results."""
