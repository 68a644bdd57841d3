// Package serve is lemmings serve: a local web app to watch and steer the runs
// of a repository. It reads the same files the CLI reads (package inspect),
// streams a running run's events with server-sent events, and acts only
// through the run's own channels: a resume started here, a halt request file,
// knowledge decisions committed on the run's branch. The user's checkout is
// never changed.
package serve

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/lemmings-dev/lemmings/config"
	"github.com/lemmings-dev/lemmings/inspect"
	"github.com/lemmings-dev/lemmings/internal/localtoken"
	"github.com/lemmings-dev/lemmings/internal/redact"
	"github.com/lemmings-dev/lemmings/runview"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// DefaultAddr is where lemmings serve listens unless told otherwise.
const DefaultAddr = "127.0.0.1:7766"

// MaxFormBytes bounds a form's body: a rejection's reason, a knowledge
// review's note.
const MaxFormBytes = 256 << 10

// tokenCookie carries the access token after the first ?token= visit.
const tokenCookie = "lemmings_token"

// Options configure a Server.
type Options struct {
	// Root is the repository whose runs are served.
	Root string
	// Token is required of every request, on loopback too (any process of
	// the machine can reach 127.0.0.1): as "Authorization: Bearer <token>",
	// or ?token= once, which sets a cookie and drops it from the address.
	Token string
	// LoadConfig reads the repository's configuration: for a run (resumes go
	// on with the choices the run was started with) or, with runID "", for
	// the knowledge directory; nil uses the defaults.
	LoadConfig func(runID string) (*config.Config, error)
	// HTTPClient is given to runs resumed here (tests).
	HTTPClient *http.Client
	// Log receives one line per action taken (approve, halt, review).
	Log io.Writer
	// Poll is how often live views look for new events (default 250ms).
	Poll time.Duration
	// Source, when set, is where runs are read and requests go (a shared
	// store); nil reads the repository's .lemmings/.
	Source Source
	// Redactor is what every page, stream and error the server shows goes
	// through, and the runs it resumes; New teaches it the environment's
	// keys and the repository's .env values. Nil: the process's
	// (redact.Default).
	Redactor *redact.Redactor
}

// Server serves the web app of one repository.
type Server struct {
	opts  Options
	csrf  string
	pages map[string]*template.Template
	mux   *http.ServeMux
	cop   *http.CrossOriginProtection

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	resuming map[string]*resumeJob

	cacheMu sync.Mutex
	qaCache map[string][]runview.Verdict // run id + step → QA result, immutable once written
}

// New builds a Server.
func New(o Options) (*Server, error) {
	if o.Root == "" {
		return nil, errors.New("serve: no repository root")
	}
	if len(o.Token) < 16 {
		return nil, errors.New("serve: no access token (at least 16 characters): every request must carry one, on loopback too")
	}
	if o.LoadConfig == nil {
		o.LoadConfig = func(string) (*config.Config, error) { return config.Default(), nil }
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Poll <= 0 {
		o.Poll = 250 * time.Millisecond
	}
	// The repository's .env values and lemmings' keys are secrets on every page.
	if o.Redactor == nil {
		o.Redactor = redact.Default()
	}
	o.Redactor.LearnEnv(os.Environ())
	o.Redactor.LearnRepo(o.Root)
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{opts: o, csrf: RandomToken(), pages: pages, ctx: ctx, cancel: cancel,
		resuming: map[string]*resumeJob{}, qaCache: map[string][]runview.Verdict{}, cop: http.NewCrossOriginProtection()}
	s.routes()
	return s, nil
}

// Close stops the runs resumed by this server (they stop cleanly at their
// next checkpoint, resumable) and waits for them.
func (s *Server) Close() {
	s.cancel()
	s.wg.Wait()
}

// RandomToken returns 32 random hex digits.
func RandomToken() string { return localtoken.New() }

// IsLoopback reports whether a listen address only accepts local connections.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", s.handleRuns)
	m.HandleFunc("GET /runs/{id}", s.handleRun)
	m.HandleFunc("GET /runs/{id}/live", s.handleLive)
	m.HandleFunc("GET /runs/{id}/events", s.handleEvents)
	m.HandleFunc("GET /runs/{id}/commits/{sha}", s.handleCommit)
	m.HandleFunc("POST /runs/{id}/approve", s.handleApprove)
	m.HandleFunc("POST /runs/{id}/reject", s.handleReject)
	m.HandleFunc("POST /runs/{id}/halt", s.handleHalt)
	m.HandleFunc("POST /runs/{id}/tell", s.handleTell)
	m.HandleFunc("GET /runs/{id}/history", s.handleHistory)
	m.HandleFunc("POST /runs/{id}/fork", s.handleFork)
	m.HandleFunc("GET /knowledge", s.handleKnowledge)
	m.HandleFunc("POST /knowledge/review", s.handleReview)
	sub, _ := fs.Sub(assetFS, "assets")
	m.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(sub)))
	s.mux = m
}

