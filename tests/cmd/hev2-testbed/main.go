// Command hev2-testbed brings up hev2's impaired-network test bed (two
// network namespaces, a test DNS server) and runs the scenario suite with
// any client command of the shared scenario-client contract. Root only.
//
//	hev2-testbed up                       bring the bed up, print it, wait for Ctrl-C
//	hev2-testbed selfcheck                bring it up, verify every impairment, exit
//	hev2-testbed suite --client "CMD ..." run the suite; non-zero exit on any miss
//	hev2-testbed scenarios --client NAME="CMD ..." [--client ...]
//	                                      timing table: ideal vs each client
//	hev2-testbed run -- CMD ...           run CMD in the client namespace beside
//	                                      a web server (HTTP, HTTPS) and the scenario names
package main

import (
	"fmt"
	"os"
)

func usage() {
	fmt.Fprint(os.Stderr, `usage: hev2-testbed up|selfcheck|suite|scenarios|run [options]
  up          bring the bed up, print namespaces and addresses, wait for Ctrl-C
  selfcheck   bring the bed up, verify every impairment and the DNS path, exit
  suite       run the scenario suite with one client command (see suite -h)
  scenarios   print the timing table of several clients (see scenarios -h)
  run         run a command in the client namespace, beside a web server (see run -h)
`)
}

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var code int
	switch os.Args[1] {
	case "up":
		code = cmdUp(os.Args[2:])
	case "selfcheck":
		code = cmdSelfCheck(os.Args[2:])
	case "suite":
		code = cmdSuite(os.Args[2:])
	case "scenarios":
		code = cmdScenarios(os.Args[2:])
	case "run":
		code = cmdRun(os.Args[2:])
	case "-h", "--help", "help":
		usage()
	default:
		fmt.Fprintf(os.Stderr, "hev2-testbed: unknown command %q\n", os.Args[1])
		usage()
		code = 2
	}
	os.Exit(code)
}
