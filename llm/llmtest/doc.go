// Package llmtest is a scripted model server for tests and the demo. It speaks
// Ollama's /api/chat (streaming NDJSON and not), /api/embed, /api/tags,
// /api/show and /api/version, and OpenAI's /v1/chat/completions (streaming SSE
// and not, tool_calls, usage with OpenRouter's cost), OpenAI's Responses API
// (/v1/responses: what Codex CLI speaks), Anthropic's /v1/messages (what
// Claude Code speaks), Google's Gemini API (:generateContent and
// :streamGenerateContent: what Gemini CLI speaks), /v1/embeddings and
// /v1/models, on a loopback httptest server. It answers from a script of Steps,
// records every call, and can misbehave on request: status codes, Retry-After,
// latency, malformed bodies, cut streams, streams without their end marker,
// mid-stream errors. Its Ollama side refuses and cuts as a real v0.11.4
// server does (checked by llm's contract tests): option types, formats,
// capabilities, and a prompt longer than the window counted as one whole
// window, silently.
//
// It imports nothing of lemmings but the leaves internal/textutil and
// nodes/prompts (the names of the prompts it answers), and nothing
// of package testing, so the demo can run it in-process.
package llmtest
