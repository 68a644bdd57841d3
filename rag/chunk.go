package rag

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
)

// Chunk sizes. A chunk should say one thing and fit an embedding model's
// context comfortably (nomic-embed-text reads 2,048 tokens; 2,400 characters
// is about 600 tokens of code).
const (
	maxChunkChars = 2400
	maxChunkLines = 80
	overlapLines  = 5
)

// chunk is one piece of a file.
type chunk struct {
	Path      string
	Kind      string // KindCode or KindKnowledge
	Language  string
	StartLine int // 1-based, inclusive
	EndLine   int
	Context   string // what the chunk is: "func (*Client).Do", "Setup > Install"…
	Text      string // the lines as in the file
	Hash      string // of Context and Text
}

// Kinds of chunks.
const (
	KindCode      = "code"
	KindKnowledge = "knowledge"
)

// embedText is what the embedder and the keyword index see: the path and
// context make a chunk findable by where it is and what it declares.
func (c *chunk) embedText() string {
	var b strings.Builder
	b.Grow(len(c.Path) + len(c.Context) + len(c.Text) + 2)
	b.WriteString(c.Path)
	b.WriteByte('\n')
	if c.Context != "" {
		b.WriteString(c.Context)
		b.WriteByte('\n')
	}
	b.WriteString(c.Text)
	return b.String()
}

func (c *chunk) finish() {
	h := sha256.New()
	h.Write([]byte(c.Context))
	h.Write([]byte{0})
	h.Write([]byte(c.Text))
	c.Hash = hex.EncodeToString(h.Sum(nil)[:12])
}

// languageOf names the language of a file from its name ("" when unknown).
func languageOf(p string) string {
	base := path.Base(p)
	switch base {
	case "Makefile", "GNUmakefile":
		return "make"
	case "Dockerfile":
		return "dockerfile"
	case "go.mod", "go.sum", "go.work":
		return "gomod"
	}
	switch strings.ToLower(path.Ext(base)) {
	case ".go":
		return "go"
	case ".md", ".markdown":
		return "markdown"
	case ".py":
		return "python"
	case ".js", ".mjs", ".cjs", ".jsx":
		return "javascript"
	case ".ts", ".tsx":
		return "typescript"
	case ".rs":
		return "rust"
	case ".java":
		return "java"
	case ".c", ".h":
		return "c"
	case ".cc", ".cpp", ".cxx", ".hpp", ".hh":
		return "cpp"
	case ".rb":
		return "ruby"
	case ".sh", ".bash", ".zsh":
		return "shell"
	case ".yaml", ".yml":
		return "yaml"
	case ".json":
		return "json"
	case ".toml":
		return "toml"
	case ".html", ".htm":
		return "html"
	case ".css":
		return "css"
	case ".sql":
		return "sql"
	case ".proto":
		return "protobuf"
	case ".txt", ".rst":
		return "text"
	}
	return ""
}

// chunkFile splits a file's text into chunks by its language's structure.
func chunkFile(p, kind, text string) []chunk {
	lang := languageOf(p)
	var cs []chunk
	switch lang {
	case "go":
		cs = chunkGo(p, text)
	case "markdown":
		cs = chunkMarkdown(text)
	default:
		cs = chunkLines(splitLines(text), 1, "")
	}
	out := cs[:0]
	for _, c := range cs {
		if strings.TrimSpace(c.Text) == "" {
			continue
		}
		c.Path, c.Kind, c.Language = p, kind, lang
		c.finish()
		out = append(out, c)
	}
	return out
}

// splitLines splits text into lines without their line endings.
func splitLines(text string) []string {
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// chunkLines cuts lines (the first being line number first) into windows of
// at most maxChunkLines lines and maxChunkChars characters, each window
// repeating the last overlapLines lines of the one before.
func chunkLines(lines []string, first int, context string) []chunk {
	var out []chunk
	for start := 0; start < len(lines); {
		end, size := start, 0
		for end < len(lines) && end-start < maxChunkLines && (end == start || size+len(lines[end])+1 <= maxChunkChars) {
			size += len(lines[end]) + 1
			end++
		}
		text := strings.Join(lines[start:end], "\n")
		if len(text) > maxChunkChars*2 {
			text = strings.ToValidUTF8(text[:maxChunkChars*2], "") // one giant line (minified code): keep its start
		}
		out = append(out, chunk{StartLine: first + start, EndLine: first + end - 1, Context: context, Text: text})
		if end >= len(lines) {
			break
		}
		next := end - overlapLines
		if next <= start {
			next = end
		}
		start = next
	}
	return out
}
