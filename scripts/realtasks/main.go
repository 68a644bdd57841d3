// Command realtasks builds lemmings eval's set of tasks from real history
// (docs/eval.md, "Tasks from real history") out of bench/realtasks/tasks.json:
// for each task it downloads the project's two releases with the ordinary
// clients (go mod download, pip download), checks them against the pinned
// hashes, checks the task (the base's tests pass, the held-back tests fail on
// the base and pass with the real change) and writes its folder. A task that
// does not check is dropped, and why is said; a failed download stops it.
//
//	go run ./scripts/realtasks [-tasks bench/realtasks/tasks.json] [-out .tools/realtasks] [-run REGEX] [-j 2] [-strict] [-pin]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/lemmings-dev/lemmings/eval"
	"github.com/lemmings-dev/lemmings/internal/atomicfile"
)

func main() {
	os.Exit(run())
}

func run() int {
	tasksPath := flag.String("tasks", "bench/realtasks/tasks.json", "the task list")
	out := flag.String("out", ".tools/realtasks", "where the task folders are built")
	only := flag.String("run", "", "only the tasks whose <language>/<id> matches this regular expression")
	jobs := flag.Int("j", 2, "tasks built at once")
	strict := flag.Bool("strict", false, "exit 1 when a task is dropped")
	pin := flag.Bool("pin", false, "record the hashes missing from the task list (downloads them) and rewrite it")
	timeout := flag.Duration("test-timeout", 3*time.Minute, "time limit of one run of a task's tests")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	s, err := loadSet(*tasksPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "realtasks:", err)
		return 2
	}
	var filter *regexp.Regexp
	if *only != "" {
		if filter, err = regexp.Compile(*only); err != nil {
			fmt.Fprintln(os.Stderr, "realtasks: -run:", err)
			return 2
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "realtasks:", err)
		return 1
	}
	if abs, err := filepath.Abs(*out); err == nil {
		*out = abs
	}
	b := &builder{Out: *out, TestTimeout: *timeout, Langs: eval.DefaultLanguages(),
		Fetch: &fetcher{Downloads: filepath.Join(*out, ".downloads"), Pin: *pin}}
	removeStale(b, s)

	type outcome struct {
		id     string
		reason string // dropped
		err    error  // the machine's
		fresh  bool
	}
	var mu sync.Mutex
	var results []outcome
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(*jobs, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				t := &s.Tasks[i]
				o := outcome{id: t.Language + "/" + t.ID}
				if !b.built(*t) || (*pin && (t.Base.Hash == "" || t.Target.Hash == "")) {
					start := time.Now()
					var err error
					if *pin {
						err = pinHashes(ctx, b.Fetch, t)
					}
					if err == nil {
						err = b.build(ctx, *t)
					}
					if reason, ok := isDropped(err); ok {
						o.reason = reason
						_ = os.RemoveAll(b.dir(*t))
					} else {
						o.err = err
					}
					o.fresh = true
					fmt.Fprintf(os.Stderr, "realtasks: %s: %s (%.0fs)\n", o.id, describe(o.reason, o.err), time.Since(start).Seconds())
				}
				mu.Lock()
				results = append(results, o)
				mu.Unlock()
			}
		}()
	}
	for i, t := range s.Tasks {
		if filter != nil && !filter.MatchString(t.Language+"/"+t.ID) {
			continue
		}
		select {
		case work <- i:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	if *pin {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // remits quote code: <, > and & stay as written
		enc.SetIndent("", "  ")
		_ = enc.Encode(s)
		if err := atomicfile.WriteFile(*tasksPath, buf.Bytes(), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "realtasks:", err)
			return 1
		}
	}
	sort.Slice(results, func(i, j int) bool { return results[i].id < results[j].id })
	built, fresh, droppedN, failed := 0, 0, 0, 0
	for _, o := range results {
		switch {
		case o.err != nil:
			failed++
		case o.reason != "":
			droppedN++
		default:
			built++
			if o.fresh {
				fresh++
			}
		}
	}
	for _, o := range results {
		if o.err != nil || o.reason != "" {
			fmt.Fprintf(os.Stderr, "realtasks: %s %s\n", o.id, describe(o.reason, o.err))
		}
	}
	fmt.Printf("realtasks: %d tasks in %s: %d built (%d now), %d dropped, %d failed\n", len(results), *out, built, fresh, droppedN, failed)
	switch {
	case ctx.Err() != nil:
		return 4
	case failed > 0:
		return 1
	case *strict && droppedN > 0:
		return 1
	}
	return 0
}

func describe(reason string, err error) string {
	switch {
	case err != nil:
		return "FAILED: " + err.Error()
	case reason != "":
		return "dropped: " + reason
	}
	return "built"
}

// pinHashes records the hashes of the task's releases that have none.
func pinHashes(ctx context.Context, f *fetcher, t *spec) error {
	for _, r := range []*release{&t.Base, &t.Target} {
		if r.Hash == "" {
			if _, err := f.fetch(ctx, t.Language, t.Project, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// removeStale removes built task folders that the list no longer has.
func removeStale(b *builder, s *set) {
	want := map[string]bool{}
	for _, t := range s.Tasks {
		want[b.dir(t)] = true
	}
	langs, _ := os.ReadDir(b.Out)
	for _, l := range langs {
		if !l.IsDir() || l.Name()[0] == '.' {
			continue
		}
		tasks, _ := os.ReadDir(filepath.Join(b.Out, l.Name()))
		for _, t := range tasks {
			p := filepath.Join(b.Out, l.Name(), t.Name())
			if _, err := os.Stat(filepath.Join(p, stampFile)); err == nil && !want[p] {
				_ = os.RemoveAll(p)
			}
		}
	}
}
