package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

// Fake secrets are assembled from pieces so secret scanners do not flag this
// file; they have the real formats.
var (
	fakeOpenRouter = "sk-or-" + "v1-" + strings.Repeat("a1b2c3d4", 8)
	fakeOpenAI     = "sk-" + "proj-" + "Xy12Ab34Cd56Ef78Gh90Ij12Kl34"
	fakeAnthropic  = "sk-" + "ant-api03-" + strings.Repeat("Zz9_", 12)
	fakeGitHub     = "gh" + "p_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
	fakeGitHubPAT  = "github" + "_pat_" + strings.Repeat("11ABCDEFG", 7)
	fakeAWS        = "AKIA" + "IOSFODNN7EXAMPLX"
	fakeSlack      = "xox" + "b-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	fakeGoogle     = "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"
	fakeJWT        = "eyJ" + "hbGciOiJIUzI1NiJ9.eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	fakeHF         = "hf" + "_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
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
		{"OpenAI project key", "client = OpenAI(api_key=\"" + fakeOpenAI + "\")", fakeOpenAI, "openai-key"},
		{"Anthropic key", "ANTHROPIC=" + fakeAnthropic, fakeAnthropic, "anthropic-key"},
		{"GitHub token", "git clone https://" + fakeGitHub + "@github.com/x/y", fakeGitHub, "github-token"},
		{"GitHub fine-grained PAT", "token: " + fakeGitHubPAT, fakeGitHubPAT, "github-token"},
		{"AWS access key id", "aws_access_key_id = " + fakeAWS, fakeAWS, "aws-access-key"},
		{"Slack bot token", "SLACK=" + fakeSlack, fakeSlack, "slack-token"},
		{"Google API key", "const k = '" + fakeGoogle + "';", fakeGoogle, "google-api-key"},
		{"JWT", "cookie: session=" + fakeJWT, fakeJWT, "jwt"},
		{"Hugging Face token", "HF_TOKEN=" + fakeHF, fakeHF, "huggingface-token"},
		{"Stripe live key", "stripe.api_key = '" + fakeStripe + "'", fakeStripe, "stripe-key"},
		{"bearer token", "curl -H 'Authorization: Bearer abc123def456ghi789jkl' x", "abc123def456ghi789jkl", "bearer-token"},
		{"private key block", "key:\n" + fakeKey + "\nend", "MIIEpAIBAAKCAQEA1b2c3", "private-key"},
		{"unterminated private key block", "-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAABG5vbmU", "b3BlbnNzaC1rZXktdjEAAAAA", "private-key"},
		{"password in a URL", "DATABASE_URL=postgres://app:s3cr3tPass@db:5432/app", "s3cr3tPass", "url-password"},
		{"env assignment", "DB_PASSWORD=hunter2hunter2", "hunter2hunter2", "assigned-secret"},
		{"quoted assignment", `password = "correct horse"`, "", ""},
		{"quoted short password", `db_password := "hunter2"`, "hunter2", "assigned-secret"},
		{"JSON field", `{"client_secret": "9f8e7d6c5b4a"}`, "9f8e7d6c5b4a", "assigned-secret"},
		{"YAML field", "auth:\n  api_key: Zq8xW2vR7tY1\n", "Zq8xW2vR7tY1", "assigned-secret"},
		{"CLI flag", "mysql --password=Tr0ub4dor3 -u root", "Tr0ub4dor3", "flag-secret"},
		{"an allow marker does not help", "k = " + fakeOpenRouter + " # gitleaks:allow", fakeOpenRouter, "openrouter-key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := Redact(c.in)
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
		if out := Redact(in); out != in {
			t.Errorf("Redact(%q) = %q, want it unchanged", in, out)
		}
	}
}

func TestRedactMessagesKeepsToolArgumentsValidJSON(t *testing.T) {
	t.Parallel()
	args := json.RawMessage(`{"content": "OPENROUTER_API_KEY=` + fakeOpenRouter + `\n", "password": "hunter2", "path": ".env"}`)
	out := redactMessages([]Message{{Role: "assistant", Content: "writing " + fakeGitHub, ToolCalls: []ToolCall{{Name: "write_file", Arguments: args}}}})
	if strings.Contains(out[0].Content, fakeGitHub) {
		t.Errorf("content not redacted")
	}
	got := out[0].ToolCalls[0].Arguments
	if !json.Valid(got) || strings.Contains(string(got), fakeOpenRouter) || strings.Contains(string(got), "hunter2") {
		t.Errorf("arguments %s", got)
	}
	if !strings.Contains(string(got), `"path":".env"`) {
		t.Errorf("ordinary fields must stay: %s", got)
	}
}

func BenchmarkRedact(b *testing.B) {
	text := strings.Repeat("func main() {\n\tfmt.Println(\"hello\") // a line of ordinary code with token counts\n}\n", 400) + "KEY=" + fakeOpenRouter
	b.SetBytes(int64(len(text)))
	for i := 0; i < b.N; i++ {
		if !strings.Contains(Redact(text), "[REDACTED") {
			b.Fatal("missed")
		}
	}
}
