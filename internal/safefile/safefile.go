// Package safefile opens the files lemmings reads from a work tree, a
// repository or a folder a sandboxed command could write: only regular
// files, never waiting on one. A model's gate can leave a FIFO where a
// source file was (mkfifo textstats.go): a plain open(2) of it blocks
// until a writer comes, which is never, and no signal or halt can end the
// system call. Here a file is opened with O_NONBLOCK (a FIFO or a device
// opens at once), its type checked on the open descriptor (fstat, no race
// with a rename), and anything but a regular file refused with a
// *NotRegularError naming it. A symbolic link is not followed out of the
// folder read (ReadFileIn, ReadFileUnder: os.Root's rules) or at all as
// the last component of a plain path (ReadFile: O_NOFOLLOW).
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular matches every *NotRegularError.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError: the file is a FIFO, a socket, a device, a directory or
// a symbolic link where a regular file was to be read.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, Kind(e.Mode))
}

// Is makes errors.Is(err, ErrNotRegular) hold.
func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// Kind names the type of a file mode for a message: "a FIFO", "a socket",
// "a device", "a directory", "a symbolic link", "a regular file".
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file"
}

// Special reports whether a file of mode m is one lemmings never opens
// (neither regular, nor a directory, nor a symbolic link): a FIFO, a
// socket, a device.
func Special(m fs.FileMode) bool {
	return m&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice|fs.ModeCharDevice|fs.ModeIrregular) != 0
}

// Open opens path for reading if it is a regular file. The last component
// is not followed when it is a symbolic link (the error names it as one).
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags|noFollow, 0)
	if err != nil {
		// A link (ELOOP), a socket (ENXIO): say what the file is.
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, nil, &NotRegularError{Path: path, Mode: fi.Mode()}
		}
		return nil, nil, err
	}
	return checked(f, path)
}

// OpenIn opens name in root for reading if it is a regular file; a link
// inside root is followed as os.Root follows it (never out of root).
func OpenIn(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|openFlags, 0)
	if err != nil {
		// A socket (ENXIO): say what the file is.
		if fi, serr := root.Stat(name); serr == nil && !fi.Mode().IsRegular() {
			return nil, nil, &NotRegularError{Path: name, Mode: fi.Mode()}
		}
		return nil, nil, err
	}
	return checked(f, name)
}

// checked keeps f only when it is a regular file.
func checked(f *os.File, shown string) (*os.File, fs.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: shown, Mode: fi.Mode()}
	}
	return f, fi, nil
}

// ReadFile reads the regular file at path (Open's rules).
func ReadFile(path string) ([]byte, error) {
	f, fi, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, fi)
}

// ReadFileIn reads the regular file name in root (OpenIn's rules).
func ReadFileIn(root *os.Root, name string) ([]byte, error) {
	f, fi, err := OpenIn(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f, fi)
}

// ReadFileUnder reads the regular file rel inside the folder dir, without
// following a link out of dir.
func ReadFileUnder(dir, rel string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	data, err := ReadFileIn(root, rel)
	var nr *NotRegularError
	if errors.As(err, &nr) {
		nr.Path = rel
	}
	return data, err
}

// Limited reads at most limit bytes of the regular file at path; a larger
// file is an error naming its size.
func Limited(path string, limit int64) ([]byte, error) {
	f, fi, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, over the %d bytes read", path, fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		err = fmt.Errorf("%s is over the %d bytes read", path, limit)
	}
	return data, err
}

func readAll(f *os.File, fi fs.FileInfo) ([]byte, error) {
	size := fi.Size()
	if size <= 0 || size > 1<<30 {
		return io.ReadAll(f)
	}
	data := make([]byte, 0, size+1)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return data, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}
