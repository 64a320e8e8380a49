package cli

import (
	"flag"
	"fmt"
	"regexp"
	"strings"
)

// The flag package's own error forms, reworded by flagMistake.
var (
	undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -+(.+)$`)
	badValue      = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-+([^:]+): (.+)$`)
	needsArgument = regexp.MustCompile(`^flag needs an argument: -+(.+)$`)
)

// flagMistake words a flag parse error as one sentence naming the flag and what it takes,
// instead of the flag package's message followed by the whole usage page.
func flagMistake(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if m := undefinedFlag.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("there is no flag --%s; the flags are %s", m[1], flagNames(fs))
	}
	if m := needsArgument.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("--%s needs a value: %s", m[1], usageOf(fs, m[1]))
	}
	if m := badValue.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("--%s %q is not %s: %s", m[2], m[1], kindOf(fs, m[2]), usageOf(fs, m[2]))
	}
	return msg
}

// flagNames lists the command's flags as they are typed.
func flagNames(fs *flag.FlagSet) string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
	return strings.Join(names, ", ")
}

// usageOf is the flag's help line, which names what it takes.
func usageOf(fs *flag.FlagSet, name string) string {
	if f := fs.Lookup(name); f != nil {
		return f.Usage
	}
	return "see --help"
}

// kindOf names what a flag's value must be.
func kindOf(fs *flag.FlagSet, name string) string {
	f := fs.Lookup(name)
	if f == nil {
		return "a valid value"
	}
	if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
		return "true or false"
	}
	switch fmt.Sprintf("%T", f.Value) {
	case "*flag.intValue", "*flag.int64Value", "*flag.uintValue", "*flag.uint64Value":
		return "a whole number"
	case "*flag.float64Value":
		return "a number"
	case "*flag.durationValue":
		return "a duration such as 90s"
	}
	return "a valid value"
}
