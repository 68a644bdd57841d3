package sandbox

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// lemmings' own go env runs outside the sandbox: started in a repository
// whose go.mod asks for a newer Go, with GOTOOLCHAIN=auto, it fetched that
// toolchain from the proxy (issue 43). It asks the go on PATH, from no
// repository's folder.
func TestTheUsersGoEnvFetchesNoToolchain(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go on PATH")
	}
	var asked atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.NotFound(w, r)
	}))
	defer proxy.Close()
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module example.com/m\n\ngo 1.99.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(repo)
	t.Setenv("GOTOOLCHAIN", "auto")
	t.Setenv("GOPROXY", proxy.URL)
	t.Setenv("GOSUMDB", "off")
	b := &Box{}
	g := b.userGoEnv()
	if n := asked.Load(); n > 0 {
		t.Errorf("go env asked the proxy %d time(s)", n)
	}
	if g.Cache == "" || g.Proxy != proxy.URL {
		t.Errorf("go env answered %+v", g)
	}
}
