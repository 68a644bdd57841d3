package termsafe

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestStringRemovesControlsEscapesAndBidi(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\nwith\ttabs":                          "plain text\nwith\ttabs",
		"copy \x1b]52;c;ZWNobyBoaQ==\x07 done":            "copy  done",
		"osc with ST \x1b]0;title\x1b\\ end":              "osc with ST  end",
		"\x1b[31mred\x1b[0m and \x1b[2J\x1b[H":            "red and ",
		"unterminated \x1b]52;c;AAAA\nnext line":          "unterminated \nnext line",
		"file\u202etxt.exe":                               "filetxt.exe",
		"isolates \u2066a\u2069 marks \u200e\u200f\u061c": "isolates a marks ",
		"c1 csi \u009b31m and \u0085 nel":                 "c1 csi  and  nel",
		"bell\a back\b cr\r del\x7f nul\x00":              "bell back cr del nul",
		"keypad \x1b= and \x1b(B charset":                 "keypad  and  charset",
		"invalid \xff\xfe bytes":                          "invalid \ufffd\ufffd bytes",
		"dcs \x1bPq#0;2;0;0;0\x1b\\ sixel":                "dcs  sixel",
		"ends with ESC \x1b":                              "ends with ESC ",
		"accents é, 漢字 and emoji 🙂 stay":                  "accents é, 漢字 and emoji 🙂 stay",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
		if !Clean(String(in)) {
			t.Errorf("String(%q) is not clean", in)
		}
	}
	if got := Line("  subject\x1b]52;c;x\x07\nsecond\tline "); got != "subject second line" {
		t.Errorf("Line = %q", got)
	}
}

func TestJSONKeepsTheValueEscaped(t *testing.T) {
	v := map[string]string{"d": "a\x1b]52;c;x\x07b\u202ec\u0085d\x7f"}
	raw, _ := json.Marshal(v)
	out := JSON(raw)
	for _, bad := range []string{"\x1b", "\u202e", "\u0085", "\x7f"} {
		if bytes.Contains(out, []byte(bad)) {
			t.Errorf("%q raw in %s", bad, out)
		}
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil || back["d"] != v["d"] {
		t.Errorf("the value changed: %q %v", back["d"], err)
	}
}

func TestWriterCleansTextEscapesJSONAndLetsControlPast(t *testing.T) {
	var buf bytes.Buffer
	w := Writer(Writer(&buf))
	_, _ = w.Write([]byte("directive: \x1b]52;c;AAAA\x07\u202eevil\n"))
	_, _ = w.Write([]byte(`{"kind":"directive","text":"\u001b]52 ` + "\u202e" + `"}` + "\n"))
	Control(w, "\r\x1b[K")
	got := buf.String()
	want := "directive: evil\n" + `{"kind":"directive","text":"\u001b]52 \u202e"}` + "\n\r\x1b[K"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if strings.Count(got, "\x1b") != 1 {
		t.Errorf("only the control sequence may hold ESC: %q", got)
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"\x1b]52;c;x\x07", "\x1b[", "\u202e", "\xc2\x9b1;2m", "\x1bP\x1b\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if !Clean(out) || String(out) != out {
			t.Fatalf("String(%q) = %q: not clean or not idempotent", s, out)
		}
		if len(out) > len(s)*3 {
			t.Fatalf("String grew %d bytes to %d", len(s), len(out))
		}
	})
}
