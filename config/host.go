package config

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

var hostName = regexp.MustCompile(`^[A-Za-z0-9_]([A-Za-z0-9._-]*[A-Za-z0-9_])?$`)

// normalizeOllamaHost turns what a user may write for Ollama's host into a
// URL, reading it the way Ollama's own client reads OLLAMA_HOST: no scheme
// means http, a missing port means 11434 (80/443 when a scheme is given),
// surrounding quotes are ignored. Unlike Ollama, a bad port is an error rather
// than silently replaced.
func normalizeOllamaHost(raw string) (string, error) {
	s := strings.Trim(strings.TrimSpace(raw), "\"'")
	if s == "" {
		return "", fmt.Errorf("must not be empty")
	}
	defaultPort := "11434"
	scheme, hostport, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		scheme, hostport = "http", s
	case scheme == "http":
		defaultPort = "80"
	case scheme == "https":
		defaultPort = "443"
	default:
		return "", fmt.Errorf("scheme %q is not http or https", scheme)
	}
	hostport, pathPart, _ := strings.Cut(hostport, "/")
	var user *url.Userinfo
	if at := strings.LastIndexByte(hostport, '@'); at >= 0 {
		name, pass, hasPass := strings.Cut(hostport[:at], ":")
		user = url.User(name)
		if hasPass {
			user = url.UserPassword(name, pass)
		}
		hostport = hostport[at+1:]
	}
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = "127.0.0.1", defaultPort
		if ip := net.ParseIP(strings.Trim(hostport, "[]")); ip != nil {
			host = ip.String()
		} else if hostport != "" {
			host = hostport
		}
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if net.ParseIP(host) == nil && !hostName.MatchString(host) {
		return "", fmt.Errorf("host %q is not a host name or IP address", host)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	u := url.URL{Scheme: scheme, User: user, Host: net.JoinHostPort(host, port)}
	if pathPart != "" {
		u.Path = "/" + pathPart
	}
	return u.String(), nil
}
