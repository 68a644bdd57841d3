package llm

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestExtractJSON(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   string
		want string // JSON, compared by value
	}{
		{"plain JSON is returned as is", `{"a":1}`, `{"a":1}`},
		{"surrounding space", "\n  [1, 2]\n", `[1,2]`},
		{"json fence", "Here you go:\n```json\n{\"done\": true}\n```\nAnything else?", `{"done":true}`},
		{"bare fence", "```\n{\"x\": \"y\"}\n```", `{"x":"y"}`},
		{"fence with prose braces outside", "I used {braces} in prose.\n```json\n{\"k\": 2}\n```", `{"k":2}`},
		{"prose around an object", `Sure! The answer is {"answer": "42", "sure": true}. Hope it helps.`, `{"answer":"42","sure":true}`},
		{"largest balanced span wins over a mention", `Step [1]: here is the plan {"steps": ["a", "b"]}`, `{"steps":["a","b"]}`},
		{"brackets inside strings do not confuse", `x {"code": "if (a) { return [1]; }"} y`, `{"code":"if (a) { return [1]; }"}`},
		{"trailing commas", `{"a": [1, 2, 3,], "b": {"c": 1,},}`, `{"a":[1,2,3],"b":{"c":1}}`},
		{"single quotes", `{'name': 'lemmings', 'ok': 'it"s'}`, `{"name":"lemmings","ok":"it\"s"}`},
		{"unquoted keys", `{title: "Add flag", priority: 2}`, `{"title":"Add flag","priority":2}`},
		{"line and block comments", "{\n  // the title\n  \"title\": \"x\", /* why */ \"n\": 1\n}", `{"title":"x","n":1}`},
		{"hash comments", "{\n  \"a\": 1, # first\n  \"b\": 2\n}", `{"a":1,"b":2}`},
		{"python literals", `{"done": True, "failed": False, "reason": None}`, `{"done":true,"failed":false,"reason":null}`},
		{"truncated mid-string", `{"summary": "added the fla`, `{"summary":"added the fla"}`},
		{"truncated mid-array", `{"files": ["a.go", "b.go"`, `{"files":["a.go","b.go"]}`},
		{"truncated after a key", `{"a": 1, "b":`, `{"a":1,"b":null}`},
		{"truncated inside a fence", "```json\n{\"a\": [1, 2", `{"a":[1,2]}`},
		{"missing comma", `{"a": 1 "b": 2}`, `{"a":1,"b":2}`},
		{"doubled comma", `{"a": 1,, "b": 2}`, `{"a":1,"b":2}`},
		{"raw newline in a string", "{\"text\": \"line1\nline2\"}", `{"text":"line1\nline2"}`},
		{"raw control character in a string", "{\"a\": \"x\x01y\"}", `{"a":"x\u0001y"}`},
		{"bad unicode escape", `{"a": "\u12 z"}`, `{"a":"\\u12 z"}`},
		{"windows path backslashes", `{"path": "C:\Users\me"}`, `{"path":"C:\\Users\\me"}`},
		{"smart quotes", "{“a”: “b”}", `{"a":"b"}`},
		{"a scalar reply", `"just a string"`, `"just a string"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := ExtractJSON(c.in)
			if err != nil {
				t.Fatalf("ExtractJSON(%q): %v", c.in, err)
			}
			if !json.Valid(got) {
				t.Fatalf("invalid JSON %q", got)
			}
			var gv, wv any
			_ = json.Unmarshal(got, &gv)
			if err := json.Unmarshal([]byte(c.want), &wv); err != nil {
				t.Fatalf("bad want: %v", err)
			}
			if !reflect.DeepEqual(gv, wv) {
				t.Errorf("ExtractJSON(%q) = %s, want %s", c.in, got, c.want)
			}
		})
	}
}

func TestExtractJSONNothingRecoverable(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "   ", "I cannot help with that.", "The answer is 42."} {
		got, err := ExtractJSON(in)
		if err == nil {
			t.Errorf("ExtractJSON(%q) = %q, want an error", in, got)
		}
	}
	_, err := ExtractJSON("no json here")
	if err == nil || !strings.Contains(err.Error(), "no JSON object or array") {
		t.Errorf("error should say why: %v", err)
	}
}

func FuzzExtractJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":1}`, "```json\n{\"a\": [1,\n```", `{'a': True,}`, `{a: 1 // c`, `[[[[`, `}}}{{{`,
		"{\"s\": \"\\u12\"}", "prose {\"x\": \"y\"} prose [1,2]", "{\"a\": \"b\x00\"}", `{"a":1,,}`,
		"\"unterminated", "{\"k\": 'v\\'}", "```\n```", "# {\n}", `{"a": [1, {"b": }]}`,
		// Issue 43's hostile replies: nesting that overflowed the repair's stack.
		// (TestAHostileReplyIsAFailedExtractionNeverACrash sends the 2,000,000.)
		strings.Repeat("[", 20_000), strings.Repeat(`{"a":`, 5_000), "'" + strings.Repeat("[", 5_000),
		"```json\n" + strings.Repeat("[{", 5_000), `{"s": "` + strings.Repeat("[", 5_000),
		strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth), strings.Repeat("[", MaxJSONDepth+1),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := ExtractJSON(s)
		if err == nil && !json.Valid(out) {
			t.Fatalf("ExtractJSON(%q) returned invalid JSON %q", s, out)
		}
	})
}

// Reproduction 11 of issue 43: a reply of 2,000,000 "[" overflowed the
// repair parser's stack, a fatal error no recover catches, and the run was
// left crashed. It is a failed extraction now, saying why, in linear time.
func TestAHostileReplyIsAFailedExtractionNeverACrash(t *testing.T) {
	for name, reply := range map[string]string{
		"2,000,000 [":          strings.Repeat("[", 2_000_000),
		"2,000,000 {\"a\":":    strings.Repeat(`{"a":`, 2_000_000),
		"deep in a fence":      "```json\n" + strings.Repeat("[", 100_000) + "\n```",
		"deep after prose":     "Here it is: " + strings.Repeat("[{", 50_000),
		"deep in a string":     `{"a": "` + strings.Repeat("[", 100_000),
		"over the size":        `{"a": "` + strings.Repeat("x", MaxJSONBytes) + `"}x`,
		"valid but too deep":   strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000),
		"single-quoted string": `{'a': '` + strings.Repeat("[", 100_000),
	} {
		start := time.Now()
		out, err := ExtractJSON(reply)
		if err == nil {
			if !json.Valid(out) {
				t.Errorf("%s: invalid JSON returned", name)
			}
			continue
		}
		var be *BoundsError
		if name != "valid but too deep" && !errors.As(err, &be) {
			t.Errorf("%s: %v, want a bounds error", name, err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s took %s", name, took)
		}
	}
	if _, err := ExtractJSON(strings.Repeat("[", MaxJSONDepth) + strings.Repeat("]", MaxJSONDepth)); err != nil {
		t.Errorf("a reply at the depth limit: %v", err)
	}
}
