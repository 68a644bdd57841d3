package redact

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Fake secrets are assembled from pieces so secret scanners do not flag this
// file; they have the real formats.
var (
	fakeOpenRouter = "sk-or-" + "v1-" + strings.Repeat("a1b2c3d4", 8)
	fakeOpenAI     = "sk-" + "proj-" + strings.Repeat("Xy12Ab34Cd56Ef78Gh90Ij", 3) + "Xy12Ab34" + "T3Blbk" + "FJ" + strings.Repeat("Kl34Mn56Op78Qr90St12Uv", 3) + "Kl34Mn56"
	fakeAnthropic  = "sk-" + "ant-api03-" + strings.Repeat("Zz9_aB8-", 11) + "Zz9_a" + "AA"
	fakeGitHub     = "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
	fakeGitHubPAT  = "github" + "_pat_" + "11ABCDEFG0" + strings.Repeat("xY3zQ8wV1u", 7) + "Tk"
	fakeAWS        = "AKIA" + "IOSFODNN7EXAMPLX"
	fakeSlack      = "xox" + "b-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	fakeGoogle     = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
	fakeJWT        = "eyJ" + "hbGciOiJIUzI1NiJ9.eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	fakeHF         = "hf" + "_" + "jXkqPzLmWvRtNbYcGdHsFaQeUiOpZxCvBn"
	fakeStripe     = "sk" + "_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
	fakeKey        = "-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1b2c3\nq9z8y7x6w5v4u3t2s1r0\n-----END RSA PRIVATE KEY-----"
)

func TestRedactFindsSecrets(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, secret, kind string
	}{
		{"OpenRouter key", "export OPENROUTER_API_KEY=" + fakeOpenRouter, fakeOpenRouter, "openrouter-key"},
		{"OpenRouter key in prose", "my key is " + fakeOpenRouter + ", keep it safe", fakeOpenRouter, "openrouter-key"},
		{"OpenAI project key", "client = OpenAI(api_key=\"" + fakeOpenAI + "\")", fakeOpenAI, "openai-api-key"},
		{"Anthropic key", "ANTHROPIC=" + fakeAnthropic, fakeAnthropic, "anthropic-api-key"},
		{"GitHub token", "git clone https://" + fakeGitHub + "@github.com/x/y", fakeGitHub, "github-pat"},
		{"GitHub fine-grained PAT", "token: " + fakeGitHubPAT, fakeGitHubPAT, "github-fine-grained-pat"},
		{"AWS access key id", "aws_access_key_id = " + fakeAWS, fakeAWS, "aws-access-token"},
		{"Slack bot token", "SLACK=" + fakeSlack, fakeSlack, "slack-bot-token"},
		{"Google API key", "const k = '" + fakeGoogle + "';", fakeGoogle, "gcp-api-key"},
		{"JWT", "cookie: session=" + fakeJWT, fakeJWT, "jwt"},
		{"Hugging Face token", "HF_TOKEN=" + fakeHF, fakeHF, "huggingface-access-token"},
		{"Stripe live key", "stripe.api_key = '" + fakeStripe + "'", fakeStripe, "stripe-access-token"},
		{"bearer token", "curl -H 'Authorization: Bearer abc123def456ghi789jkl' x", "abc123def456ghi789jkl", "curl-auth-header"},
		{"private key block", "key:\n" + fakeKey + "\nend", "MIIEpAIBAAKCAQEA1b2c3", "private-key"},
		{"unterminated private key block", "-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAABG5vbmU", "b3BlbnNzaC1rZXktdjEAAAAA", "private-key"},
		{"password in a URL", "DATABASE_URL=postgres://app:s3cr3tPass@db:5432/app", "s3cr3tPass", "url-password"},
		{"env assignment", "DB_PASSWORD=hunter2hunter2", "hunter2hunter2", "password-assignment"},
		{"quoted assignment", `password = "correct horse"`, "", ""},
		{"quoted short password", `db_password := "hunter2"`, "hunter2", "password-assignment"},
		{"JSON field", `{"client_secret": "9f8e7d6c5b4a"}`, "9f8e7d6c5b4a", "generic-api-key"},
		{"YAML field", "auth:\n  api_key: Zq8xW2vR7tY1\n", "Zq8xW2vR7tY1", "generic-api-key"},
		{"CLI flag", "mysql --password=Tr0ub4dor3 -u root", "Tr0ub4dor3", "flag-secret"},
		{"an allow marker does not help", "k = " + fakeOpenRouter + " # gitleaks:allow", fakeOpenRouter, "openrouter-key"},
		{"gitleaks' allow marker does not help", "k = " + fakeGitHub + " // gitleaks:allow", fakeGitHub, "github-pat"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := String(c.in)
			if c.secret == "" {
				return
			}
			if strings.Contains(out, c.secret) {
				t.Errorf("secret survived: %q", out)
			}
			if !strings.Contains(out, "[REDACTED:"+c.kind+"]") {
				t.Errorf("want [REDACTED:%s] in %q", c.kind, out)
			}
		})
	}
}

