package localtoken

import (
	"os"
	"path/filepath"
	"testing"
)

func TestATokenIsPrivateKeptAcrossStartsAndReplacedWhenOthersCouldReadIt(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	tok, path, err := Load("serve")
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(state, "lemmings", "tokens", "serve.token") || len(tok) != 32 {
		t.Fatalf("token %q at %s", tok, path)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want %v", p, fi.Mode().Perm(), err, want)
		}
	}
	again, _, err := Load("serve")
	if err != nil || again != tok {
		t.Errorf("a second start got %q (%v), want the same token", again, err)
	}
	if other, _, _ := Load("mcp"); other == tok {
		t.Error("mcp and serve share a token")
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	replaced, _, err := Load("serve")
	if err != nil || replaced == tok {
		t.Errorf("a token others could read was kept: %q (%v)", replaced, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("the new token file is %v", fi.Mode().Perm())
	}
}
