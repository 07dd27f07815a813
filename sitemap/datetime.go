package sitemap

import (
	"strings"
	"time"
)

// parseTime parses a lastmod (or feed date) value: a W3C datetime with the
// tolerated deviations, else an RFC 822 / RFC 1123 date. The result is in
// UTC; it is zero when the value is not recognized or out of range.
func parseTime(b []byte) time.Time {
	b = trimSpace(b)
	if t, ok := parseW3C(b); ok {
		return t
	}
	if t, ok := parseRFC822(string(b)); ok {
		return t
	}
	return time.Time{}
}

// digits parses b as an unsigned decimal number of exactly len(b) digits.
func digits(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// parseW3C parses YYYY[-MM[-DD[Thh:mm[:ss[.s+]][TZD]]]] where T may also be
// 't' or a blank and TZD is Z, z, ±hh:mm, ±hhmm or ±hh, optionally after one
// blank, or absent (UTC).
func parseW3C(b []byte) (time.Time, bool) {
	if len(b) < 4 {
		return time.Time{}, false
	}
	year, ok := digits(b[:4])
	if !ok || year == 0 {
		return time.Time{}, false
	}
	month, day := 1, 1
	rest := b[4:]
	if len(rest) > 0 {
		if len(rest) < 3 || rest[0] != '-' {
			return time.Time{}, false
		}
		if month, ok = digits(rest[1:3]); !ok || month < 1 || month > 12 {
			return time.Time{}, false
		}
		rest = rest[3:]
		if len(rest) > 0 {
			if len(rest) < 3 || rest[0] != '-' {
				return time.Time{}, false
			}
			if day, ok = digits(rest[1:3]); !ok || day < 1 || day > daysIn(year, month) {
				return time.Time{}, false
			}
			rest = rest[3:]
		} else {
			return time.Date(year, time.Month(month), 1, 0, 0, 0, 0, time.UTC), true
		}
	}
	if len(rest) == 0 {
		return time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC), true
	}
	if len(b) < 10 { // a time needs a full date
		return time.Time{}, false
	}
	if c := rest[0]; c != 'T' && c != 't' && c != ' ' {
		return time.Time{}, false
	}
	rest = rest[1:]
	if len(rest) < 5 || rest[2] != ':' {
		return time.Time{}, false
	}
	hour, ok1 := digits(rest[0:2])
	minute, ok2 := digits(rest[3:5])
	if !ok1 || !ok2 || hour > 23 || minute > 59 {
		return time.Time{}, false
	}
	rest = rest[5:]
	sec, nsec := 0, 0
	if len(rest) >= 3 && rest[0] == ':' {
		if sec, ok = digits(rest[1:3]); !ok || sec > 59 {
			return time.Time{}, false
		}
		rest = rest[3:]
		if len(rest) > 0 && (rest[0] == '.' || rest[0] == ',') {
			i := 1
			scale := 100_000_000
			for i < len(rest) && '0' <= rest[i] && rest[i] <= '9' {
				nsec += int(rest[i]-'0') * scale
				scale /= 10
				i++
			}
			if i == 1 {
				return time.Time{}, false
			}
			rest = rest[i:]
		}
	}
	offset, ok := parseOffset(rest)
	if !ok {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	return t.Add(-offset), true
}

// parseOffset parses a time zone designator; empty means UTC.
func parseOffset(b []byte) (time.Duration, bool) {
	if len(b) > 1 && b[0] == ' ' {
		b = b[1:]
	}
	switch {
	case len(b) == 0, string(b) == "Z", string(b) == "z",
		strings.EqualFold(string(b), "UTC"), strings.EqualFold(string(b), "GMT"):
		return 0, true
	case b[0] != '+' && b[0] != '-':
		return 0, false
	}
	sign := time.Duration(1)
	if b[0] == '-' {
		sign = -1
	}
	b = b[1:]
	var hh, mm int
	var ok bool
	switch {
	case len(b) == 2: // ±hh
		hh, ok = digits(b)
	case len(b) == 4: // ±hhmm
		hh, ok = digits(b[:2])
		if ok {
			mm, ok = digits(b[2:])
		}
	case len(b) == 5 && b[2] == ':': // ±hh:mm
		hh, ok = digits(b[:2])
		if ok {
			mm, ok = digits(b[3:])
		}
	}
	if !ok || hh > 23 || mm > 59 {
		return 0, false
	}
	return sign * (time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute), true
}

// rfc822Zones are the zone names RFC 822 defines, with "UTC".
var rfc822Zones = map[string]time.Duration{
	"UT": 0, "UTC": 0, "GMT": 0, "Z": 0,
	"EST": -5 * time.Hour, "EDT": -4 * time.Hour,
	"CST": -6 * time.Hour, "CDT": -5 * time.Hour,
	"MST": -7 * time.Hour, "MDT": -6 * time.Hour,
	"PST": -8 * time.Hour, "PDT": -7 * time.Hour,
}

var monthNames = [...]string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}

// parseRFC822 parses "[Mon, ]02 Jan 2006 15:04[:05] [zone]" where the year
// may have two digits, the month may be spelled out and the zone is a
// numeric offset, an RFC 822 name, or absent (UTC).
func parseRFC822(s string) (time.Time, bool) {
	if i := strings.IndexByte(s, ','); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 4 || len(f) > 5 {
		return time.Time{}, false
	}
	day, ok := digits([]byte(f[0]))
	if !ok || len(f[0]) > 2 {
		return time.Time{}, false
	}
	month := 0
	if len(f[1]) >= 3 {
		name := strings.ToLower(f[1])
		for i, m := range monthNames {
			if strings.HasPrefix(name, m) {
				month = i + 1
				break
			}
		}
	}
	year, ok := digits([]byte(f[2]))
	switch {
	case !ok || month == 0:
		return time.Time{}, false
	case len(f[2]) == 2 && year < 50:
		year += 2000
	case len(f[2]) == 2:
		year += 1900
	case len(f[2]) != 4 || year == 0:
		return time.Time{}, false
	}
	if day < 1 || day > daysIn(year, month) {
		return time.Time{}, false
	}
	clock := f[3]
	if len(clock) != 5 && len(clock) != 8 || clock[2] != ':' {
		return time.Time{}, false
	}
	hour, ok1 := digits([]byte(clock[0:2]))
	minute, ok2 := digits([]byte(clock[3:5]))
	sec, ok3 := 0, true
	if len(clock) == 8 {
		if clock[5] != ':' {
			return time.Time{}, false
		}
		sec, ok3 = digits([]byte(clock[6:8]))
	}
	if !ok1 || !ok2 || !ok3 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	var offset time.Duration
	if len(f) == 5 {
		var known bool
		if offset, known = rfc822Zones[strings.ToUpper(f[4])]; !known {
			if offset, ok = parseOffset([]byte(f[4])); !ok {
				return time.Time{}, false
			}
		}
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC)
	return t.Add(-offset), true
}
