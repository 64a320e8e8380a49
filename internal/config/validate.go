package config

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// fieldError names the key (as a dotted path) and the line it is on.
type fieldError struct {
	line int
	path string
	msg  string
}

func (e fieldError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("line %d: %s: %s", e.line, e.path, e.msg)
	}
	return fmt.Sprintf("%s: %s", e.path, e.msg)
}

// validator collects the first problem; checks read as a list of rules.
type validator struct {
	root *yaml.Node
	err  error
}

func (v *validator) check(ok bool, path, format string, args ...any) {
	if v.err != nil || ok {
		return
	}
	v.err = fieldError{line: lineOf(v.root, path), path: path, msg: fmt.Sprintf(format, args...)}
}

// lineOf finds the line of a dotted path ("export.xnnpack.group_size", "runners.2.label").
// It returns the line of the deepest node found, so a missing key points at its parent.
func lineOf(root *yaml.Node, path string) int {
	n := root
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := 0
	for _, part := range strings.Split(path, ".") {
		if n == nil {
			break
		}
		line = n.Line
		switch n.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == part {
					line = n.Content[i].Line
					next = n.Content[i+1]
				}
			}
			n = next
		case yaml.SequenceNode:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		default:
			return line
		}
	}
	if n != nil && n.Line > 0 {
		return n.Line
	}
	return line
}

var (
	orgName     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,95}$`)
	familyToken = regexp.MustCompile(`^[a-z0-9]+$`)
	runnerLabel = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	ghRepo      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100}$`)
	gitRef      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,200}$`)
	embQuant    = regexp.MustCompile(`^(4|8),\d+$`)
	mtkPrec     = map[string]bool{"A16W16": true, "A16W8": true, "A16W4": true, "A8W8": true, "A8W4": true}
)

// MaxJobMinutes is GitHub Actions' own limit on one job's run time (6 hours): a job limit
// above it would let plan dispatch a window that GitHub cancels before it ends.
const MaxJobMinutes = 360

// QModes are the qmodes the XNNPACK and Vulkan recipes know, in the order messages list
// them. This is the one list: pipeline.yaml's qmode and export's override are checked
// against it, and sizing has a size model for each (its tests hold it to this list), so
// a qmode that one accepts the others can size.
func QModes() []string { return []string{"8da4w", "fp32"} }

// KnownQMode reports whether qmode is one of QModes.
func KnownQMode(qmode string) bool { return slices.Contains(QModes(), qmode) }

func (c *Config) validate(root *yaml.Node) error {
	v := &validator{root: root}
	v.check(ghRepo.MatchString(c.GitHub.Repository), "github.repository", "%q is not a GitHub owner/name", c.GitHub.Repository)
	v.check(gitRef.MatchString(c.GitHub.CallerRef), "github.caller_ref", "%q is not a branch, tag or commit name", c.GitHub.CallerRef)
	v.check(orgName.MatchString(c.Hub.Org), "hub.org", "%q is not a Hugging Face org name", c.Hub.Org)
	v.check(c.Hub.RepoSuffix == "" || runnerLabel.MatchString(strings.TrimPrefix(c.Hub.RepoSuffix, "-")), "hub.repo_suffix", "%q cannot end a repo name", c.Hub.RepoSuffix)
	v.check(runnerLabel.MatchString(c.Hub.CatalogRepo), "hub.catalog_repo", "%q is not a Hub repo name", c.Hub.CatalogRepo)
	v.check(len(c.Hub.Tags) > 0, "hub.tags", "at least one tag is needed (the openweights Android app, which loads these files, finds models by the executorch tag)")
	c.validateWatch(v)
	c.validateExport(v)
	c.validateRunners(v)
	c.validateGate(v)
	c.validateCalibration(v)
	return v.err
}

func (c *Config) validateWatch(v *validator) {
	w := c.Watch
	v.check(w.Schedule == "" || len(strings.Fields(w.Schedule)) == 5, "watch.schedule", "%q is not a cron of five fields (minute hour day month weekday)", w.Schedule)
	v.check(len(w.OrgFamilies) > 0, "watch.org_families", "no org is watched")
	orgs := make([]string, 0, len(w.OrgFamilies))
	for org := range w.OrgFamilies {
		orgs = append(orgs, org)
	}
	sort.Strings(orgs)
	for _, org := range orgs {
		p := "watch.org_families." + org
		v.check(orgName.MatchString(org), p, "%q is not a Hugging Face org name", org)
		v.check(len(w.OrgFamilies[org]) > 0, p, "lists no family")
		for _, f := range w.OrgFamilies[org] {
			v.check(familyToken.MatchString(f), p, "family token %q must be lower-case letters and digits", f)
		}
	}
	v.check(w.LimitPerOrg > 0, "watch.limit_per_org", "must be positive, not %d", w.LimitPerOrg)
	v.check(w.MaxDispatchPerRun > 0, "watch.max_dispatch_per_run", "must be positive, not %d", w.MaxDispatchPerRun)
	v.check(w.PipelineTag != "", "watch.pipeline_tag", "is empty")
	v.check(w.MaxNominalBillions > 0, "watch.max_nominal_billions", "must be positive")
	v.check(w.MaxParams > 0, "watch.max_params", "must be positive")
	for i, x := range w.NameExclude {
		v.check(x != "" && x == strings.ToLower(x), fmt.Sprintf("watch.name_exclude.%d", i), "%q must be a non-empty lower-case marker", x)
	}
}

func (c *Config) validateRunners(v *validator) {
	names := map[string]bool{}
	for i, r := range c.Runners {
		p := fmt.Sprintf("runners.%d", i)
		v.check(runnerLabel.MatchString(r.Name), p+".name", "%q is not a runner name", r.Name)
		v.check(!names[r.Name], p+".name", "runner %q is defined twice", r.Name)
		names[r.Name] = true
		v.check(runnerLabel.MatchString(r.Label), p+".label", "%q is not a runner label", r.Label)
		v.check(r.Arch == "arm64" || r.Arch == "x64", p+".arch", "%q is not arm64 or x64", r.Arch)
		v.check(r.VCPU > 0, p+".vcpu", "must be positive")
		v.check(r.RAMBytes > c.Export.HostReserveBytes, p+".ram_bytes", "%d does not exceed the host reserve", r.RAMBytes)
		v.check(r.SwapGiB >= 0, p+".swap_gib", "cannot be negative")
		v.check(r.DiskBytes > 0, p+".disk_bytes", "must be positive")
	}
	chips := make([]string, 0, len(c.Chips))
	for name := range c.Chips {
		chips = append(chips, name)
	}
	sort.Strings(chips)
	for _, name := range chips {
		ch := c.Chips[name]
		p := "chips." + name
		checkChipBackend(v, p, ch)
		v.check(ch.Name != "", p+".name", "is empty")
		checkChipPlatform(v, p, ch)
	}
}
