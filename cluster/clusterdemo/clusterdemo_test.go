package clusterdemo

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/cluster/pglocal"
)

// A machine without PostgreSQL's server programs gets an error that says
// what is missing and how to install it, before anything is started.
func TestNoPostgresSaysHowToInstallIt(t *testing.T) {
	defer func(f func() (string, error)) { findPostgres = f }(findPostgres)
	findPostgres = func() (string, error) { return "", pglocal.ErrNoBinaries }
	var out strings.Builder
	res, err := Run(context.Background(), Options{Exe: "/nonexistent/lemmings", Out: &out})
	if !errors.Is(err, ErrNoPostgres) {
		t.Fatalf("err = %v, want ErrNoPostgres", err)
	}
	for _, want := range []string{"initdb", "apt-get install postgresql"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
	if res.Dir != "" || res.PostgresPID != 0 || out.Len() != 0 {
		t.Errorf("something was started: %+v, output %q", res, out.String())
	}
}