func TestRedactLeavesNearMissesAlone(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"task-runner and sk-learn are names, not keys",
		"the password is required; set it with --password-file",
		`password := os.Getenv("DB_PASSWORD")`,
		`apiKey: ${OPENROUTER_API_KEY}`,
		"api_key: $OPENROUTER_API_KEY",
		"token = getToken(ctx)",
		"secret = cfg.Secret",
		"max_tokens: 4096",
		"num_tokens = 1000000",
		`"tokenizer": "cl100k_base"`,
		"password: string;",
		"token: Token",
		"Token: token,",
		`{"password": {"type": "string"}}`,
		"secret_name: my-db-credentials",
		"http://localhost:11434/api/chat",
		"https://user@example.com/path",
		"the bearer of bad news",
		"AKIA is a prefix", // too short
		"ghp_short",
		"const primaryKey = id",
		"password: <your password here>",
		`PASSWORD="changeme"`,
		"API_KEY=xxxxxxxxxxxxxxxx",
		"eyJhbGciOi is only a header",
		"sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"commit 7ba3dd9 fixes the auth token refresh",
	} {
		if out := String(in); out != in {
			t.Errorf("String(%q) = %q, want it unchanged", in, out)
		}
	}
}

func TestJSONKeepsTheDocumentAndCutsTheSecrets(t *testing.T) {
	t.Parallel()
	args := []byte(`{"content": "OPENROUTER_API_KEY=` + fakeOpenRouter + `\n", "password": "hunter2", "path": ".env", "n": 1.50, "list": ["` + fakeGitHub + `", 2]}`)
	got := Default().JSON(args)
	if !json.Valid(got) || strings.Contains(string(got), fakeOpenRouter) || strings.Contains(string(got), "hunter2") || strings.Contains(string(got), fakeGitHub) {
		t.Errorf("JSON = %s", got)
	}
	for _, keep := range []string{`"path": ".env"`, `"n": 1.50`, `, 2]`} {
		if !strings.Contains(string(got), keep) {
			t.Errorf("%s must stay as it was: %s", keep, got)
		}
	}
	plain := []byte(`{"a": "nothing secret", "b": [1, 2, {"c": "d"}]}`)
	if got := Default().JSON(plain); &got[0] != &plain[0] {
		t.Errorf("a document without a secret must come back as is")
	}
}

// BenchmarkRedact measures redaction throughput without the memo (redact),
// on code that names a token on every line, on this repository's Go source,
// and on prose with none of gitleaks' keywords; and with the memo (Redact)
// on a text seen before, as a resent conversation is.
func BenchmarkRedact(b *testing.B) {
	codeWithKeywords := strings.Repeat("func main() {\n\tfmt.Println(\"hello\") // a line of ordinary code with token counts\n}\n", 400) + "KEY=" + fakeOpenRouter
	var src strings.Builder
	files, _ := filepath.Glob("../../graph/*.go")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		src.Write(data)
		if src.Len() > 128<<10 {
			break
		}
	}
	prose := strings.Repeat("The quick brown fox jumps over the lazy dog; nothing on this line is sensitive at all.\n", 400)
	for _, c := range []struct {
		name   string
		text   string
		redact func(string) string
	}{
		{"code-with-keywords", codeWithKeywords, rules},
		{"go-source", src.String(), rules},
		{"prose-without-keywords", prose, rules},
		{"memo-hit", codeWithKeywords, String},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			for i := 0; i < b.N; i++ {
				c.redact(c.text)
			}
		})
	}
}

