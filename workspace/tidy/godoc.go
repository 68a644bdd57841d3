package tidy

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strings"
)

// restoreGoDocs puts back the doc comments a whole-file rewrite dropped: the
// package's, and those of the declarations it kept by name. A small coder
// asked to fix one function returns the file without them (Qwen2.5-Coder-1.5B
// on the demo's MeanWordLength fix dropped the package comment); a rewrite
// that gives a declaration a doc comment of its own keeps it.
func restoreGoDocs(p, old, content string) (string, []string) {
	if old == "" {
		return content, nil
	}
	of, err := parser.ParseFile(token.NewFileSet(), p, old, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return content, nil
	}
	fset := token.NewFileSet()
	nf, err := parser.ParseFile(fset, p, content, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return content, nil
	}
	type insert struct {
		at   int
		text string
	}
	var ins []insert
	var restored []string
	if of.Doc != nil && nf.Doc == nil && !hasCommentBefore(nf, nf.Package) {
		ins = append(ins, insert{fset.Position(nf.Package).Offset, docText(old, of.Doc)})
		restored = append(restored, "the package comment")
	}
	oldDocs := map[string]string{}
	for _, d := range of.Decls {
		if key, doc := declDoc(d); key != "" && doc != nil {
			oldDocs[key] = docText(old, doc)
		}
	}
	for _, d := range nf.Decls {
		key, doc := declDoc(d)
		text, ok := oldDocs[key]
		if key == "" || doc != nil || !ok || hasCommentBefore(nf, d.Pos()) {
			continue
		}
		// At the start of the declaration's line, indented as it is.
		at := fset.Position(d.Pos()).Offset
		line := strings.LastIndexByte(content[:at], '\n') + 1
		ins = append(ins, insert{line, text})
		restored = append(restored, "the comment of "+key)
	}
	if len(ins) == 0 {
		return content, nil
	}
	sort.Slice(ins, func(i, j int) bool { return ins[i].at > ins[j].at })
	for _, in := range ins {
		content = content[:in.at] + in.text + "\n" + content[in.at:]
	}
	return content, []string{fmt.Sprintf("restored %s, which the rewrite dropped", strings.Join(restored, ", "))}
}

// declDoc names a function, method or single-spec declaration (a type, a
// const or var) and gives its doc comment.
func declDoc(d ast.Decl) (string, *ast.CommentGroup) {
	switch d := d.(type) {
	case *ast.FuncDecl:
		name := d.Name.Name
		if d.Recv != nil && len(d.Recv.List) == 1 {
			name = recvType(d.Recv.List[0].Type) + "." + name
		}
		return name, d.Doc
	case *ast.GenDecl:
		if len(d.Specs) != 1 || d.Lparen.IsValid() {
			return "", nil
		}
		switch s := d.Specs[0].(type) {
		case *ast.TypeSpec:
			return s.Name.Name, d.Doc
		case *ast.ValueSpec:
			if len(s.Names) == 1 {
				return s.Names[0].Name, d.Doc
			}
		}
	}
	return "", nil
}

func recvType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvType(t.X)
	case *ast.IndexExpr:
		return recvType(t.X)
	case *ast.IndexListExpr:
		return recvType(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}

// docText is a comment group's text as the file has it (its own line breaks
// and indentation), from the start of its first line.
func docText(src string, g *ast.CommentGroup) string {
	from := int(g.Pos()) - 1 // a Pos of a one-file FileSet is the offset + 1
	to := int(g.End()) - 1
	line := strings.LastIndexByte(src[:from], '\n') + 1
	if strings.TrimSpace(src[line:from]) != "" {
		line = from
	}
	return src[line:to]
}

// hasCommentBefore says whether a comment ends on the line just above pos:
// a comment the parser did not take as the doc (a blank line between) still
// says the rewrite kept something there.
func hasCommentBefore(f *ast.File, pos token.Pos) bool {
	for _, c := range f.Comments {
		if c.End() <= pos && pos-c.End() <= 2 {
			return true
		}
	}
	return false
}
