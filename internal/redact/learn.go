package redact

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/safefile"
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
// or .env.dist, which hold placeholders) that look like secrets by themselves
// (repoSecret). The repository chooses what its .env says: a value learned
// because of its key's name alone would let it hide any text of its choosing
// (a file name, a function, a sentence) from events, prompts and reports.
// Files it cannot read are skipped. It returns how many values were new.
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
			data, err := safefile.Limited(f, 1<<20)
			if err != nil {
				continue
			}
			for key, value := range parseEnvFile(data) {
				if repoSecret(root, value) {
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

// repoSecret reports whether a value of a repository's .env is a secret by
// its own look, whatever its key says: one gitleaks' rules know, or a long
// run of varied characters (three kinds of letters, digits and symbols, or
// two and random-looking). A sentence, a path (or a file of the
// repository), a URL without a password, and a name made of words
// (HostileHandler2024) are not: they are what a hostile repository would
// hide from the record.
func repoSecret(root, v string) bool {
	if !literalWorthy(v) {
		return false
	}
	if d, err := gitleaks(); err == nil && len(d.DetectString(v)) > 0 { // the value alone: gitleaks' generic rule would take the key's name as its reason
		return true
	}
	if len(v) < 12 || strings.ContainsAny(v, " \t") || reFileName.MatchString(v) || wordyName(v) || !looksLikeSecretValue(v) {
		return false
	}
	if strings.Contains(v, "://") && !strings.Contains(v, "@") {
		return false
	}
	if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(v))); err == nil {
		return false // a file of the repository
	}
	classes := 0
	for _, has := range []bool{strings.ContainsAny(v, lower), strings.ContainsAny(v, upper), strings.ContainsAny(v, digits),
		strings.IndexFunc(v, func(r rune) bool { return !strings.ContainsRune(lower+upper+digits, r) }) >= 0} {
		if has {
			classes++
		}
	}
	return classes >= 3 || classes == 2 && len(v) >= 16 && entropy(v) >= 3.5
}

const (
	lower  = "abcdefghijklmnopqrstuvwxyz"
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	digits = "0123456789"
)

// reFileName matches a path ending in a file extension (cmd/v2/main.go).
var reFileName = regexp.MustCompile(`^[\w.\-]+(?:/[\w.\-]+)*\.[A-Za-z][A-Za-z0-9]{0,7}$`)

// wordyName reports whether an identifier is made of words (camelCase,
// snake_case, digits between): its runs of letters average four or more,
// where a random token's average one or two.
func wordyName(v string) bool {
	if !reIdentifierDigits.MatchString(v) {
		return false
	}
	runs, letters := 0, 0
	prev := rune(0)
	for _, r := range v {
		isLower, isUpper := r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z'
		switch {
		case isUpper && !(prev >= 'A' && prev <= 'Z'), (isLower) && !(prev >= 'a' && prev <= 'z') && !(prev >= 'A' && prev <= 'Z'):
			runs++ // a word starts: an upper case letter, or a lower case one after a digit or _
		}
		if isLower || isUpper {
			letters++
		}
		prev = r
	}
	return runs > 0 && letters/runs >= 4
}

var reIdentifierDigits = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
