package config

import (
	"fmt"
	"io"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
)

// Print writes the effective configuration as YAML, each value followed by
// "# from: <origin>". API keys show only their last 4 characters and URL
// passwords are hidden. The output (without the masked secrets) loads back
// to the same configuration.
func Print(w io.Writer, c *Config, s *Sources) error {
	p := &printer{w: w, s: s}
	files := "none"
	if s != nil && len(s.files) > 0 {
		files = strings.Join(s.files, ", ")
	}
	p.line(0, "# lemmings: effective configuration; files read: "+files, "")
	p.fields(reflect.ValueOf(c).Elem(), "", 0)
	return p.err
}

type printer struct {
	w   io.Writer
	s   *Sources
	err error
	// onValue, when set, receives each value instead of the YAML lines.
	onValue func(key, text string)
}

func (p *printer) line(indent int, text, key string) {
	if p.err != nil {
		return
	}
	if p.onValue != nil {
		if key != "" {
			p.onValue(key, text)
		}
		return
	}
	comment := ""
	if key != "" {
		comment = "  # from: " + p.s.lookup(key).String()
	}
	_, p.err = fmt.Fprintf(p.w, "%s%s%s\n", strings.Repeat("  ", indent), text, comment)
}

func (p *printer) fields(v reflect.Value, key string, indent int) {
	for _, f := range fieldsOf(v.Type()) {
		p.value(v.Field(f.index), join(key, f.name), f.name, f, indent)
	}
}

// value prints "name: …" for v at key; "- " items are handled by the caller.
func (p *printer) value(v reflect.Value, key, name string, f field, indent int) {
	t := v.Type()
	switch {
	case t.Kind() == reflect.Struct:
		p.line(indent, name+":", "")
		p.fields(v, key, indent+1)
	case isFreeMap(t):
		keys := mapKeysInOrder(v, f)
		if len(keys) == 0 {
			p.line(indent, name+": {}", key)
			return
		}
		p.line(indent, name+":", "")
		for _, k := range keys {
			p.line(indent+1, formatKey(k)+": "+formatAny(v.MapIndex(reflect.ValueOf(k)).Interface()), join(key, k))
		}
	case t.Kind() == reflect.Map:
		if v.Len() == 0 {
			p.line(indent, name+": {}", key) // an empty map (implementor.cli.env) reads back as one
			return
		}
		p.line(indent, name+":", "")
		for _, k := range mapKeysInOrder(v, f) {
			p.value(v.MapIndex(reflect.ValueOf(k)), join(key, k), k, field{}, indent+1)
		}
	case t.Kind() == reflect.Slice:
		if v.Len() == 0 {
			p.line(indent, name+": []", key)
			return
		}
		p.line(indent, name+":", "")
		for i := range v.Len() {
			item, ikey := v.Index(i), join(key, strconv.Itoa(i))
			if item.Kind() != reflect.Struct {
				p.line(indent+1, "- "+formatScalar(item, field{}), ikey)
				continue
			}
			for j, sf := range fieldsOf(item.Type()) {
				prefix := "  "
				if j == 0 {
					prefix = "- "
				}
				p.line(indent+1, prefix+sf.name+": "+formatScalar(item.Field(sf.index), sf), join(ikey, sf.name))
			}
		}
	default:
		p.line(indent, name+": "+formatScalar(v, f), key)
	}
}

func formatScalar(v reflect.Value, f field) string {
	switch {
	case v.Type() == durationType:
		return formatDuration(time.Duration(v.Int()))
	case v.Kind() == reflect.Pointer:
		if v.IsNil() {
			return "null"
		}
		return formatScalar(v.Elem(), f)
	case v.Kind() == reflect.String:
		s := v.String()
		switch f.secret {
		case "key":
			s = maskKey(s)
		case "url":
			s = maskURL(s)
		}
		return formatString(s)
	case v.Kind() == reflect.Int:
		return strconv.FormatInt(v.Int(), 10)
	case v.Kind() == reflect.Float64:
		return fmtFloat(v.Float())
	case v.Kind() == reflect.Bool:
		return strconv.FormatBool(v.Bool())
	}
	return fmt.Sprint(v.Interface())
}

// maskKey keeps only the last 4 characters of a secret, and none of a short one.
func maskKey(s string) string {
	if s == "" {
		return ""
	}
	if len(s) < 12 {
		return "****"
	}
	return "****" + s[len(s)-4:]
}

// maskURL hides the password of a URL with credentials.
func maskURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, has := u.User.Password(); !has {
		return s
	}
	user := u.User.Username()
	u.User = nil
	return u.Scheme + "://" + user + ":****@" + strings.TrimPrefix(u.String(), u.Scheme+"://")
}

var plainString = regexp.MustCompile(`^[A-Za-z0-9_./][A-Za-z0-9_./:@+=~(),*' -]*$`)

// formatString writes a string plain when YAML reads it back as the same
// string, double-quoted otherwise.
func formatString(s string) string {
	if !plainString.MatchString(s) || strings.Contains(s, ": ") || strings.HasSuffix(s, " ") || strings.HasSuffix(s, ":") {
		return strconv.Quote(s)
	}
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "null", "~", "y", "n":
		return strconv.Quote(s)
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return strconv.Quote(s)
	}
	if _, err := strconv.ParseInt(s, 0, 64); err == nil {
		return strconv.Quote(s)
	}
	return s
}

func formatKey(k string) string { return formatString(k) }

// formatAny writes an option value on one line.
func formatAny(v any) string {
	switch x := v.(type) {
	case string:
		return formatString(x)
	case nil:
		return "null"
	}
	b, err := yaml.MarshalWithOptions(v, yaml.Flow(true))
	if err != nil {
		return strconv.Quote(fmt.Sprint(v))
	}
	return strings.TrimSpace(string(b))
}
