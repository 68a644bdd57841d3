package workspace

import (
	"context"
	"slices"
	"testing"
)

func TestChangesAgreesWithDiffAndChangedFiles(t *testing.T) {
	_, wt := newWorktree(t, map[string]string{"a.txt": "a\n"})
	ctx := context.Background()
	base, err := wt.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.FS().WriteFile("new.txt", []byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	diff, files, err := wt.Changes(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	wantDiff, _ := wt.Diff(ctx, base)
	wantFiles, _ := wt.ChangedFiles(ctx, base)
	if diff != wantDiff || !slices.Equal(files, wantFiles) || !slices.Contains(files, "new.txt") {
		t.Errorf("Changes = %q %v; Diff/ChangedFiles = %q %v", diff, files, wantDiff, wantFiles)
	}
}
