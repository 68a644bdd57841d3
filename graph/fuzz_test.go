package graph

import (
	"context"
	"testing"
)

// realSegment returns the bytes of a real segment: a small run with a fan-out,
// a pause and metadata, so the fuzzers start from every record kind.
func realSegment(f *testing.F) []byte {
	cp := NewMemoryCheckpointer()
	c, err := team(nil, nil).Compile(WithCheckpointer(cp), WithInterruptBefore("judge"),
		WithMetadata(func(_ context.Context, s teamState) map[string]string { return map[string]string{"topic": s.Topic} }))
	if err != nil {
		f.Fatal(err)
	}
	_, _ = c.Run(context.Background(), "seed", teamState{})
	recs, err := cp.Records(context.Background(), "seed")
	if err != nil {
		f.Fatal(err)
	}
	seg := []byte(segMagic)
	for _, r := range recs {
		seg = appendFrame(seg, r)
	}
	return seg
}

// FuzzScanSegment: no byte string makes the segment reader or the replay panic.
func FuzzScanSegment(f *testing.F) {
	seg := realSegment(f)
	f.Add(seg)
	f.Add(seg[:len(seg)-7])
	f.Add([]byte(segMagic))
	f.Add([]byte("GRAPH"))
	c, err := team(nil, nil).Compile()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sr, err := scanSegment(data, "fuzz.seg")
		if err != nil {
			return
		}
		if sr.valid > len(data) {
			t.Fatalf("valid prefix %d beyond %d bytes", sr.valid, len(data))
		}
		if len(sr.recs) > 0 {
			_, _ = c.replay("fuzz", sr.recs, -1)
		}
	})
}

// FuzzDecodePayload: corrupted payloads give errors, never panics, and what
// decodes encodes back to a payload that decodes the same.
func FuzzDecodePayload(f *testing.F) {
	seg := realSegment(f)
	sr, err := scanSegment(seg, "seed")
	if err != nil {
		f.Fatal(err)
	}
	for _, r := range sr.recs {
		f.Add(byte(r.Kind), r.Data)
	}
	c, err := team(nil, nil).Compile()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, kind byte, data []byte) {
		e, err := decodePayload(RecordKind(kind), 1, data)
		if err != nil {
			return
		}
		// Field values that are not the JSON of their field are errors too.
		_, _ = c.replay("fuzz", []Record{{Kind: RecordSnapshot, Data: data}}, -1)
		again, err := decodePayload(RecordKind(kind), 1, encodePayload(nil, e))
		if err != nil {
			t.Fatalf("re-encoded payload does not decode: %v", err)
		}
		if len(again.changes) != len(e.changes) || again.status != e.status || len(again.next) != len(e.next) {
			t.Fatalf("round trip changed the entry: %+v vs %+v", again, e)
		}
	})
}
