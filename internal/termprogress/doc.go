// Package termprogress shows a run's events to a person on a terminal: a
// live status line (the node, the model call in flight with its tokens and
// rate, the task, the counts and cost) cut to the terminal's width and
// redrawn as it changes size, and plain lines when the output is piped or a
// stored log is replayed (lemmings run, resume, demo, log, cluster log).
// With --json every event is one JSON line instead. It reads the events'
// payloads through package events.
package termprogress
