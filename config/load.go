package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
)

// Project file names, relative to the repository root. Exactly one may exist.
const (
	ProjectFile    = "lemmings.yaml"
	ProjectAltFile = ".lemmings/config.yaml"
	UserFile       = "config.yaml"
)

// LoadOptions says where Load looks. Zero values mean the real environment.
type LoadOptions struct {
	// RepoRoot is the repository whose project file is read; "" reads none.
	RepoRoot string
	// UserConfigDir holds config.yaml; default $XDG_CONFIG_HOME/lemmings, else
	// ~/.config/lemmings (read through Env).
	UserConfigDir string
	// Env reads a variable; default os.Getenv.
	Env func(string) string
	// Environ lists the environment as "NAME=value", to find every LEMMINGS_
	// variable (unknown ones are problems). Default os.Environ when Env is nil;
	// when Env is given without Environ, only known names are looked up.
	Environ func() []string
	// Flags are the values the user set on the command line, by dotted key
	// ("roles.primary.model"); leave out the flags the user did not set.
	Flags map[string]string
	// GitIgnored reports whether a file under RepoRoot is ignored by git; used
	// to warn about API keys in project files. Default: runs git check-ignore.
	GitIgnored func(path string) (bool, error)
}

// Load reads every source, lowest first, and returns the effective
// configuration with where each value came from. Every problem found, in any
// source, is returned at once as an *Error; nothing is returned with it.
func Load(opts LoadOptions) (*Config, *Sources, error) {
	if opts.Env == nil {
		opts.Env = os.Getenv
		if opts.Environ == nil {
			opts.Environ = os.Environ
		}
	}
	c := Default()
	s := newSources()
	ps := &problems{}

	userPath := ""
	if dir := userConfigDir(opts); dir != "" {
		userPath = filepath.Join(dir, UserFile)
		loadFile(c, s, ps, userPath, userPath, layerUser)
	}
	projectPath, projectShown := "", ""
	var trust *trustCheck
	if opts.RepoRoot != "" {
		projectPath, projectShown = findProjectFile(opts.RepoRoot, ps)
		if projectPath != "" {
			// What the project file may change is checked once every
			// source is read: a value the environment or a flag
			// overrides is the user's.
			trust = &trustCheck{before: flatten(c), userFile: userPath}
			loadFile(c, s, ps, projectPath, projectShown, layerProject)
			trust.after = flatten(c)
		}
	}

	entries, unreadable := environment(opts.Env, opts.Environ)
	for _, name := range unreadable {
		ps.add(Problem{File: "env " + name, Message: "unknown variable: cannot be read as a key",
			Accepted: "LEMMINGS_<SECTION>__<KEY> such as " + EnvName("limits.max_tasks") + ", or " + joinAccepted(slices.Sorted(maps.Keys(envShortcuts())))})
	}
	for _, e := range entries {
		d := &decoder{src: origin{layer: layerEnv, name: e.name}, srcs: s, probs: ps}
		d.applyText(c, e.key, e.value)
	}

	flagKeys := make([]string, 0, len(opts.Flags))
	for k := range opts.Flags {
		flagKeys = append(flagKeys, k)
	}
	sort.Strings(flagKeys)
	for _, k := range flagKeys {
		d := &decoder{src: origin{layer: layerFlag, name: k}, srcs: s, probs: ps}
		d.applyText(c, k, opts.Flags[k])
	}

	applyOffline(c, s)
	fillGateTimeouts(c, s)
	s.cfg = c
	for _, p := range validate(c, s) {
		ps.add(p)
	}
	if trust != nil {
		trust.final, trust.src = c, s
		refused, changes := trust.check()
		for _, p := range refused {
			if !ps.hasKey(p.Key) { // one problem per key: a bad value first
				ps.add(p)
			}
		}
		s.changes = changes
	}
	if err := ps.err(); err != nil {
		return nil, nil, err
	}
	s.warnings = warnings(c, s, opts, projectPath, projectShown)
	return c, s, nil
}

func userConfigDir(opts LoadOptions) string {
	if opts.UserConfigDir != "" {
		return opts.UserConfigDir
	}
	if x := opts.Env("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "lemmings")
	}
	if h := opts.Env("HOME"); h != "" {
		return filepath.Join(h, ".config", "lemmings")
	}
	return ""
}

// findProjectFile returns the project file to read, if any, and the path to
// show for it. Two project files, or a misspelt one, are problems: silently
// reading one and ignoring the other would surprise.
func findProjectFile(root string, ps *problems) (path, shown string) {
	var found []string
	for _, name := range []string{ProjectFile, ProjectAltFile} {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(name))); err == nil {
			found = append(found, name)
		}
	}
	for _, wrong := range []struct{ name, want string }{
		{"lemmings.yml", ProjectFile}, {".lemmings/config.yml", ProjectAltFile}, {".lemmings.yaml", ProjectFile},
	} {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(wrong.name))); err == nil {
			ps.add(Problem{File: wrong.name, Message: "lemmings does not read this file: rename it to " + wrong.want})
		}
	}
	switch len(found) {
	case 0:
		return "", ""
	case 1:
		return filepath.Join(root, filepath.FromSlash(found[0])), found[0]
	}
	ps.add(Problem{File: ProjectFile, Message: fmt.Sprintf("both %s and %s exist: pick one (lemmings reads a single project file)", ProjectFile, ProjectAltFile)})
	return "", ""
}

func loadFile(c *Config, s *Sources, ps *problems, path, shown string, l layer) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		ps.add(Problem{File: shown, Message: "cannot read: " + err.Error()})
		return
	}
	s.files = append(s.files, shown)
	d := &decoder{src: origin{layer: l, file: shown}, srcs: s, probs: ps}
	d.decodeFile(data, c)
}

// applyOffline turns off what needs the network when offline is set.
func applyOffline(c *Config, s *Sources) {
	if !c.Offline {
		return
	}
	why := origin{layer: layerOffline, name: s.lookup("offline").String()}
	if c.Supervisors.Enabled {
		c.Supervisors.Enabled = false
		s.set("supervisors.enabled", why)
	}
	// An embedding model on Ollama is a local server, which offline asks
	// (its index is kept); any other provider is the network.
	if emb, err := c.ResolvedRole(RoleEmbedding); c.RAG.Embedder != "offline" && (err != nil || emb.Provider != ProviderOllama) {
		c.RAG.Embedder = "offline"
		s.set("rag.embedder", why)
	}
}

// fillGateTimeouts gives gates written without a timeout the default one.
func fillGateTimeouts(c *Config, s *Sources) {
	for i := range c.Gates {
		if c.Gates[i].Timeout == 0 {
			c.Gates[i].Timeout = DefaultGateTimeout
			s.set(fmt.Sprintf("gates.%d.timeout", i), origin{layer: layerDefault})
		}
	}
}
