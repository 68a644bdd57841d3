package buildtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// Under -race an end-to-end test skips unless asked, and then runs a binary
// built with -race; without -race it runs the plain binary.
func TestEndToEndSkipsUnderRaceUnlessAskedThenBuildsWithRace(t *testing.T) {
	const pkg = "github.com/lemmings-dev/lemmings/internal/fakecli"
	defer RemoveAll()
	for _, asked := range []string{"", "1"} {
		t.Setenv(EnvRaceE2E, asked)
		bin := ""
		t.Run("asked="+asked, func(t *testing.T) { bin = EndToEnd(t, pkg) })
		if raceEnabled && asked == "" {
			if bin != "" {
				t.Errorf("under -race, not asked: ran with %s", bin)
			}
			continue
		}
		if bin == "" {
			t.Fatalf("asked=%q, race %v: skipped", asked, raceEnabled)
		}
		info, err := exec.Command("go", "version", "-m", bin).CombinedOutput()
		if err != nil {
			t.Fatalf("go version -m %s: %v\n%s", bin, err, info)
		}
		if built := strings.Contains(string(info), "-race=true"); built != raceEnabled {
			t.Errorf("test under -race %v, binary built with -race %v:\n%s", raceEnabled, built, info)
		}
	}
}
