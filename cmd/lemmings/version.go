package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version may be set at build time with -ldflags "-X main.version=…"; when it
// is not, the version comes from the build information the Go toolchain
// stamps into every binary (module version, VCS revision).
var version = ""

// versionString says which lemmings this is: the module version (a tag for
// `go install …@v1.2.3`, a pseudo-version for a build in a clone), the commit
// it was built from and whether the tree had local changes.
func versionString() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		if version != "" {
			return version
		}
		return "(unknown: built without module information)"
	}
	return describeBuild(version, info)
}

// describeBuild formats the version line from build information; override is
// an -ldflags version that wins over the module's.
func describeBuild(override string, info *debug.BuildInfo) string {
	v := override
	if v == "" {
		v = info.Main.Version
	}
	if v == "" {
		v = "(devel)"
	}
	var rev, when string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	out := v
	if rev == "" && v == "(devel)" {
		out += " (built without version control information: build with -buildvcs=true to stamp the commit)"
	}
	if rev != "" {
		out += fmt.Sprintf(" (commit %.12s", rev)
		if modified {
			out += ", with local changes"
		}
		if when != "" {
			out += ", " + when
		}
		out += ")"
	}
	goVersion := info.GoVersion
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	return out + " " + goVersion
}
