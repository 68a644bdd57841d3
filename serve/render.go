package serve

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"gitlab.com/golang-commonmark/markdown"

	"github.com/lemmings-dev/lemmings/internal/redact"
	"github.com/lemmings-dev/lemmings/internal/termsafe"
)

// Page templates: each page is the layout plus its own file.
var pageNames = []string{"runs", "run", "live", "commit", "knowledge", "message", "history"}

func parsePages() (map[string]*template.Template, error) {
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html")
	if err != nil {
		return nil, fmt.Errorf("serve: templates: %w", err)
	}
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.Must(base.Clone()).ParseFS(templateFS, "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("serve: template %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

var funcs = template.FuncMap{
	"short": func(s string) string {
		if len(s) > 10 {
			return s[:10]
		}
		return s
	},
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.Local().Format("2006-01-02 15:04:05")
	},
	"clock": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Local().Format("15:04:05")
	},
	"dur": func(d time.Duration) string {
		switch {
		case d <= 0:
			return "—"
		case d < time.Second:
			return d.Round(time.Millisecond).String()
		case d < time.Hour:
			return d.Round(time.Second).String()
		}
		return d.Round(time.Minute).String()
	},
	"usd": func(v float64) string { return fmt.Sprintf("$%.4f", v) },
	"statusClass": func(s string) string {
		s, _, _ = strings.Cut(s, " ")
		return "st-" + strings.ToLower(s)
	},
	"join": strings.Join,
}

// render writes a page: the layout with the page's content. Every string
// the page shows is redacted first (redacting the HTML afterwards would miss
// a secret whose characters the escaping changed); the form token is the
// server's own and stays.
func (s *Server) render(w http.ResponseWriter, status int, page string, data pageData) {
	red := s.opts.Redactor
	// No control or bidirectional character a model or a repository wrote
	// reaches the page (U+202E would show a name reversed); html/template
	// escapes the rest.
	data.Title = red.String(termsafe.String(data.Title))
	data.Body = redact.Value(red, redact.MapStrings(data.Body, termsafe.String))
	var buf bytes.Buffer
	t := s.pages[page]
	name := "layout.html"
	if page == "live" {
		name = "live"
	}
	if err := t.ExecuteTemplate(&buf, name, data); err != nil {
		http.Error(w, s.opts.Redactor.String("render "+page+": "+err.Error()), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// message renders a page that just says something (errors, confirmations).
func (s *Server) message(w http.ResponseWriter, status int, title, text string) {
	s.render(w, status, "message", pageData{Title: title, CSRF: s.csrf, Body: messageBody{Title: title, Text: text}})
}

type messageBody struct{ Title, Text string }

// pageData is what every page gets.
type pageData struct {
	Title string
	Nav   string
	CSRF  string
	Body  any
}

var md = markdown.New(markdown.HTML(false), markdown.Tables(true), markdown.Linkify(false))

// markdownHTML renders Markdown with raw HTML escaped (reports quote model
// output, which is untrusted).
func markdownHTML(src []byte) template.HTML {
	return template.HTML(md.RenderToString(src)) //nolint:gosec // raw HTML is off: the renderer escapes it
}
