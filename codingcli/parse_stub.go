package codingcli

func newCodexParser() parser  { return nil }
func newGeminiParser() parser { return nil }
