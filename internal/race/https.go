package race

import (
	"strconv"
	"strings"
	"time"
)

// HTTPSConfig is a race's Happy Eyeballs v3 part (MachineConfig.HTTPS):
// what the caller asked for, and the machine's state of it. A fresh one
// per race.
type HTTPSConfig struct {
	// Name is the query name: the host for port 443, "_PORT._https.HOST"
	// otherwise (RFC 9460 §9.1), fully qualified.
	Name string
	// ALPN is the caller's protocols; a service that offers none of them
	// over TCP is skipped (so an h3-only record is never used).
	ALPN []string
	// ECH: the caller's TLS will use ECH. No attempt starts before the
	// HTTPS answer is final (ECHWait bounds the wait once the addresses
	// are in; 0: until the answer or the resolv_timeout), and when every
	// usable service carries an ECH configuration the origin's own
	// addresses are not used (RFC 9848: no fallback without ECH).
	ECH     bool
	ECHWait time.Duration
	// Seed seeds the shuffle of services of equal priority (0: a random
	// seed); tests fix it.
	Seed uint64
	// AliasLimit bounds the AliasMode chain (0: DefaultAliasLimit).
	AliasLimit int

	svc httpsState
}

// DefaultAliasLimit is how many AliasMode records a chain may follow.
const DefaultAliasLimit = 8

// HTTPSState says how the HTTPS query ended, as the command line and the
// bindings print it.
type HTTPSState uint8

const (
	HTTPSPending    HTTPSState = iota // not final yet
	HTTPSAnswered                     // usable services (possibly none after the rules)
	HTTPSNoData                       // the name has no HTTPS records
	HTTPSNXDomain                     // the name does not exist
	HTTPSFailed                       // SERVFAIL, refused, a network error
	HTTPSTimeout                      // no answer in time (the resolver's, or resolv_timeout)
	HTTPSMalformed                    // records came, and none could be decoded
	HTTPSAliasLimit                   // the AliasMode chain was longer than AliasLimit
)

var httpsStateNames = [...]string{
	HTTPSPending:    "pending",
	HTTPSAnswered:   "answered",
	HTTPSNoData:     "nodata",
	HTTPSNXDomain:   "nxdomain",
	HTTPSFailed:     "failed",
	HTTPSTimeout:    "timeout",
	HTTPSMalformed:  "malformed",
	HTTPSAliasLimit: "alias-limit",
}

func (s HTTPSState) String() string {
	if int(s) < len(httpsStateNames) {
		return httpsStateNames[s]
	}
	return "unknown"
}

// Service is one usable service of a race: a ServiceMode record that
// passed the rules, with its target made effective.
type Service struct {
	Priority uint16
	// Target is the effective target name, fully qualified.
	Target string
	// Port is the record's port (0: the origin's).
	Port uint16
	// ALPN is the service's protocol set: its alpn list, plus http/1.1
	// unless no-default-alpn. Information for the caller, whose TLS still
	// offers its own list.
	ALPN []string
	// ECH is the service's ECHConfigList (nil: none), ready for
	// SSL_set1_ech_config_list.
	ECH []byte
}

// HTTPSOutcome is what the HTTPS query gave the race, for its outcome
// (Result.HTTPS, Error.HTTPS).
type HTTPSOutcome struct {
	State HTTPSState
	// Services are the usable services, in the order they were tried
	// (priority, equal priorities shuffled).
	Services []Service
	// Winner is the index in Services of the winner's service, -1 when
	// the winner came from the origin's A/AAAA (or the race failed).
	Winner int
}

// WinnerService is the winner's service, nil when it came from the
// origin's own addresses.
func (o *HTTPSOutcome) WinnerService() *Service {
	if o == nil || o.Winner < 0 || o.Winner >= len(o.Services) {
		return nil
	}
	return &o.Services[o.Winner]
}

// QueryName is the HTTPS query name of host on port (RFC 9460 §9.1):
// the host itself for 443, "_PORT._https.HOST" otherwise; fully qualified.
func QueryName(host string, port uint16) string {
	fq := fqdn(host)
	if port == 443 {
		return fq
	}
	return "_" + strconv.Itoa(int(port)) + "._https." + fq
}

func fqdn(name string) string {
	if strings.HasSuffix(name, ".") {
		return name
	}
	return name + "."
}

func sameName(a, b string) bool { return strings.EqualFold(fqdn(a), fqdn(b)) }
