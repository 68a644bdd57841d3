package rag

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
)

// mergeBelow is the size under which neighbouring Go declarations share a
// chunk: a run of one-line constants is one thing to find, not twenty.
const mergeBelow = 200

// chunkGo splits Go source by top-level declaration: each declaration with its
// doc comment (and any comment just above it), the package clause and imports
// as one chunk, small neighbours merged, long declarations cut into windows
// that all carry the declaration's name. Source that does not parse is cut by
// lines.
func chunkGo(p, text string) []chunk {
	lines := splitLines(text)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, text, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil || f == nil {
		return chunkLines(lines, 1, "")
	}
	pkg := "package " + f.Name.Name
	type span struct {
		start, end int // 1-based lines
		name       string
	}
	var spans []span
	headerEnd := fset.Position(f.Name.End()).Line
	next := 1
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			headerEnd = fset.Position(g.End()).Line
			continue
		}
		if len(spans) == 0 {
			spans = append(spans, span{1, headerEnd, ""})
			next = headerEnd + 1
		}
		end := fset.Position(d.End()).Line
		if end < next {
			continue
		}
		spans = append(spans, span{next, end, declName(d)})
		next = end + 1
	}
	if len(spans) == 0 {
		spans = append(spans, span{1, len(lines), ""})
	} else if next <= len(lines) {
		spans[len(spans)-1].end = len(lines) // trailing comments
	}

	var out []chunk
	var pend *chunk
	flush := func() {
		if pend != nil {
			out = append(out, *pend)
			pend = nil
		}
	}
	for _, s := range spans {
		s.start = max(s.start, 1)
		s.end = min(s.end, len(lines))
		for s.start < s.end && strings.TrimSpace(lines[s.start-1]) == "" {
			s.start++
		}
		if s.start > s.end {
			continue
		}
		body := lines[s.start-1 : s.end]
		ctx := pkg
		if s.name != "" {
			ctx += "; " + s.name
		}
		size := 0
		for _, l := range body {
			size += len(l) + 1
		}
		if size > maxChunkChars || len(body) > maxChunkLines {
			flush()
			out = append(out, chunkLines(body, s.start, ctx)...)
			continue
		}
		if pend != nil && len(pend.Text) < mergeBelow && size < mergeBelow {
			pend.Text = strings.Join(lines[pend.StartLine-1:s.end], "\n")
			pend.EndLine = s.end
			if s.name != "" {
				pend.Context += ", " + s.name
			}
			continue
		}
		flush()
		pend = &chunk{StartLine: s.start, EndLine: s.end, Context: ctx, Text: strings.Join(body, "\n")}
	}
	flush()
	return out
}

// declName describes a declaration: "func (*Client).Do", "type Cookie",
// "var ErrNoCookie, ErrNoLocation".
func declName(d ast.Decl) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv != nil && len(d.Recv.List) > 0 {
			return fmt.Sprintf("func (%s).%s", recvType(d.Recv.List[0].Type), d.Name.Name)
		}
		return "func " + d.Name.Name
	case *ast.GenDecl:
		var names []string
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				names = append(names, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					names = append(names, n.Name)
				}
			}
		}
		if len(names) > 6 {
			names = append(names[:6], "…")
		}
		return d.Tok.String() + " " + strings.Join(names, ", ")
	}
	return "declaration"
}

func recvType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return "*" + recvType(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return recvType(t.X)
	case *ast.IndexListExpr:
		return recvType(t.X)
	}
	return "?"
}
