package helperclient

import (
	"regexp"
	"strings"
)

// forwardedValue lists the variables a client passes on to its commands by default (locale,
// terminal and time zone), each with the values it passes: names, never paths, since a
// helper refuses the whole request for a path-like locale or zone.
var forwardedValue = map[string]*regexp.Regexp{
	"LANG":      regexp.MustCompile(`^[A-Za-z0-9_.@+-]+$`),
	"LANGUAGE":  regexp.MustCompile(`^[A-Za-z0-9_.@+:-]+$`),
	"TERM":      regexp.MustCompile(`^[A-Za-z0-9_.+-]+$`),
	"COLORTERM": regexp.MustCompile(`^[A-Za-z0-9_.+-]+$`),
	"NO_COLOR":  regexp.MustCompile(`^.{0,16}$`),
	"TZ":        regexp.MustCompile(`^[A-Za-z_+-][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$`),
}

var localeValue = regexp.MustCompile(`^[A-Za-z0-9_.@+-]+$`)

// ForwardedEnv returns the locale, terminal and time-zone variables of environ ("NAME=value"
// entries, as os.Environ returns) that a client passes to its commands: LANG, LANGUAGE,
// LC_*, TERM, COLORTERM, NO_COLOR and TZ, each only with a plain name as its value.
func ForwardedEnv(environ []string) map[string]string {
	out := map[string]string{}
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if re, ok := forwardedValue[name]; ok && re.MatchString(val) {
			out[name] = val
		} else if strings.HasPrefix(name, "LC_") && localeValue.MatchString(val) && localeValue.MatchString(name) {
			out[name] = val
		}
	}
	return out
}
