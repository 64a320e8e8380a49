// Package option is how a library refuses a request by the option to fix. A refusal names
// options by their Options field ("Window", "Out"), never by a command line's spelling, so
// each front end words them its own way: the CLI as its flags (--context, --out), an action
// as its inputs. export, solve and audit refuse through it.
package option

import (
	"errors"
	"fmt"
	"strings"
)

// Field is an option of a request, named as its Options field.
type Field string

// Refusal is a request refused before any work: Field is the option to fix. Error words
// options as the Options fields, Sentence as the caller names them.
type Refusal struct {
	Field Field
	// format and args are the sentence; args that are Fields are worded by Sentence.
	format string
	args   []any
}

// Refuse is a refusal about field; args that are Fields are option names.
func Refuse(field Field, format string, args ...any) *Refusal {
	return &Refusal{Field: field, format: format, args: args}
}

func (e *Refusal) Error() string { return e.Sentence(func(f Field) string { return string(f) }) }

// Sentence is the refusal with every option it names worded by name: the CLI passes its
// flag names, so that the sentence it prints points at what the user typed.
func (e *Refusal) Sentence(name func(Field) string) string {
	args := make([]any, len(e.args))
	for i, a := range e.args {
		if f, ok := a.(Field); ok {
			a = name(f)
		}
		args[i] = a
	}
	return fmt.Sprintf(e.format, args...)
}

// Unwrap is the error the refusal words, if any (a configuration's own, say).
func (e *Refusal) Unwrap() error {
	for _, a := range e.args {
		if err, ok := a.(error); ok {
			return err
		}
	}
	return nil
}

// Reword is err's sentence with the refusal in it worded with names, keeping any context
// the refusal was wrapped in; a field names lacks keeps the library's name rather than
// vanishing from the sentence. ok says err holds a refusal at all.
func Reword(err error, names map[Field]string) (sentence string, ok bool) {
	var r *Refusal
	if !errors.As(err, &r) {
		return "", false
	}
	return strings.Replace(err.Error(), r.Error(), r.Sentence(func(f Field) string {
		if n, ok := names[f]; ok {
			return n
		}
		return string(f)
	}), 1), true
}
