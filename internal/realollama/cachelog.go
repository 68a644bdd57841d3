package realollama

import (
	"bufio"
	"strconv"
	"strings"
)

// CacheSlot is one `loading cache slot` line of the server's debug log (OLLAMA_DEBUG=1):
// the runner reused Used tokens of a prompt of Prompt tokens from its KV cache and evaluated
// the Remaining ones. v0.11.4's prompt_eval_count counts cached tokens too, so this log line
// is the only place the cache's share shows.
type CacheSlot struct {
	Prompt, Used, Remaining int
}

// CacheShare sums the cache slots of a stretch of log.
type CacheShare struct {
	Requests  int // completion requests that loaded a slot
	Prompt    int // prompt tokens over them
	Used      int // of which served from the cache
	Remaining int // of which evaluated
}

// Share is the fraction of prompt tokens served from the cache (0 with no requests).
func (c CacheShare) Share() float64 {
	if c.Prompt == 0 {
		return 0
	}
	return float64(c.Used) / float64(c.Prompt)
}

// ParseCacheSlots reads the `loading cache slot` lines of a server log, in order. Both
// runners write them (the llama.cpp runner and Ollama's own engine, which Gemma 3 uses).
// Lines that do not parse are skipped: the log is a diagnostic, not an interface.
func ParseCacheSlots(log string) []CacheSlot {
	var slots []CacheSlot
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, `msg="loading cache slot"`) {
			continue
		}
		var s CacheSlot
		got := 0
		for _, f := range strings.Fields(line) {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				continue
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				continue
			}
			switch k {
			case "prompt":
				s.Prompt, got = n, got|1
			case "used":
				s.Used, got = n, got|2
			case "remaining":
				s.Remaining, got = n, got|4
			}
		}
		if got == 7 {
			slots = append(slots, s)
		}
	}
	return slots
}

// SumCacheSlots adds up slots.
func SumCacheSlots(slots []CacheSlot) CacheShare {
	var c CacheShare
	for _, s := range slots {
		c.Requests++
		c.Prompt += s.Prompt
		c.Used += s.Used
		c.Remaining += s.Remaining
	}
	return c
}

// LogMark is the current length of the server log: pass it to CacheSince to measure one
// stretch of work (an implementor attempt, say).
func (s *Server) LogMark() int { return len(s.Log()) }

// CacheSince sums the cache slots the server logged since mark. The server must run with
// WithEnv("OLLAMA_DEBUG", "1"); without it the log has no such lines and the sum is zero.
func (s *Server) CacheSince(mark int) CacheShare {
	log := s.Log()
	if mark > len(log) {
		mark = len(log)
	}
	return SumCacheSlots(ParseCacheSlots(log[mark:]))
}
