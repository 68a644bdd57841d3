package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// tree is a release's files: slash path → content.
type tree map[string][]byte

// fetcher downloads releases with the ordinary clients (go mod download,
// pip download) and checks them against their pinned hashes.
type fetcher struct {
	// Downloads holds the sdists (the Go module cache holds the modules).
	Downloads string
	// Pin fills in a missing hash instead of refusing the download.
	Pin bool
}

// fetch returns the release's files; r.Hash is set when f.Pin and it was empty.
func (f *fetcher) fetch(ctx context.Context, lang, project string, r *release) (tree, error) {
	if r.Hash == "" && !f.Pin {
		return nil, fmt.Errorf("%s %s has no hash: run with -pin once to record it", project, r.Version)
	}
	switch lang {
	case "go":
		return f.goModule(ctx, project, r)
	case "python":
		return f.sdist(ctx, project, r)
	}
	return nil, fmt.Errorf("no source for language %q", lang)
}

func (f *fetcher) goModule(ctx context.Context, mod string, r *release) (tree, error) {
	// Outside any module: the download must not touch this repository's go.sum.
	tmp, err := os.MkdirTemp("", "realtasks-go")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", mod+"@"+r.Version)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var info struct{ Zip, GoMod, Sum, Error string }
	if jerr := json.Unmarshal(out, &info); jerr != nil || info.Error != "" || err != nil {
		msg := strings.TrimSpace(info.Error + " " + stderr.String())
		if err != nil && msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("go mod download %s@%s: %s", mod, r.Version, msg)
	}
	if r.Hash == "" {
		r.Hash = info.Sum
	} else if info.Sum != r.Hash {
		return nil, fmt.Errorf("%s@%s: the module's hash is %s, tasks.json pins %s", mod, r.Version, info.Sum, r.Hash)
	}
	zr, err := zip.OpenReader(info.Zip)
	if err != nil {
		return nil, fmt.Errorf("%s@%s: %w", mod, r.Version, err)
	}
	defer zr.Close()
	t := tree{}
	prefix := mod + "@" + r.Version + "/"
	for _, zf := range zr.File {
		if zf.FileInfo().IsDir() || !strings.HasPrefix(zf.Name, prefix) {
			continue
		}
		data, err := readZip(zf)
		if err != nil {
			return nil, fmt.Errorf("%s@%s: %s: %w", mod, r.Version, zf.Name, err)
		}
		t[strings.TrimPrefix(zf.Name, prefix)] = data
	}
	if _, ok := t["go.mod"]; !ok {
		// A release from before modules: the proxy's go.mod is what the go command uses.
		data, err := os.ReadFile(info.GoMod)
		if err != nil {
			return nil, err
		}
		t["go.mod"] = data
	}
	return t, nil
}

func readZip(zf *zip.File) ([]byte, error) {
	rc, err := zf.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

func (f *fetcher) sdist(ctx context.Context, name string, r *release) (tree, error) {
	dir := filepath.Join(f.Downloads, "python", name, r.Version)
	if p, ok := f.cached(dir, r.Hash); ok {
		return readSdist(p, r)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	args := []string{"-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "-d", dir}
	req := name + "==" + r.Version
	if r.Hash != "" {
		reqFile := filepath.Join(dir, "requirements.txt")
		if err := os.WriteFile(reqFile, []byte(req+" --hash="+r.Hash+"\n"), 0o644); err != nil {
			return nil, err
		}
		args = append(args, "--require-hashes", "-r", reqFile)
	} else {
		args = append(args, req)
	}
	cmd := exec.CommandContext(ctx, "python3", args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pip download %s: %v: %s", req, err, lastLines(string(out), 6))
	}
	p, ok := f.cached(dir, r.Hash)
	if !ok {
		return nil, fmt.Errorf("pip download %s: no sdist with the pinned hash %s in %s", req, r.Hash, dir)
	}
	return readSdist(p, r)
}

// cached finds the sdist in dir whose hash is want (any sdist when want is empty).
func (f *fetcher) cached(dir, want string) (string, bool) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".tar.gz") && !strings.HasSuffix(e.Name(), ".zip") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if want == "" {
			return p, true
		}
		if sum, err := fileSHA256(p); err == nil && "sha256:"+sum == want {
			return p, true
		}
	}
	return "", false
}

func fileSHA256(p string) (string, error) {
	fh, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// readSdist reads an sdist's files without its top folder (name-version/),
// and records its hash in r when r has none.
func readSdist(p string, r *release) (tree, error) {
	if r.Hash == "" {
		sum, err := fileSHA256(p)
		if err != nil {
			return nil, err
		}
		r.Hash = "sha256:" + sum
	}
	t := tree{}
	strip := func(name string) string {
		name = strings.TrimPrefix(path.Clean("/"+name), "/")
		if _, rest, ok := strings.Cut(name, "/"); ok {
			return rest
		}
		return ""
	}
	if strings.HasSuffix(p, ".zip") {
		zr, err := zip.OpenReader(p)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		for _, zf := range zr.File {
			if zf.FileInfo().IsDir() {
				continue
			}
			data, err := readZip(zf)
			if err != nil {
				return nil, err
			}
			if rel := strip(zf.Name); rel != "" {
				t[rel] = data
			}
		}
		return t, nil
	}
	fh, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	gz, err := gzip.NewReader(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		if rel := strip(h.Name); rel != "" {
			t[rel] = data
		}
	}
	return t, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
