"""A text-mode fixture task with the REAL codex CLI (npm `@openai/codex`) through the `codex`
adapter, against the loopback fake Responses API (`helpers/fakes/responses_api.py`): the model's
reply to the history fixture's prompt is codex's last `agent_message`, scored as the answer. (The
same with the real claude CLI, and an agent-mode fixture: tests/test_fixture_real_claude.py.)

Skipped when codex is missing, failed under `CI=true` (.ci/run installs it).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from helpers.cli import run_gitgauge
from helpers.components import require
from helpers.fakes.responses_api import FakeResponsesAPI, codex_env, codex_home
from helpers.repos import new_repo

# End to end (the real CLI on repositories built for the test): `-m "not slow"` leaves it out.
pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parent.parent / "examples" / "fixtures"
HISTORY = "gitbench-history-h001"
QUESTION = "the subject of the commit that added config.yml"


def test_the_real_codex_cli_answers_a_text_fixture_by_its_last_message(tmp_path: Path) -> None:
    require(shutil.which("codex") is not None, "the codex CLI (npm install -g @openai/codex)")
    pack = tmp_path / "pack"
    (pack / "history").mkdir(parents=True)
    shutil.copy(SAMPLE / "history/h001-subject-of-config.yaml", pack / "history")
    config = tmp_path / "codex.yaml"
    config.write_text("name: codex\nadapter: codex\n", encoding="utf-8")
    home = tmp_path / "home"  # the isolated HOME (helpers/environment.py), with its git identity
    # Nothing that reaches a real API or picks another codex (conftest keeps git pointed home).
    dropped = ("ANTHROPIC_", "OPENAI_", "CODEX_", "GITGAUGE_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    # The history fixture's prompt (its log in the context) gets the right subject; any other
    # prompt a wrong one, so a resolved pair shows the prompt reached codex.
    scripts = [(QUESTION, [{"message": "Add config file"}])]
    with FakeResponsesAPI(steps=[{"message": "Extend a"}], by_prompt=scripts) as fake:
        codex_home(home, fake.base_url)
        env.update(codex_env(tmp_path))
        repo = new_repo(tmp_path / "repo")
        repo.write("gitgauge.yaml", 'testCommand: "true"\n')
        repo.git("add", "gitgauge.yaml")
        repo.git("commit", "-q", "-m", "gitgauge")
        imported = run_gitgauge("import", "gitbench", str(pack), cwd=repo.root, env=env)
        assert imported.returncode == 0, imported.stderr + imported.stdout
        ran = run_gitgauge(
            "run", "-c", str(config), "--task", HISTORY, "--mode", "text", cwd=repo.root, env=env
        )
        assert ran.returncode == 0, ran.stderr + ran.stdout
    # codex_home's config keeps codex off everything but the fake (checked under strace in
    # test_adapter_codex.py): one model request, the prompt with the fixture's context in it.
    assert [request.path for request in fake.requests] == ["/v1/responses"]
    prompt = "\n".join(fake.requests[0].user_texts())
    assert QUESTION in prompt and "Extend a" in prompt, prompt
    (path,) = (repo.root / ".gitgauge" / "runs").glob("*/results/codex/*.json")
    result = json.loads(path.read_text(encoding="utf-8"))
    assert (result["task"], result["status"], result["mode"]) == (HISTORY, "resolved", "text")
    assert result["errorKind"] is None, result
    assert (result["answerSource"], result["answer"]) == ("message", "Add config file")
