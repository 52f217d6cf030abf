package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/hev2/hev2/tests/testbed"
)

// cmdRun brings the bed up with every scenario name served and a web
// server (HTTP and HTTPS, answering with the address it saw) in the server
// namespace, then runs one command in the client namespace with the
// testbed.Env* variables set, and exits with its status. It is how the
// bindings' HTTP client tests reach the bed.
func cmdRun(args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	httpPort := fs.Uint("http-port", testbed.DefaultHTTPPort, "the web server's HTTP port")
	httpsPort := fs.Uint("https-port", testbed.DefaultHTTPSPort, "the web server's HTTPS port")
	redirectPort := fs.Uint("redirect-port", testbed.DefaultRedirectPort, "the port "+testbed.RedirectHost+"'s HTTPS record redirects to")
	selfCheck := fs.Bool("selfcheck", false, "verify every impairment first (about 1.5 s)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: hev2-testbed run [--http-port N] [--https-port N] [--redirect-port N] [--selfcheck] -- CMD [ARGS...]")
		fmt.Fprintln(fs.Output(), "runs CMD in the client namespace with "+testbed.EnvHTTPPort+", "+testbed.EnvHTTPSPort+", "+
			testbed.EnvCAFile+", "+testbed.EnvRows+" (the scenario rows as JSON) and "+testbed.EnvHTTPSRedirect+" (JSON) set")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 || *httpPort == 0 || *httpPort > 65535 || *httpsPort == 0 || *httpsPort > 65535 ||
		*redirectPort == 0 || *redirectPort > 65535 {
		fs.Usage()
		return 2
	}
	bed, ctx, stop, code := startBed(testbed.Options{SkipSelfCheck: !*selfCheck})
	if bed == nil {
		return code
	}
	defer stop()
	bed.InstallScenarios()
	web, err := bed.ServeHTTP(uint16(*httpPort), uint16(*httpsPort))
	if err != nil {
		fmt.Fprintln(os.Stderr, "hev2-testbed:", err)
		return 1
	}
	defer web.Close()
	if _, err := bed.ServeHTTPSRedirect(web, uint16(*redirectPort)); err != nil {
		fmt.Fprintln(os.Stderr, "hev2-testbed:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "hev2-bed-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hev2-testbed:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, web.CertPEM, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "hev2-testbed:", err)
		return 1
	}
	env, err := testbed.WebEnv(web, caFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hev2-testbed:", err)
		return 1
	}
	cmd := bed.Command(ctx, fs.Args()...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && exitErr.Exited() {
		return exitErr.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hev2-testbed:", err)
		return 1
	}
	return 0
}
