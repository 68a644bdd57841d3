package config

import (
	"fmt"
	"strings"
)

// layer is one source of configuration values, lowest first.
type layer int

const (
	layerDefault layer = iota
	layerUser
	layerProject
	layerEnv
	layerFlag
	layerOffline
)

// origin is where one value came from.
type origin struct {
	layer layer
	file  string // display path for file layers
	line  int
	name  string // variable name (env), key (flag), or the origin of offline
	// whole marks a container replaced as a whole (a list): its origin is
	// also the origin of everything under it.
	whole bool
}

func (o origin) String() string {
	switch o.layer {
	case layerUser, layerProject:
		if o.line > 0 {
			return fmt.Sprintf("%s:%d", o.file, o.line)
		}
		return o.file
	case layerEnv:
		return "env " + o.name
	case layerFlag:
		return "flag " + o.name
	case layerOffline:
		return "offline (set by " + o.name + ")"
	default:
		return "default"
	}
}

// problemFile is what a Problem names as its file for a value of this origin.
func (o origin) problemFile() string {
	switch o.layer {
	case layerUser, layerProject:
		return o.file
	case layerEnv:
		return "env " + o.name
	case layerFlag:
		return "flags"
	case layerOffline:
		return "offline"
	default:
		return ""
	}
}

// Sources records where each value of a loaded Config came from, which files
// were read, and warnings that are not errors.
type Sources struct {
	cfg      *Config // the configuration these sources describe
	origins  map[string]origin
	files    []string
	warnings []Problem
	changes  []ProjectChange // what the project file changed (ProjectChanges)
}

func newSources() *Sources { return &Sources{origins: map[string]origin{}} }

func (s *Sources) set(key string, o origin) { s.origins[key] = o }

// forget drops what is recorded for key and everything under it (a list
// replaced by a higher source).
func (s *Sources) forget(key string) {
	delete(s.origins, key)
	prefix := key + "."
	for k := range s.origins {
		if strings.HasPrefix(k, prefix) {
			delete(s.origins, k)
		}
	}
}

// lookup returns the origin of key, or of its nearest parent replaced as a
// whole, or the default.
func (s *Sources) lookup(key string) origin {
	if s == nil {
		return origin{}
	}
	if o, ok := s.origins[key]; ok {
		return o
	}
	for k := key; ; {
		if o, ok := s.origins[k]; ok && o.whole {
			return o
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return origin{}
}

// Origin says where the value at the dotted key came from: "default", a file
// and line ("lemmings.yaml:12"), "env OLLAMA_HOST", "flag roles.primary.model",
// or "offline (set by …)". For a section, map or list it names the highest
// source that set anything in it. It returns "" for a key the configuration
// does not have.
func (s *Sources) Origin(key string) string {
	if s == nil || s.cfg == nil || !keyExists(s.cfg, key) {
		return ""
	}
	best := s.lookup(key)
	prefix := key + "."
	for k, o := range s.origins {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		if o.layer > best.layer || o.layer == best.layer && best.layer != layerDefault && o.line < best.line {
			best = o
		}
	}
	return best.String()
}

// Files lists the configuration files that were read, lowest first.
func (s *Sources) Files() []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s.files...)
}

// Warnings lists things worth telling the user that do not stop a run, such
// as an API key written in a project file.
func (s *Sources) Warnings() []Problem {
	if s == nil {
		return nil
	}
	return append([]Problem(nil), s.warnings...)
}
