package config

// Speed is the speed block's setting (internal/speed, docs/research/speed.md).
type Speed struct {
	// RefuseSlowPath refuses to publish a file that prefills one token a call (its
	// structure says so, or it prefilled no faster than speed.OneTokenMargin times its
	// decode): such a file answers a long prompt as slowly as it would write it. False
	// records the finding in the report, config.json and the card and publishes the file.
	RefuseSlowPath bool `yaml:"refuse_slow_path"`
}
