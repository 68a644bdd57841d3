// Package llm is lemmings' only way to a model. A Router maps roles (primary,
// summarizer, supervisor, embedding) to providers: Ollama through its Go API
// client, OpenRouter and any OpenAI-compatible server through go-openai. It
// sizes Ollama's context window so nothing is cut silently, retries transient
// faults, limits concurrency, counts tokens and cost, and writes a redacted
// prompt log. Structured asks for a Go value and repairs what weak models send
// back; Composer builds prompts in a fixed order within a token budget.
package llm
