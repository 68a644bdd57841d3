// Package rag indexes a repository's source files and knowledge docs in chunks
// for retrieval: vectors in a persistent chromem-go database, a keyword index
// (SQLite FTS5, BM25, keyword.go) beside it, and searches that fuse both.
//
// Index.Update (update.go) brings the index in step with the files: walk.go
// lists them, chunk*.go cut them. Search (search.go) asks both indexes and
// fuses the ranks. An Embedder (embed.go) is whatever turns text into vectors:
// a model behind package llm, or the offline one (embed_offline.go) for tests
// and --offline runs; recorded.go says which one built an existing index.
package rag
