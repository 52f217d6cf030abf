# testbed: real impaired networks in namespaces, a test DNS server, and the
# scenario suite every front-end passes (tests/testbed/README.md).
#
# Other front-ends run the same suite with their own client command:
#   $(TESTBED_SUITE) --client "$(BUILD)/hev2-connect --json"
# (depend on testbed-tools), and add a column to `make scenarios` with:
#   SCENARIO_CLIENTS += --client "NAME=COMMAND WORDS"
BUILD_TARGETS += testbed-tools
TEST_TARGETS  += test-testbed
BENCH_TARGETS += scenarios
DEB_PACKAGES  += iproute2 iptables procps libc-bin curl python3

TESTBED_BIN   := $(BUILD)/hev2-testbed
TESTBED_DIAL  := $(BUILD)/hev2-dial
TESTBED_GONET := $(BUILD)/hev2-peer-gonet
TESTBED_SUITE := $(TESTBED_BIN) suite
TESTBED_GO_SOURCES = $(shell find tests/testbed tests/testdns tests/cmd/hev2-testbed tests/cmd/hev2-dial core internal -name '*.go' -not -name '*_test.go') go.mod go.sum

# Columns of `make scenarios`: hev2's Go API first, the other front-ends as
# they append themselves to SCENARIO_CLIENTS, then the peers.
SCENARIO_GO = --client "hev2-go=$(TESTBED_DIAL)" \
	--client "hev2-go-builtin=$(TESTBED_DIAL) --resolver builtin"
SCENARIO_PEERS = --client "go-net.Dialer=$(TESTBED_GONET)" \
	--client "py-asyncio=/usr/bin/python3 tests/testbed/peers/asyncio_client.py" \
	--client "curl=tests/testbed/peers/curl_client.sh"
SCENARIO_RUNS ?= 3

.PHONY: testbed-tools test-testbed scenarios
testbed-tools: $(TESTBED_BIN) $(TESTBED_DIAL) $(TESTBED_GONET) ## build hev2-testbed, hev2-dial and the net.Dialer peer

$(TESTBED_BIN): $(TESTBED_GO_SOURCES)
	$(GO) build -o $@ ./tests/cmd/hev2-testbed
$(TESTBED_DIAL): $(TESTBED_GO_SOURCES)
	$(GO) build -o $@ ./tests/cmd/hev2-dial
$(TESTBED_GONET): $(TESTBED_GO_SOURCES)
	$(GO) build -o $@ ./tests/testbed/peers/gonet

# The suite with the Go API client, with getaddrinfo and with hev2's built-in
# resolver, HTTPS rows included (--require: hev2-dial must accept --https-rr
# and --ech; a client that may lack them, as a binding's, leaves --require
# out and its HTTPS rows are printed N/A when it answers 2). The bed needs root (network namespaces): anyone else gets one
# SKIP line.
test-testbed: testbed-tools ## the test bed's Go tests and the scenario suite with the Go API client (root)
	@if [ "$$(id -u)" != 0 ]; then echo "SKIP: test-testbed needs root (network namespaces)"; exit 0; fi; \
	set -e; \
	$(GO) test -count=1 ./tests/testbed/...; \
	$(TESTBED_SUITE) --require https-rr,ech --trace-files $(BUILD)/traces/go --client "$(TESTBED_DIAL)"; \
	$(TESTBED_SUITE) --require https-rr,ech --client "$(TESTBED_DIAL) --resolver builtin"

# The timing table: the RFC-ideal time beside hev2 and its peers (median of
# SCENARIO_RUNS runs). Peers failing rows is data, not a failure.
scenarios: testbed-tools ## timing table: RFC-ideal vs hev2 (every front-end) vs peers (root)
	@if [ "$$(id -u)" != 0 ]; then echo "SKIP: scenarios needs root (network namespaces)"; exit 0; fi; \
	$(TESTBED_BIN) scenarios --runs $(SCENARIO_RUNS) $(SCENARIO_GO) $(SCENARIO_CLIENTS) $(SCENARIO_PEERS)

# net/http over core.Dialer (http.Transport{DialContext: d.DialContext}) on
# the bed: HTTP and HTTPS requests to the bed's web server on "v6-blackhole"
# and "aaaa-never", judged like the suite (winner seen by the server, within
# the row's tolerance); net/http's own dialer on the same rows is printed
# (-v), not judged. Then examples/go-http, run in the bed the same way.
TEST_TARGETS += test-go-http
.PHONY: test-go-http
test-go-http: testbed-tools ## net/http with core.Dialer's DialContext on the test bed, and examples/go-http (root)
	@if [ "$$(id -u)" != 0 ]; then echo "SKIP: test-go-http needs root (network namespaces)"; exit 0; fi; \
	set -e; \
	$(GO) test -count=1 -v ./tests/nethttptest/; \
	$(GO) build -o $(BUILD)/examples/go-http ./examples/go-http; \
	out=$$($(TESTBED_BIN) run -- sh -c 'SSL_CERT_FILE=$$HEV2_BED_CA_FILE $(BUILD)/examples/go-http https://v6-blackhole.hev2.test:$$HEV2_BED_HTTPS_PORT/example'); \
	echo "$$out"; echo "$$out" | grep -q '"local":"198.18.0.10","family":"ipv4","tls":true'