// The strings issue 18 named: secrets the old hand-written rules missed, and
// harmless text they rewrote (all from gitleaks' rule tests).
func TestRedactIssue18Strings(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, secret string }{
		{"SLACK_APP=" + "xapp-" + "1-A0123BCD4EF-1234567890123-9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"},
		{"curl --cacert ca.crt -u elastic:" + "P@ssw0rd$1 https://localhost:9200", "P@ssw0rd$1"},
		{`curl -s -v --user "j.smith:` + `dB2yF6@qL9vZm1P#4J" "https://api.contoso.org/user/me"`, "dB2yF6@qL9vZm1P#4J"},
		{"AIza" + "SyNHxIf32IQ1a1yjl3ZJIqKZqzLAK1XhDk-", "SyNHxIf32IQ1a1yjl3ZJIqKZqzLAK1XhDk-"},
		{`api_token = "` + `5eb4223e-5008-46e5-be67-c7b8f2732305"`, "5eb4223e-5008-46e5-be67-c7b8f2732305"},
		{"curl -H 'Authorization: Basic " + "YnJvd3Nlcjo=' \\", "YnJvd3Nlcjo="},
	} {
		if out := String(c.in); strings.Contains(out, c.secret) || !strings.Contains(out, "[REDACTED:") {
			t.Errorf("String(%q) = %q: the secret survived", c.in, out)
		}
	}
	for _, in := range []string{
		"aws_access_key: AKIA" + "IOSFODNN7EXAMPLE",
		"gh" + "p_" + strings.Repeat("x", 36),
		"xox" + "b-xxxxxxxxx-xxxxxxxxxx-xxxxxxxxxxxx",
		"- (id)hf_requiredCharacteristicTypesForDisplayMetadata;",
		"csrf-token=Mj2qykJO5rELyHgezQ69nzUX0i3OH67V7+V4eUrLfpuyOuxmiW9rhROG/Whikle15syazJOkrjJa3U2AbhIvUw==",
	} {
		if out := String(in); out != in {
			t.Errorf("String(%q) = %q, want it unchanged", in, out)
		}
	}
}

// One detector serves every goroutine (its constructor writes viper's global
// instance, so it is built once): concurrent calls give the sequential
// results, and -race sees no shared write.
func TestRedactConcurrently(t *testing.T) {
	t.Parallel()
	ins := []string{"KEY=" + fakeOpenRouter, "git clone https://" + fakeGitHub + "@github.com/x/y",
		strings.Repeat("an ordinary line with a token count\n", 20) + "aws_access_key_id = " + fakeAWS, "nothing here"}
	want := make([]string, len(ins))
	for i, in := range ins {
		want[i] = rules(in)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ins {
				if got := String(ins[(i+g)%len(ins)]); got != want[(i+g)%len(ins)] {
					t.Errorf("concurrent String(%q) = %q, want %q", ins[(i+g)%len(ins)], got, want[(i+g)%len(ins)])
				}
			}
		}()
	}
	wg.Wait()
}

func TestValueRedactsACopyAndLeavesTheOriginal(t *testing.T) {
	t.Parallel()
	type row struct {
		Text string
		Tags []string
		when int
	}
	type view struct {
		Title string
		Rows  []row
		ByKey map[string]*row
		Body  any
	}
	in := view{Title: "run", Rows: []row{{Text: "token: " + fakeGitHub, when: 7}, {Text: "plain"}},
		ByKey: map[string]*row{"b": {Text: "KEY=" + fakeOpenRouter}, "a": {Tags: []string{"x"}}}, Body: row{Text: fakeSlack}}
	out := Value(Default(), in)
	if strings.Contains(fmt.Sprint(out), fakeGitHub) || strings.Contains(out.ByKey["b"].Text, fakeOpenRouter) || strings.Contains(out.Body.(row).Text, "xoxb-") {
		t.Errorf("a secret survived: %+v", out)
	}
	if out.Rows[0].when != 7 || out.Rows[1].Text != "plain" || out.ByKey["a"].Tags[0] != "x" || out.Title != "run" {
		t.Errorf("the rest must stay: %+v", out)
	}
	if !strings.Contains(in.Rows[0].Text, fakeGitHub) || !strings.Contains(in.ByKey["b"].Text, fakeOpenRouter) {
		t.Errorf("the original was changed")
	}
	plain := view{Title: "nothing", Rows: []row{{Text: "to hide"}}}
	if got := Value(Default(), plain); &got.Rows[0] != &plain.Rows[0] {
		t.Errorf("a value without a secret must come back as is")
	}
}