// ServeHTTP applies the access rules, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'")
	if !s.allowed(w, r) {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if err := s.cop.Check(r); err != nil {
			http.Error(w, "cross-origin request refused: use the page lemmings serve shows", http.StatusForbidden)
			return
		}
		// The form token is read before anything else of the body, and a
		// body is small: the forms here send a few fields, url-encoded.
		// A multipart body would be parsed (to disk, tens of MB) before its
		// token could be checked, so none is accepted.
		if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/x-www-form-urlencoded" {
			http.Error(w, "this server's forms are sent url-encoded (application/x-www-form-urlencoded); use the page lemmings serve shows", http.StatusUnsupportedMediaType)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxFormBytes)
		if err := r.ParseForm(); err != nil {
			status := http.StatusBadRequest
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				status = http.StatusRequestEntityTooLarge
			}
			http.Error(w, fmt.Sprintf("unreadable form (at most %d bytes): %v", MaxFormBytes, err), status)
			return
		}
		if !sameSecret(r.PostForm.Get("csrf"), s.csrf) {
			http.Error(w, "missing or stale form token: reload the page and try again", http.StatusForbidden)
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// allowed enforces the token: a bearer header (scripts), the cookie
// (browsers), or ?token= once, which sets the cookie.
func (s *Server) allowed(w http.ResponseWriter, r *http.Request) bool {
	if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		if sameSecret(strings.TrimSpace(v), s.opts.Token) {
			return true
		}
		s.unauthorized(w, "wrong token")
		return false
	}
	if q := r.URL.Query().Get("token"); q != "" {
		if !sameSecret(q, s.opts.Token) {
			s.unauthorized(w, "wrong token: use the URL lemmings serve printed")
			return false
		}
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: s.opts.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		if r.Method == http.MethodGet {
			// Drop the token from the address bar and history.
			u := *r.URL
			q := u.Query()
			q.Del("token")
			u.RawQuery = q.Encode()
			http.Redirect(w, r, (&url.URL{Path: u.Path, RawQuery: u.RawQuery}).String(), http.StatusSeeOther)
			return false
		}
		return true
	}
	if c, err := r.Cookie(tokenCookie); err == nil && sameSecret(c.Value, s.opts.Token) {
		return true
	}
	s.unauthorized(w, "this server needs its token: open the URL lemmings serve printed (…/?token=…), or send Authorization: Bearer <the token in its token file>")
	return false
}

func (s *Server) unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="lemmings serve"`)
	http.Error(w, msg, http.StatusUnauthorized)
}

func sameSecret(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// store opens the run store; a repository without runs yet is no error here.
func (s *Server) store() (*inspect.Store, error) {
	return s.source().Store()
}

func (s *Server) logf(format string, args ...any) {
	fmt.Fprintf(s.opts.Log, time.Now().Format("15:04:05")+" "+format+"\n", args...)
}
