package codingcli

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/lemmings-dev/lemmings/internal/safefile"
)

// A coding CLI refreshes its login during a run; the refreshed file is
// written back over yours, so a rotated token does not log you out. But
// the CLI runs the commands its model asks for, and what they write in
// its private HOME is theirs: another account's login written back would
// make your next interactive session that account's (your prompts and
// code go to whoever holds it). A login is written back only when it is a
// refresh of yours:
//
//   - the same shape: the same JSON keys at the same places, each value of
//     the same JSON type (a refresh changes values, never the layout);
//   - the same account: every account field of yours (account_id, email,
//     sub, user_id…, in the file or in the claims of a JWT such as
//     Codex's and Gemini's id_token) has the same value. A login that names
//     no account (Claude Code's, Qwen Code's) cannot be checked and is not
//     written back: the CLI asks you to log in again if its token expired.
//
// Anything else keeps your file as it is, and the run says why.

// checkCredentials says why the refreshed login fresh may not replace
// yours, old ("" when it may).
func checkCredentials(old, fresh []byte) string {
	var o, f any
	if err := json.Unmarshal(old, &o); err != nil {
		return "your file is not JSON"
	}
	if err := json.Unmarshal(fresh, &f); err != nil {
		return "the CLI's file is not JSON"
	}
	if so, sf := shape(o), shape(f); !slices.Equal(so, sf) {
		return "its layout changed (" + shapeDiff(so, sf) + "): not a refresh of your login"
	}
	oid, fid := accountOf(o), accountOf(f)
	if len(oid) == 0 {
		return "your login names no account to check the new one against (no account id, email or subject)"
	}
	for _, k := range sortedKeys(oid) {
		if fid[k] != oid[k] {
			return fmt.Sprintf("it is another account's (%s differs)", k)
		}
	}
	return ""
}

// shape lists every key path of v with its JSON type: "a.b:string".
// Arrays count as their type only (a list of scopes may change).
func shape(v any) []string {
	var out []string
	var walk func(p string, v any)
	walk = func(p string, v any) {
		switch x := v.(type) {
		case map[string]any:
			out = append(out, p+":object")
			for k, e := range x {
				walk(p+"."+k, e)
			}
		case []any:
			out = append(out, p+":array")
		case string:
			out = append(out, p+":string")
		case float64:
			out = append(out, p+":number")
		case bool:
			out = append(out, p+":bool")
		case nil:
			out = append(out, p+":null")
		}
	}
	walk("", v)
	sort.Strings(out)
	return out
}

// shapeDiff names the first key path one shape has and the other lacks.
func shapeDiff(old, fresh []string) string {
	for _, s := range old {
		if !slices.Contains(fresh, s) {
			return "no " + strings.TrimPrefix(s, ".")
		}
	}
	for _, s := range fresh {
		if !slices.Contains(old, s) {
			return "new " + strings.TrimPrefix(s, ".")
		}
	}
	return "different"
}

// accountKeys are the names of fields that say whose login it is
// (compared without case, "_" and "-").
var accountKeys = map[string]bool{
	"accountid": true, "accountuuid": true, "chatgptaccountid": true, "chatgptuserid": true,
	"email": true, "emailaddress": true, "sub": true, "subject": true, "userid": true, "useruuid": true,
}

// accountOf collects the account fields of v, by path, JWT claims included.
func accountOf(v any) map[string]string {
	out := map[string]string{}
	var walk func(p string, v any, depth int)
	walk = func(p string, v any, depth int) {
		if depth > 16 {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				key := strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(k))
				if s, ok := e.(string); ok && accountKeys[key] && s != "" {
					out[p+"."+k] = s
				}
				walk(p+"."+k, e, depth+1)
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", p, i), e, depth+1)
			}
		case string:
			if claims, ok := jwtClaims(x); ok {
				walk(p+"#", claims, depth+1)
			}
		}
	}
	walk("", v, 0)
	return out
}

// jwtClaims decodes the payload of a JSON Web Token (not checking its
// signature: only to compare it with the token it replaces).
func jwtClaims(s string) (map[string]any, bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 || len(s) > 16<<10 {
		return nil, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return nil, false
	}
	var claims map[string]any
	if json.Unmarshal(payload, &claims) != nil {
		return nil, false
	}
	return claims, true
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// writeBackCredentials replaces orig with the CLI's copy cp when the CLI
// changed it and it is a refresh of the same login (checkCredentials), a
// small JSON file over an existing regular file, written whole or not at
// all. It returns why it kept yours, when the CLI did change it.
func writeBackCredentials(orig, cp string) string {
	fi, err := os.Lstat(orig)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	data, err := safefile.Limited(cp, maxCredentials) // a FIFO made there never blocks
	if err != nil {
		if os.IsNotExist(err) {
			return ""
		}
		return fmt.Sprintf("%s kept: the CLI's copy cannot be read (%v)", orig, err)
	}
	old, err := safefile.Limited(orig, maxCredentials)
	if err != nil || bytes.Equal(old, data) {
		return ""
	}
	if why := checkCredentials(old, data); why != "" {
		return fmt.Sprintf("%s kept as it was: the coding CLI's changed login was not written back: %s", orig, why)
	}
	tmp, err := os.CreateTemp(filepath.Dir(orig), ".lemmings-credentials-")
	if err != nil {
		return fmt.Sprintf("%s kept: %v", orig, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil || tmp.Chmod(0o600) != nil || tmp.Close() != nil {
		tmp.Close()
		return fmt.Sprintf("%s kept: the refreshed login could not be written", orig)
	}
	if err := os.Rename(tmp.Name(), orig); err != nil {
		return fmt.Sprintf("%s kept: %v", orig, err)
	}
	return ""
}
