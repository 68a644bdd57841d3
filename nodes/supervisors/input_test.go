package supervisors

import (
	"context"
	"strings"
	"testing"

	"github.com/lemmings-dev/lemmings/internal/suptest"
	"github.com/lemmings-dev/lemmings/nodes/prompts"
	"github.com/lemmings-dev/lemmings/runstate"
	"github.com/lemmings-dev/lemmings/workspace"
)

// A Runner wired without a deny-list sends no file's content: a wiring
// mistake must not send every file to the cloud.
func TestARunnerWithoutADenyListSendsNoFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, err := workspace.OpenRepo(ctx, suptest.MakeRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	wt, err := repo.CreateWorktree(ctx, "20260101-000000-deny")
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.FS().WriteFile("app.go", []byte("package app\n\nfunc Secretless() {}\n")); err != nil {
		t.Fatal(err)
	}
	s := runstate.State{DoneList: []runstate.DoneEntry{{TaskID: "t1", Files: []string{"app.go"}}}, TasksCompleted: 1}
	job := runstate.SupervisorJob{ID: "code_style-1-1", Supervisor: prompts.CodeStyle, Trigger: TriggerInterval, Bootstrap: true}
	for _, tc := range []struct {
		name   string
		denied func(string) bool
		sent   bool
	}{
		{"no deny-list", nil, false},
		{"a deny-list without app.go", func(string) bool { return false }, true},
	} {
		r := &Runner{Work: wt, Denied: tc.denied}
		var all strings.Builder
		for _, sec := range r.Input(&s, job) {
			all.WriteString(sec.Body)
		}
		if got := strings.Contains(all.String(), "func Secretless"); got != tc.sent {
			t.Errorf("%s: app.go's content sent = %v, want %v", tc.name, got, tc.sent)
		}
	}
}
