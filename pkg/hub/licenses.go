package hub

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Licenses are the license ids the Hub accepts in a model card's `license` field, as the
// official client (@huggingface/hub 2.17.5, src/types/public.ts, type License) lists them.
// A source card's license reaches our README's front matter, which the Hub validates on
// commit: an id outside this list would fail the commit after the repo was created.
var Licenses = map[string]bool{}

func init() {
	for _, id := range strings.Fields(licenseList) {
		Licenses[id] = true
	}
}

const licenseList = `
apache-2.0 mit openrail bigscience-openrail-m creativeml-openrail-m
bigscience-bloom-rail-1.0 bigcode-openrail-m afl-3.0 artistic-2.0 bsl-1.0 bsd
bsd-2-clause bsd-3-clause bsd-3-clause-clear c-uda cc cc0-1.0 cc-by-2.0 cc-by-2.5
cc-by-3.0 cc-by-4.0 cc-by-sa-3.0 cc-by-sa-4.0 cc-by-nc-2.0 cc-by-nc-3.0 cc-by-nc-4.0
cc-by-nd-4.0 cc-by-nc-nd-3.0 cc-by-nc-nd-4.0 cc-by-nc-sa-2.0 cc-by-nc-sa-3.0
cc-by-nc-sa-4.0 cdla-sharing-1.0 cdla-permissive-1.0 cdla-permissive-2.0 wtfpl ecl-2.0
epl-1.0 epl-2.0 etalab-2.0 eupl-1.1 agpl-3.0 gfdl gpl gpl-2.0 gpl-3.0 lgpl lgpl-2.1
lgpl-3.0 isc lppl-1.3c ms-pl mpl-2.0 odc-by odbl openrail++ osl-3.0 postgresql ofl-1.1
ncsa unlicense zlib pddl lgpl-lr deepfloyd-if-license llama2 llama3 llama3.1 llama3.2
llama3.3 gemma apple-ascl apple-amlr unknown other
`

var (
	licenseName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)
	linkFile    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)
	// urlChars keeps a link a plain YAML scalar: no space, quote, bracket or brace.
	urlChars = regexp.MustCompile(`^https://[A-Za-z0-9._~:/?#@!$&()*+,;=%-]{1,400}$`)
)

// CheckLicense refuses license fields that the Hub would reject or that would change the
// meaning of the card's YAML front matter: an id outside Licenses, a license_name that is
// not a plain name, a license_link that is neither a file at the repo root nor an https URL.
// The fields come from the source model's card, which anyone can write.
func CheckLicense(license, name, link string) error {
	if license != "" && !Licenses[license] {
		return fmt.Errorf("license %q is not a Hub license id (apache-2.0, mit, llama3.2, other, ...)", license)
	}
	if name != "" && !licenseName.MatchString(name) {
		return fmt.Errorf("license_name %q is not a plain name (letters, digits, '.', '_', '-')", name)
	}
	if link == "" || linkFile.MatchString(link) && link != "." && link != ".." {
		return nil
	}
	u, err := url.Parse(link)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || !urlChars.MatchString(link) {
		return fmt.Errorf("license_link %q is neither a file at the repo root nor an https URL", link)
	}
	return nil
}
