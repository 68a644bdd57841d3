package graph

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// A segment file is segMagic followed by frames:
//
//	u32 bodyLen | u32 lenCheck | u32 crc32c(body) | body | u32 bodyLen
//	body = kind byte | uvarint step | payload
//
// lenCheck guards the length itself, so a damaged length is reported as
// corruption instead of being mistaken for a record cut short by a crash. The
// trailing length lets a reader find the last record from the end of the file.
const (
	segMagic     = "GRAPHCK1"
	frameHeader  = 12
	frameTrailer = 4
	frameOver    = frameHeader + frameTrailer
	maxBody      = 1 << 30
	lenCheckSalt = 0x6c656d6d // "lemm"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func lenCheck(n uint32) uint32 {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], n)
	return crc32.Checksum(b[:], castagnoli) ^ lenCheckSalt
}

// appendFrame appends rec framed for a segment file.
func appendFrame(buf []byte, rec Record) []byte {
	start := len(buf)
	buf = append(buf, make([]byte, frameHeader)...)
	buf = append(buf, byte(rec.Kind))
	buf = binary.AppendUvarint(buf, uint64(rec.Step))
	buf = append(buf, rec.Data...)
	body := buf[start+frameHeader:]
	n := uint32(len(body))
	binary.LittleEndian.PutUint32(buf[start:], n)
	binary.LittleEndian.PutUint32(buf[start+4:], lenCheck(n))
	binary.LittleEndian.PutUint32(buf[start+8:], crc32.Checksum(body, castagnoli))
	return binary.LittleEndian.AppendUint32(buf, n)
}

// frameResult is what parsing one frame found.
type frameResult int

const (
	frameOK      frameResult = iota
	frameTorn                // the data ends inside the frame: an append cut short
	frameCorrupt             // the frame's checks fail
)

// parseFrame reads the frame at the start of b; n is its total length.
func parseFrame(b []byte) (rec Record, n int, res frameResult, why string) {
	if len(b) < frameHeader {
		return rec, 0, frameTorn, ""
	}
	bodyLen := binary.LittleEndian.Uint32(b)
	if binary.LittleEndian.Uint32(b[4:]) != lenCheck(bodyLen) {
		return rec, 0, frameCorrupt, "bad length check"
	}
	if bodyLen < 2 || bodyLen > maxBody {
		return rec, 0, frameCorrupt, fmt.Sprintf("impossible record length %d", bodyLen)
	}
	n = frameOver + int(bodyLen)
	if len(b) < n {
		return rec, 0, frameTorn, ""
	}
	body := b[frameHeader : frameHeader+int(bodyLen)]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[8:]) {
		return rec, 0, frameCorrupt, "checksum mismatch"
	}
	if binary.LittleEndian.Uint32(b[frameHeader+int(bodyLen):]) != bodyLen {
		return rec, 0, frameCorrupt, "bad trailing length"
	}
	kind := RecordKind(body[0])
	if !kind.valid() {
		return rec, 0, frameCorrupt, fmt.Sprintf("unknown record kind %d", kind)
	}
	step, sn := binary.Uvarint(body[1:])
	if sn <= 0 || step > 1<<62 {
		return rec, 0, frameCorrupt, "bad step number"
	}
	return Record{Kind: kind, Step: int(step), Data: body[1+sn:]}, n, frameOK, ""
}

// scanResult is a parsed segment.
type scanResult struct {
	recs  []Record
	valid int  // length of the valid prefix
	torn  bool // the data ends inside a frame (or inside the segment header)
}

// scanSegment parses a whole segment. A frame cut short at the very end is
// reported as torn; any other damage is an error naming the file and offset.
func scanSegment(data []byte, name string) (scanResult, error) {
	var sr scanResult
	if len(data) < len(segMagic) {
		if string(data) == segMagic[:len(data)] {
			sr.torn = true
			return sr, nil
		}
		return sr, fmt.Errorf("%w: %s: bad segment header", ErrCorrupt, name)
	}
	if string(data[:len(segMagic)]) != segMagic {
		return sr, fmt.Errorf("%w: %s: not a checkpoint segment (bad header)", ErrCorrupt, name)
	}
	off := len(segMagic)
	for off < len(data) {
		rec, n, res, why := parseFrame(data[off:])
		switch res {
		case frameTorn:
			sr.valid, sr.torn = off, true
			return sr, nil
		case frameCorrupt:
			return sr, fmt.Errorf("%w: %s at offset %d: %s", ErrCorrupt, name, off, why)
		}
		if len(sr.recs) == 0 && rec.Kind != RecordSnapshot {
			return sr, fmt.Errorf("%w: %s at offset %d: segment does not start with a snapshot", ErrCorrupt, name, off)
		}
		sr.recs = append(sr.recs, rec)
		off += n
	}
	sr.valid = off
	return sr, nil
}
