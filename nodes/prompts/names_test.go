package prompts

import (
	"io/fs"
	"strings"
	"testing"
)

// Every role template starts with its marker, and every marker but the
// doctor's is a template's: a scripted team finds each role by it.
func TestEveryTemplateStartsWithItsMarker(t *testing.T) {
	names, err := fs.Glob(FS, "*.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	marked := map[string]string{}
	for _, m := range Markers {
		marked[m.Role] = m.Marker
	}
	seen := map[string]bool{}
	for _, name := range names {
		role := strings.TrimSuffix(name, ".tmpl")
		if role == "shared" || role == ImplementorCLI {
			continue // not a role of its own; a CLI's prompt is matched by no script
		}
		seen[role] = true
		data, err := FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		marker, ok := marked[role]
		if !ok {
			t.Errorf("template %s has no marker in Markers", name)
			continue
		}
		if !strings.HasPrefix(string(data), marker) {
			t.Errorf("template %s does not start with its marker %q", name, marker)
		}
		if got := RoleOf(string(data)); got != role {
			t.Errorf("template %s is found as role %q", name, got)
		}
	}
	for _, m := range Markers {
		if !seen[m.Role] && m.Role != Doctor {
			t.Errorf("marker of %s names no template", m.Role)
		}
	}
}

// The supervisors' templates open their bootstrap mode with the marker the
// scripted supervisors look for.
func TestSupervisorsMarkTheirBootstrap(t *testing.T) {
	for _, role := range []string{CodeStyle, Design, Internaliser} {
		data, err := FS.ReadFile(role + ".tmpl")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "{{if .Bootstrap}}"+MarkerBootstrap) {
			t.Errorf("%s.tmpl does not open its bootstrap mode with %q", role, MarkerBootstrap)
		}
	}
}
