package backend

// ConfigLabel is the name b's folders' config.json gives it in "backend".
func (b *Backend) ConfigLabel() string {
	if b.ConfigName != "" {
		return b.ConfigName
	}
	return b.Name
}

// ByConfigName is the backend a config.json's "backend" names: its ConfigName, or its Name
// (config.json files written before ConfigName existed say "mediatek"); nil for none.
func ByConfigName(name string) *Backend {
	if b := ByName(name); b != nil {
		return b
	}
	for _, b := range registry {
		if b.ConfigName != "" && b.ConfigName == name {
			return b
		}
	}
	return nil
}
