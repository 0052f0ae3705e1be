"""`gitgauge doctor`: would `gitgauge mine` work here, and if not, why, in plain lines; with
`-c CONFIG`, would `gitgauge run` with that config (`--probe`: one short real call to its agent).

Each check runs what mining runs, the way mining runs it: the config through its loader, the
linked directories through `core.links`, the sandbox through mining's policy
(`mining.sandbox.mining_sandbox`), the interpreters the suite resolves in that sandbox
(`interpreter.py`), and `testCommand` at HEAD in a checkout of gitgauge's own, in that sandbox
(`mining.trial`, read by `testrun.py`). The agent CLIs are looked for (binary, login file or
key) without running them (`agents.py`); only `--probe` talks to an API (`probe.py`).

One module a concern: `findings.py` (what a check says), `diagnose.py` (the checks in the
order a first `mine` meets them), `checks.py` (git, the environment, links, the sandbox),
`interpreter.py`, `testrun.py`, `agents.py`, `probe.py`.
"""

from gitgauge.doctor.diagnose import diagnose as diagnose
from gitgauge.doctor.findings import Diagnosis as Diagnosis
from gitgauge.doctor.findings import Finding as Finding
