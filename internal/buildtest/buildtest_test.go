package buildtest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestBinaryIsBuiltOnceAndRemoved(t *testing.T) {
	bin := Binary(t, "github.com/lemmings-dev/lemmings/internal/fakecli")
	if filepath.Base(bin) != "fakecli" {
		t.Errorf("binary %s is not named for its package", bin)
	}
	st, err := os.Stat(bin)
	if err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("%s: %v %v", bin, err, st)
	}
	if again := Binary(t, "github.com/lemmings-dev/lemmings/internal/fakecli"); again != bin {
		t.Errorf("built again: %s then %s", bin, again)
	}
	RemoveAll()
	if _, err := os.Stat(filepath.Dir(bin)); !os.IsNotExist(err) {
		t.Errorf("RemoveAll left %s: %v", filepath.Dir(bin), err)
	}
}
