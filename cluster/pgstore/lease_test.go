package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lemmings-dev/lemmings/cluster/pgstore"
)

// A worker's lease is held while its session lives, refused to a second
// holder, gone the moment its session ends, and taken again by Renew.
func TestLease(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	held := func() bool {
		var ok bool
		if err := db.Pool().QueryRow(ctx, "SELECT "+pgstore.WorkerHeldSQL("$1::text"), "box-a#1").Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if held() {
		t.Fatal("held before anyone took it")
	}
	l, err := db.TakeLease(ctx, "box-a#1")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !held() {
		t.Fatal("not held after TakeLease")
	}
	if _, err := db.TakeLease(ctx, "box-a#1"); !errors.Is(err, pgstore.ErrWorkerNameTaken) {
		t.Fatalf("a second TakeLease: %v, want ErrWorkerNameTaken", err)
	}
	if _, err := db.Pool().Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for held() {
		if time.Now().After(deadline) {
			t.Fatal("still held 5s after its session was terminated")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := l.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	if !held() {
		t.Fatal("not held after Renew")
	}
}

// The listener wakes the subscribers of the run that got an event, and
// only them.
func TestListenerWakesTheRunsSubscribers(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	l := db.Listen(ctx)
	defer l.Close()
	select {
	case <-l.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("listener not ready")
	}
	a, stopA := l.Subscribe("run-a")
	defer stopA()
	b, stopB := l.Subscribe("run-b")
	defer stopB()
	// Ready wakes everyone once: drain it.
	for _, ch := range []<-chan struct{}{a, b} {
		select {
		case <-ch:
		default:
		}
	}
	if err := db.AppendEvent(ctx, "run-a", []byte(`{"kind":"x"}`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a:
	case <-time.After(5 * time.Second):
		t.Fatal("run-a's subscriber not woken by its event")
	}
	select {
	case <-b:
		t.Fatal("run-b's subscriber woken by run-a's event")
	case <-time.After(200 * time.Millisecond):
	}
}
