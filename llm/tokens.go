package llm

import "encoding/json"

// perMessageTokens covers the role markers and separators a chat template
// wraps around each message.
const perMessageTokens = 8

// CountTokens estimates the tokens of text for budgets, erring high: one token
// per 3 bytes of UTF-8, rounded up. Real BPE tokenizers average about 4 bytes
// per token on English and code, and about one token per CJK character (3
// bytes), so the estimate over-counts typical prompts by roughly a quarter.
// Local models each have their own tokenizer; an estimate with margin is the
// honest figure for sizing a context window. Accounting uses the counts the
// server reports, never this.
func CountTokens(text string) int {
	return (len(text) + 2) / 3
}

// countMessages estimates a chat request's prompt tokens: messages with their
// template overhead, plus tool definitions, which chat templates render into
// the prompt too.
func countMessages(msgs []Message, tools []Tool) int {
	n := 0
	for _, m := range msgs {
		n += perMessageTokens + CountTokens(m.Content)
		for _, tc := range m.ToolCalls {
			n += CountTokens(tc.Name) + CountTokens(string(tc.Arguments)) + perMessageTokens
		}
	}
	for _, t := range tools {
		b, _ := json.Marshal(t)
		n += CountTokens(string(b)) + perMessageTokens
	}
	return n
}
