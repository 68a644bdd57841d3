package splice

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

//go:embed units.py
var unitsScript string

// pythonTimeout bounds one run of the units script.
const pythonTimeout = 20 * time.Second

type pyReply struct {
	OK    bool   `json:"ok"`
	Line  int    `json:"line"`
	Col   int    `json:"col"`
	Msg   string `json:"msg"`
	Units []struct {
		Kind   string `json:"kind"`
		Name   string `json:"name"`
		Start  int    `json:"start"`
		End    int    `json:"end"`
		Sig    int    `json:"sig"`
		Indent string `json:"indent"`
	} `json:"units"`
}

// pyUnits parses src with Python's ast module.
func (p Parser) pyUnits(ctx context.Context, src []byte) ([]Unit, error) {
	in, err := json.Marshal(map[string]string{"src": string(src)})
	if err != nil {
		return nil, err
	}
	out, err := p.runPython(ctx, in)
	if err != nil {
		return nil, err
	}
	var r pyReply
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("python units script: %w (output %.200q)", err, out)
	}
	if !r.OK {
		return nil, &SyntaxError{Line: r.Line, Col: r.Col, Msg: r.Msg}
	}
	units := make([]Unit, 0, len(r.Units))
	for _, u := range r.Units {
		units = append(units, Unit{Kind: u.Kind, Name: u.Name, Start: u.Start, End: u.End, Decl: u.Sig, Indent: u.Indent})
	}
	return units, nil
}

// Python is lemmings' own interpreter for the units script: python3 as
// lemmings' PATH names it (a relative entry of PATH is never taken), resolved
// once per process to its real file. The script reads every Python file a
// model writes, outside the sandbox: the interpreter is never a name or a
// path from a gate command or the repository (a repository's tools/python3
// or .venv/bin/python would run unsandboxed, with lemmings' keys).
var Python = sync.OnceValues(func() (string, error) {
	p, err := exec.LookPath("python3")
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("python3 resolves to %s, a relative path", p)
	}
	return filepath.EvalSymlinks(p)
})

// runPython is the one place the package runs a program: the units script,
// read by lemmings' own interpreter (Python; Parser.Python in tests), with the
// source on stdin. It runs isolated (-I: no user site, no PYTHON* variable,
// no working folder on the import path; -S: no site-packages, whose .pth
// files run code; -B: no bytecode written), from the root folder (a pyenv
// shim reads no .python-version of the repository's), with PATH as its only
// variable (no key of lemmings'). A missing interpreter is ErrNoParser (the
// caller falls back to SEARCH/REPLACE).
func (p Parser) runPython(ctx context.Context, stdin []byte) ([]byte, error) {
	py := p.Python
	if py == "" {
		var err error
		if py, err = Python(); err != nil {
			return nil, fmt.Errorf("%w: python3: %v", ErrNoParser, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, pythonTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-I", "-S", "-B", "-c", unitsScript)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Dir = string(filepath.Separator)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("%w: %s cannot run: %v", ErrNoParser, py, ee.Err)
		}
		return nil, fmt.Errorf("python units script: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// pyFragment parses a reply's Python code, dedented, as top-level units.
func (p Parser) pyFragment(ctx context.Context, code string) (fragment, error) {
	code = dedent(code)
	units, err := p.pyUnits(ctx, []byte(code))
	if err != nil {
		return fragment{}, err
	}
	lines := strings.Split(code, "\n")
	var frag fragment
	for _, u := range units {
		if strings.Contains(u.Name, ".") {
			continue // a method inside a class of the reply travels with its class
		}
		frag.units = append(frag.units, fragUnit{Unit: u, text: strings.Join(lines[u.Start-1:u.End], "\n")})
	}
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if (strings.HasPrefix(t, "import ") || strings.HasPrefix(t, "from ")) && l == t {
			frag.imports = append(frag.imports, t)
		}
	}
	return frag, nil
}

// dedent removes the indentation all non-blank lines share.
func dedent(code string) string {
	lines := strings.Split(code, "\n")
	prefix := ""
	first := true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			prefix, first = ind, false
			continue
		}
		for !strings.HasPrefix(ind, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	if prefix == "" {
		return code
	}
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, prefix)
	}
	return strings.Join(lines, "\n")
}

// indent puts prefix before every non-blank line.
func indent(text, prefix string) string {
	if prefix == "" {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}
