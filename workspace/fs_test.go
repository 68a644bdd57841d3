package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func newFS(t *testing.T, files map[string]string) (*FS, string) {
	t.Helper()
	dir := realDir(t, t.TempDir())
	writeFiles(t, dir, files)
	f, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return f, dir
}

func TestOpenRejectsMissingAndFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "nope")); err == nil {
		t.Error("Open of a missing directory succeeded")
	}
	writeFiles(t, dir, map[string]string{"f": "x"})
	if _, err := Open(filepath.Join(dir, "f")); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("Open of a file: %v", err)
	}
}

func TestReadAndWriteRelativePaths(t *testing.T) {
	t.Parallel()
	f, dir := newFS(t, map[string]string{"src/a.go": "package a\n"})
	got, err := f.ReadFile("src/a.go")
	if err != nil || string(got) != "package a\n" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	if got, err := f.ReadFile("./src/../src/a.go"); err != nil || string(got) != "package a\n" {
		t.Errorf("a path with an inner .. that stays inside should work: %q, %v", got, err)
	}
	if err := f.WriteFile("new/deep/b.txt", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if s := readFile(t, filepath.Join(dir, "new/deep/b.txt")); s != "hello" {
		t.Errorf("written %q", s)
	}
	fi, _ := os.Stat(filepath.Join(dir, "new/deep/b.txt"))
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", fi.Mode().Perm())
	}
	_, err = f.ReadFile("missing.go")
	if !errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), dir) {
		t.Errorf("missing file: %v (want ErrNotExist without the absolute path)", err)
	}
	var pe *PathError
	if _, err := f.ReadFile("src"); !errors.As(err, &pe) || !strings.Contains(pe.Reason, "directory") {
		t.Errorf("reading a directory: %v", err)
	}
}

func TestWriteFileKeepsModeAndLeavesNoTempFile(t *testing.T) {
	t.Parallel()
	f, dir := newFS(t, map[string]string{"run.sh": "#!/bin/sh\n"})
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile("run.sh", []byte("#!/bin/sh\necho hi\n")); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(dir, "run.sh"))
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("mode after rewrite %v, want 0755", fi.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries after an atomic write, want 1 (no temp file left)", len(ents))
	}
}

