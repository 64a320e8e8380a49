package model

// FamilyKeys lists the family keys of familyArchitectures, in match order, so that the
// tests can hold them to internal/family's table.
func FamilyKeys() []string {
	out := make([]string, 0, len(familyArchitectures))
	for _, fa := range familyArchitectures {
		out = append(out, fa.family)
	}
	return out
}
