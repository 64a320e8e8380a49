// Package fileutil owns the file operations several packages share: hashing a file,
// putting a file in place, and wording a failed file operation (reading a file, decoding
// the JSON it holds) as one sentence. It imports
// nothing from this module, so the Hub client, the report and the export can all use it.
package fileutil

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Error words a failed file operation as one sentence: "cannot create /out/xnnpack:
// permission denied". The *fs.PathError underneath already names the path and Go's own
// operation ("mkdir /out/xnnpack: …"); quoting it whole would say the path twice.
// errors.Is still sees the cause (fs.ErrNotExist, fs.ErrPermission).
func Error(op, path string, err error) error {
	return &fileError{op: op, path: path, err: err}
}

type fileError struct {
	op, path string
	err      error
}

func (e *fileError) Error() string {
	return fmt.Sprintf("cannot %s %s: %s", e.op, e.path, Reason(e.err))
}

func (e *fileError) Unwrap() error { return e.err }

// Reason is what went wrong in a file operation, without the operation and path that
// *fs.PathError, *os.LinkError and *os.SyscallError put in front of it; a JSON decoding
// error is worded too, without encoding/json's "json: " and Go type names.
func Reason(err error) string {
	var pe *fs.PathError
	var le *os.LinkError
	var se *os.SyscallError
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("not valid JSON (%s, at byte %d)", syn.Error(), syn.Offset)
	case errors.As(err, &typ):
		return typeReason(typ)
	case errors.As(err, &pe):
		return pe.Err.Error()
	case errors.As(err, &le):
		return le.Err.Error()
	case errors.As(err, &se):
		return se.Err.Error()
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// typeReason says which field holds a JSON value of the wrong kind: "field
// \"rows.q.token\" is a string, not a number".
func typeReason(e *json.UnmarshalTypeError) string {
	want := jsonKind(e.Type.Kind().String())
	what := "the JSON value"
	if e.Field != "" {
		what = fmt.Sprintf("field %q", e.Field)
	}
	return fmt.Sprintf("%s is %s, not %s", what, article(e.Value), want)
}

// jsonKind names a Go kind as the JSON value it decodes from.
func jsonKind(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"), strings.HasPrefix(kind, "float"):
		return "a number"
	case kind == "bool":
		return "true or false"
	case kind == "slice", kind == "array":
		return "a list"
	case kind == "map", kind == "struct", kind == "interface":
		return "an object"
	}
	return "a " + kind
}

// article puts "a" or "an" before a JSON value's kind as encoding/json names it ("string",
// "number", "number -1", "array", "object", "bool").
func article(v string) string {
	switch {
	case v == "array":
		return "a list"
	case v == "bool":
		return "true or false"
	case strings.HasPrefix(v, "number "):
		return "the number " + strings.TrimPrefix(v, "number ")
	case strings.HasPrefix(v, "o"), strings.HasPrefix(v, "a"):
		return "an " + v
	}
	return "a " + v
}