func TestWriteFileReplacesAtomically(t *testing.T) {
	t.Parallel()
	// The old inode stays intact for a reader holding it: the new content
	// arrives by rename, never by truncating the file in place.
	f, dir := newFS(t, map[string]string{"a.txt": "old content"})
	fh, err := os.Open(filepath.Join(dir, "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if err := f.WriteFile("a.txt", []byte("new")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := fh.Read(buf)
	if string(buf[:n]) != "old content" {
		t.Errorf("open reader saw %q: the file was rewritten in place", buf[:n])
	}
	if s := readFile(t, filepath.Join(dir, "a.txt")); s != "new" {
		t.Errorf("content %q", s)
	}
}

func TestWriteFileIntoAFileAsDirectoryIsRefused(t *testing.T) {
	t.Parallel()
	f, _ := newFS(t, map[string]string{"a.txt": "x"})
	var pe *PathError
	if err := f.WriteFile("a.txt/b.txt", []byte("y")); !errors.As(err, &pe) {
		t.Errorf("writing below a file: %v", err)
	}
	if err := f.WriteFile(".", []byte("y")); !errors.As(err, &pe) {
		t.Errorf("writing the root: %v", err)
	}
}

func TestRemove(t *testing.T) {
	t.Parallel()
	f, dir := newFS(t, map[string]string{"a.txt": "x"})
	if err := f.Remove("a.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("file still there")
	}
	if err := f.Remove("a.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("removing twice: %v", err)
	}
	if ok, err := f.Exists("a.txt"); ok || err != nil {
		t.Errorf("Exists = %v, %v", ok, err)
	}
}

func TestConfinementRefusals(t *testing.T) {
	t.Parallel()
	outside := realDir(t, t.TempDir())
	writeFiles(t, outside, map[string]string{"secret.txt": "secret"})
	f, dir := newFS(t, map[string]string{"ok/a.txt": "a", ".git/config": "[core]", ".lemmings/runs/x": "y"})
	mustLink := func(target, link string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	mustLink("/etc", "etc")                                 // a directory outside
	mustLink("/etc/passwd", "passwd")                       // a file outside
	mustLink(outside, "outdir")                             // a symlinked directory outside
	mustLink(filepath.Join(outside, "secret.txt"), "s.txt") // absolute target outside
	mustLink("../"+filepath.Base(outside)+"/secret.txt", "rel.txt")
	mustLink(".git", "gitlink")            // a link into .git
	mustLink("ok", "inside")               // a link that stays inside: allowed
	mustLink("nowhere/at/all", "dangling") // broken

	refused := []struct{ name, path, reason string }{
		{"absolute path", "/etc/passwd", "absolute"},
		{"absolute path inside the root", filepath.Join(dir, "ok/a.txt"), `"ok/a.txt"`},
		{"dot-dot escape", "../x", "outside"},
		{"dot-dot escape after a directory", "ok/../../x", "outside"},
		{"bare dot-dot", "..", "outside"},
		{".git directory", ".git/config", ".git"},
		{".git itself", ".git", ".git"},
		{"nested .git", "sub/.git/HEAD", ".git"},
		{".git with other case", ".GIT/config", ".git"},
		{".lemmings directory", ".lemmings/runs/x", ".lemmings"},
		{"symlink to /etc, file below it", "etc/passwd", "symbolic link"},
		{"symlink to a file outside", "passwd", "symbolic link"},
		{"symlinked directory outside", "outdir/secret.txt", "symbolic link"},
		{"symlink with absolute target outside", "s.txt", "symbolic link"},
		{"symlink with relative target outside", "rel.txt", "symbolic link"},
		{"symlink into .git", "gitlink/config", ".git"},
		{"broken symlink", "dangling", "broken"},
		{"empty path", "", "empty"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			for op, call := range map[string]func() error{
				"read":  func() error { _, err := f.ReadFile(tc.path); return err },
				"write": func() error { return f.WriteFile(tc.path, []byte("pwned")) },
				"apply": func() error {
					_, err := f.Apply([]Edit{{Path: tc.path, Replace: "pwned"}})
					return err
				},
			} {
				err := call()
				var pe *PathError
				if !errors.As(err, &pe) {
					t.Fatalf("%s %q: got %v, want *PathError", op, tc.path, err)
				}
				if !strings.Contains(pe.Error(), tc.reason) {
					t.Errorf("%s %q: message %q should mention %q", op, tc.path, pe.Error(), tc.reason)
				}
			}
		})
	}
	if s := readFile(t, filepath.Join(outside, "secret.txt")); s != "secret" {
		t.Fatalf("a file outside the root was changed: %q", s)
	}
	if s := readFile(t, "/etc/passwd"); strings.Contains(s, "pwned") {
		t.Fatal("/etc/passwd changed")
	}

	// A link that stays inside the root is followed.
	if got, err := f.ReadFile("inside/a.txt"); err != nil || string(got) != "a" {
		t.Errorf("inside link: %q, %v", got, err)
	}
	if err := f.WriteFile("inside/b.txt", []byte("b")); err != nil {
		t.Fatal(err)
	}
	if s := readFile(t, filepath.Join(dir, "ok/b.txt")); s != "b" {
		t.Errorf("write through inside link landed wrong: %q", s)
	}
}

func TestWriteThroughSymlinkKeepsTheLink(t *testing.T) {
	t.Parallel()
	f, dir := newFS(t, map[string]string{"real.txt": "1"})
	if err := os.Symlink("real.txt", filepath.Join(dir, "alias.txt")); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile("alias.txt", []byte("2")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(filepath.Join(dir, "alias.txt"))
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("alias.txt is no longer a symlink")
	}
	if s := readFile(t, filepath.Join(dir, "real.txt")); s != "2" {
		t.Errorf("real.txt = %q", s)
	}
}

// A write over the limit is refused with the reason, whole or as an edit's
// result, and nothing is written; the default limit is 1 MB.
func TestWritesOverTheLimitAreRefused(t *testing.T) {
	f, dir := newFS(t, map[string]string{"a.txt": "small\n"})
	big := strings.Repeat("x", DefaultMaxWrite+1)
	err := f.WriteFile("big.txt", []byte(big))
	var pe *PathError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "limits.write_bytes") || !strings.Contains(err.Error(), "1048577 bytes") {
		t.Fatalf("a 1 MB + 1 write: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "big.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused file was written")
	}
	f.LimitWrites(100)
	if err := f.WriteFile("ok.txt", []byte(strings.Repeat("y", 100))); err != nil {
		t.Errorf("a write at the limit: %v", err)
	}
	_, err = f.Apply([]Edit{{Path: "a.txt", Search: "small\n", Replace: strings.Repeat("z", 200)}})
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "200 bytes") {
		t.Fatalf("an edit growing the file past the limit: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(data) != "small\n" {
		t.Errorf("the refused edit changed the file: %q", data)
	}
	// Putting back what was there is never refused.
	if err := f.Restore("a.txt", []byte(big)); err != nil {
		t.Errorf("Restore over the limit: %v", err)
	}
}
