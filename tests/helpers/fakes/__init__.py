"""Fakes of what the tests must not reach: the `claude` executable (`claude`), and loopback
fakes of the Anthropic Messages API for the SDK (`anthropic_api`) and for the real claude CLI
(`messages_api`), of the OpenAI Responses API for the real codex CLI (`responses_api`) and of
GitHub's REST API for `gitgauge ci`'s comment (`github_api`), all on the server of `loopback`."""
