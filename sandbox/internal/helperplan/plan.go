// Package helperplan is what the sandbox (the parent) and its helper (the
// re-executed binary that sets the confinement up, package sandbox/helper)
// say to each other: the reserved argv[0], the plan the parent writes as
// argv[1], the probe's report and the helper's exit codes.
package helperplan

import "sync/atomic"

// Arg0 is the argv[0] under which a binary that links sandbox/helper acts
// as the sandbox helper.
const Arg0 = "lemmings-sandbox-helper"

// Exit codes of the helper itself.
const (
	ExitSetup    = 125 // the sandbox could not be set up
	ExitNotFound = 127
)

// Plan is what the parent asks of the helper (argv[1], JSON).
type Plan struct {
	Path       string   `json:"path"` // the program, resolved
	Writable   []string `json:"writable"`
	Devices    []string `json:"devices"`
	Protect    []string `json:"protect,omitempty"` // bound read-only (mount namespace)
	Landlock   int      `json:"landlock"`          // ABI to enforce; 0: none
	Namespaces bool     `json:"ns"`                // started in new user and mount namespaces
	NetNS      bool     `json:"netns"`             // and a network namespace: loopback up
	PidNS      bool     `json:"pidns"`             // and a pid namespace: a /proc of its own
	Mounts     bool     `json:"mounts"`            // private /dev/shm and /dev/pts, Protect bound read-only
	DenyNet    bool     `json:"deny_net"`
	DenyUnix   bool     `json:"deny_unix"`              // seccomp takes UNIX sockets away (Landlock below ABI 9)
	NoSetID    bool     `json:"no_setid,omitempty"`     // seccomp refuses setuid and setgid bits
	NoFileCaps bool     `json:"no_file_caps,omitempty"` // seccomp refuses attributes of a file capability's size (the command runs as root)
	Layers     []Layer  `json:"layers,omitempty"`       // overlays mounted after the namespaces' setup
	Hide       []string `json:"hide,omitempty"`         // folders covered by an empty, read-only tmpfs; files by /dev/null
	Unreadable []string `json:"unreadable,omitempty"`   // folders and files Landlock leaves unreadable (no mounts to hide them)
	Probe      bool     `json:"probe,omitempty"`        // set up, report on stdout, exit
}

// Layer is one overlay the helper mounts: Lower read-only below, the
// writes in Upper, on Target.
type Layer struct {
	Lower  string `json:"lower"`
	Upper  string `json:"upper"`
	Work   string `json:"work"`
	Target string `json:"target"`
}

// ProbeReport is what a probing helper prints.
type ProbeReport struct {
	Loopback bool `json:"lo"`
	Mounts   bool `json:"mounts"`
	// Err is a step of the namespaces' setup that failed (the steps
	// before it worked); LandlockErr is Landlock's failure.
	Err         string `json:"err,omitempty"`
	LandlockErr string `json:"landlock_err,omitempty"`
	SeccompErr  string `json:"seccomp_err,omitempty"`
}

// linked is set by sandbox/helper's init: this binary can be its own helper.
var linked atomic.Bool

// MarkLinked records that the helper is linked into this binary.
func MarkLinked() { linked.Store(true) }

// Linked reports whether the helper is linked into this binary.
func Linked() bool { return linked.Load() }
