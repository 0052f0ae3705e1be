"""Fakes of what the tests must not reach: the `claude` executable (`claude`), and loopback
fakes of the Anthropic Messages API for the SDK (`anthropic_api`) and for the real claude CLI
(`messages_api`) and of the OpenAI Responses API for the real codex CLI (`responses_api`), all
three on the server of `loopback`."""
