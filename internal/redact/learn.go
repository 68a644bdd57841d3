package redact

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// reSecretName matches an environment variable or .env key whose value is a
// secret: OPENROUTER_API_KEY, AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN,
// DB_PASSWORD, SESSION_SECRET, SIGNING_KEY, …
var reSecretName = regexp.MustCompile(`(?i)(?:^|_)(?:key|apikey|token|secret|password|passwd|pwd|passphrase|credentials?)(?:_|$)|(?i)(?:api|access|secret|private|signing|session|master|encryption)_?key`)

// SecretName reports whether a variable named name holds a secret.
func SecretName(name string) bool { return reSecretName.MatchString(name) }

// LearnEnv teaches r the values of the variables of environ ("NAME=value")
// whose names look like a secret's (SecretName).
func (r *Redactor) LearnEnv(environ []string) int {
	added := 0
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if ok && SecretName(name) {
			added += r.Learn("$"+name, value)
		}
	}
	return added
}

// envFilePattern finds a repository's .env files: at its top and one level
// down (a monorepo's apps/web/.env).
var envFilePatterns = []string{".env*", "*/.env*"}

// LearnRepo teaches r the values of the repository's .env files (.env,
// .env.local, .env.production, …; not .env.example, .env.sample, .env.template
// or .env.dist, which hold placeholders): every value under a secret-like key,
// and any other value that looks like a secret (long and varied, or with
// digits). Files it cannot read are skipped. It returns how many values were new.
func (r *Redactor) LearnRepo(root string) int {
	if root == "" {
		return 0
	}
	r.mu.Lock()
	done := r.roots[root]
	if r.roots == nil {
		r.roots = map[string]bool{}
	}
	r.roots[root] = true
	r.mu.Unlock()
	if done {
		return 0 // a repository's files are read once
	}
	added := 0
	for _, pat := range envFilePatterns {
		files, _ := filepath.Glob(filepath.Join(root, pat))
		for _, f := range files {
			if !isEnvFile(filepath.Base(f)) {
				continue
			}
			fi, err := os.Stat(f)
			if err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for key, value := range parseEnvFile(data) {
				if SecretName(key) || looksLikeSecretValue(value) {
					added += r.Learn(".env:"+key, value)
				}
			}
		}
	}
	return added
}

func isEnvFile(name string) bool {
	if name != ".env" && !strings.HasPrefix(name, ".env.") {
		return false
	}
	for _, suffix := range []string{".example", ".sample", ".template", ".dist", ".defaults"} {
		if strings.HasSuffix(name, suffix) {
			return false
		}
	}
	return true
}

// parseEnvFile reads KEY=value lines (export, quotes and # comments as
// dotenv writes them); a line it does not understand is skipped.
func parseEnvFile(data []byte) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
			value = value[1 : len(value)-1]
		} else if i := strings.Index(value, " #"); i >= 0 {
			value = strings.TrimSpace(value[:i])
		}
		if key != "" && value != "" {
			out[key] = value
		}
	}
	return out
}
