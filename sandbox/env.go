package sandbox

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// passEnv are the variables a confined command gets from lemmings'
// environment as they are: the shell's basics and the toolchains' own
// settings. Nothing else passes (no key of lemmings', no cloud
// credentials) unless sandbox.env names it.
var passEnv = []string{
	"PATH", "LANG", "LANGUAGE", "TERM", "TZ", "USER", "LOGNAME", "SHELL",
	// Go
	"GOROOT", "GOPATH", "GOPRIVATE", "GONOPROXY", "GONOSUMDB", "GONOSUMCHECK", "GOINSECURE", "GOSUMDB",
	"GOTOOLCHAIN", "GOEXPERIMENT", "GOAMD64", "GOARM64", "GO386", "GOARM", "CGO_ENABLED",
	"CGO_CFLAGS", "CGO_CPPFLAGS", "CGO_CXXFLAGS", "CGO_LDFLAGS", "CC", "CXX", "AR", "PKG_CONFIG_PATH",
	// Python
	"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PYENV_ROOT", "PYENV_VERSION",
	// Node
	"NODE_PATH", "NODE_OPTIONS", "NVM_DIR", "NVM_BIN", "VOLTA_HOME",
	// Rust, Java, Ruby
	"CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUSTFLAGS", "JAVA_HOME", "GEM_HOME", "GEM_PATH",
}

// homeTools are toolchain homes that default to a folder of $HOME: with
// HOME moved to the private home, they are pointed at the user's real
// folder (readable, not writable) when it exists, so pyenv shims, rustup
// and friends still find their toolchains.
var homeTools = map[string]string{
	"PYENV_ROOT": ".pyenv", "CARGO_HOME": ".cargo", "RUSTUP_HOME": ".rustup",
	"NVM_DIR": ".nvm", "VOLTA_HOME": ".volta", "GOPATH": "go",
}

// environ is the minimal environment of a confined command with tmp as
// its temp dir.
func (b *Box) environ(tmp string, network bool) []string {
	set := map[string]string{}
	for _, k := range append(append([]string(nil), passEnv...), b.cfg.Env...) {
		if v, ok := os.LookupEnv(k); ok {
			set[k] = v
		}
	}
	for _, kv := range os.Environ() { // the locale, whatever its categories
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "LC_") {
			set[k] = v
		}
	}
	if realHome, err := os.UserHomeDir(); err == nil {
		for k, rel := range homeTools {
			if _, ok := set[k]; ok {
				continue
			}
			if p := filepath.Join(realHome, rel); isDir(p) {
				set[k] = p
			}
		}
	}
	cache := b.cache
	set["HOME"] = b.home
	set["TMPDIR"] = tmp
	set["XDG_CACHE_HOME"] = filepath.Join(cache, "xdg")
	set["GOCACHE"] = filepath.Join(cache, "go-build")
	set["GOMODCACHE"] = filepath.Join(cache, "gomod")
	set["npm_config_cache"] = filepath.Join(cache, "npm")
	set["PIP_CACHE_DIR"] = filepath.Join(cache, "pip")
	// Python's bytecode (and pytest's rewritten tests) go to the cache, not
	// __pycache__ folders in the tree that a commit would carry.
	set["PYTHONPYCACHEPREFIX"] = filepath.Join(cache, "pycache")
	set["GIT_TERMINAL_PROMPT"] = "0"
	if _, ok := set["LANG"]; !ok {
		set["LANG"] = "C.UTF-8"
	}
	g := b.userGoEnv()
	set["GOFLAGS"] = strings.TrimSpace(g.Flags + " -modcacherw")
	set["GOPROXY"] = goProxy(g, network)
	out := make([]string, 0, len(set))
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// goEnv is what the user's go command says of its module setup.
type goEnv struct {
	Cache    string `json:"GOCACHE"`
	ModCache string `json:"GOMODCACHE"`
	Proxy    string `json:"GOPROXY"`
	Flags    string `json:"GOFLAGS"`
}

// userGoEnv reads the user's module cache and proxy once per box; empty
// when go is not installed. It runs outside the sandbox, so nothing of the
// repository may steer it: from the root folder (no go.mod or go.work of the
// repository's is read: a go.mod asking for go 1.99.0 made go fetch a
// toolchain from the proxy and run it) and with GOTOOLCHAIN=local (the go on
// PATH answers, whatever a go.mod above the folder or the environment asks).
func (b *Box) userGoEnv() goEnv {
	b.goOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			return
		}
		cmd := exec.Command(goBin, "env", "-json", "GOCACHE", "GOMODCACHE", "GOPROXY", "GOFLAGS")
		cmd.Dir = string(filepath.Separator)
		cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOWORK=off")
		cmd.WaitDelay = 10 * time.Second
		out, err := cmd.Output()
		if err == nil {
			_ = json.Unmarshal(out, &b.goEnv)
		}
	})
	return b.goEnv
}

// goProxy serves modules from the user's module cache (read only, as a
// file proxy) into the sandbox's own, then, with the network on, from the
// user's proxies. Modules are verified against go.sum as usual.
func goProxy(g goEnv, network bool) string {
	var proxies []string
	if g.ModCache != "" {
		if dl := filepath.Join(g.ModCache, "cache", "download"); isDir(dl) {
			proxies = append(proxies, "file://"+filepath.ToSlash(dl))
		}
	}
	if network && g.Proxy != "" {
		proxies = append(proxies, g.Proxy)
	} else {
		// "module lookup disabled by GOPROXY=off" names the cause.
		proxies = append(proxies, "off")
	}
	return strings.Join(proxies, ",")
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
