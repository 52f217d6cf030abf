package testbed

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// The environment a program run inside the bed against its web server
// (hev2-testbed run, the HTTP client tests) gets: where the server is,
// which certificate to trust, and the scenario rows it may request, so that
// it judges a request as the suite judges a connect.
const (
	EnvHTTPPort  = "HEV2_BED_HTTP_PORT"
	EnvHTTPSPort = "HEV2_BED_HTTPS_PORT"
	EnvCAFile    = "HEV2_BED_CA_FILE"
	EnvRows      = "HEV2_BED_ROWS"
	// EnvHTTPSRedirect is the HTTPS-record redirect (Redirect, JSON), set
	// when the web server has one (ServeHTTPSRedirect).
	EnvHTTPSRedirect = "HEV2_BED_HTTPS_REDIRECT"
)

// RowInfo is one scenario row as EnvRows lists it (JSON).
type RowInfo struct {
	Name string `json:"name"`
	Host string `json:"host"`
	// Winner and Family: the address a correct client reaches and its
	// family ("" when the row must fail).
	Winner string `json:"winner"`
	Family string `json:"family"`
	// IdealMS and TolMS as in Scenario: the connect's RFC-ideal time and
	// the suite's tolerance.
	IdealMS float64 `json:"ideal_ms"`
	TolMS   float64 `json:"tol_ms"`
	About   string  `json:"about"`
}

// Rows lists every scenario as RowInfo.
func Rows() []RowInfo {
	var out []RowInfo
	for _, s := range Scenarios() {
		r := RowInfo{Name: s.Name, Host: s.Host, Family: s.Want.Family(), IdealMS: s.IdealMS, TolMS: s.TolMS, About: s.About}
		if s.Want.Winner.IsValid() {
			r.Winner = s.Want.Winner.String()
		}
		out = append(out, r)
	}
	return out
}

// WebEnv is the environment (KEY=VALUE) describing w to a client program;
// caFile holds w.CertPEM.
func WebEnv(w *WebServer, caFile string) ([]string, error) {
	rows, err := json.Marshal(Rows())
	if err != nil {
		return nil, fmt.Errorf("testbed: rows: %w", err)
	}
	env := []string{
		EnvHTTPPort + "=" + strconv.Itoa(int(w.HTTPPort)),
		EnvHTTPSPort + "=" + strconv.Itoa(int(w.HTTPSPort)),
		EnvCAFile + "=" + caFile,
		EnvRows + "=" + string(rows),
	}
	if w.Redirect != nil {
		r, err := json.Marshal(w.Redirect)
		if err != nil {
			return nil, fmt.Errorf("testbed: redirect: %w", err)
		}
		env = append(env, EnvHTTPSRedirect+"="+string(r))
	}
	return env, nil
}

// InstallScenarios gives every scenario's name its DNS behaviours.
func (b *Bed) InstallScenarios() {
	for _, s := range Scenarios() {
		s.Install(b)
	}
}
