# python: the hev2 package (bindings/python) over libhev2.so via ctypes.
# Debian's Python and pytest (/usr/bin/python3), not pyenv's python3 on PATH.
PYTHON_DEB   := /usr/bin/python3
PYTHON_DIR   := bindings/python
PYTHON_ENV   := HEV2_LIBRARY=$(abspath $(BUILD)/libhev2.so) HEV2_TESTDNS=$(abspath $(BUILD)/hev2-testdns) PYTHONPATH=$(abspath $(PYTHON_DIR)/src) PYTHONDONTWRITEBYTECODE=1

TEST_TARGETS  += test-python
BENCH_TARGETS += bench-python
# util-linux: unshare (private net+mount namespaces for the resolver tests);
# gcc/libc6-dev: the test that checks the ctypes structs against hev2.h;
# openssl: a throwaway certificate for the TLS-over-hev2.aio test.
# python3-mypy: the package's type hints are checked (--strict, make lint).
DEB_PACKAGES  += python3 python3-pytest python3-mypy util-linux iproute2 gcc libc6-dev openssl
# The HTTP clients hev2 is proven with (make test-python-clients).
DEB_PACKAGES  += python3-requests python3-urllib3 python3-aiohttp python3-httpx
# The wheels and the sdist, built and installed: mk/dist-python.mk.

.PHONY: test-python bench-python bench-python-fresh bench-python-aio

# The package's type check, and the scenario client's (run by `make lint`, mk/lint.mk).
PYTHON_MYPY  := MYPYPATH=$(PYTHON_DIR)/src $(PYTHON_DEB) -m mypy --strict --cache-dir=/dev/null \
	$(PYTHON_DIR)/src/hev2 $(PYTHON_DIR)/tests/client/hev2_client.py

# The pytest suite against the freshly built library; its DNS tests ask
# hev2-testdns (mk/testdns.mk).
test-python: capi-lib testdns ## the package's pytest suite (its mypy --strict is in lint)
	$(PYTHON_ENV) $(PYTHON_DEB) -m pytest -q -p no:cacheprovider $(PYTHON_DIR)/tests

# hev2.create_connection vs socket.create_connection vs asyncio's
# create_connection(happy_eyeballs_delay=0.25), loopback, one run.
bench-python: capi-lib ## hev2.create_connection vs socket.create_connection vs asyncio; then bench-python-fresh and bench-python-aio
	$(FRESH_NETNS) env $(PYTHON_ENV) $(PYTHON_DEB) $(PYTHON_DIR)/bench/bench_connect.py
	@$(MAKE) --no-print-directory bench-python-fresh bench-python-aio

# hev2.aio.open_connection vs asyncio.open_connection(happy_eyeballs_delay=0.25)
# in one loop, to 127.0.0.1 and to a name of a hosts file (::1 and
# 127.0.0.1), in a namespace whose hosts file and resolv.conf are the
# benchmark's own (scripts/hosts-netns.sh); bench/loopback-only.sh first
# proves, with strace, that a few connects of each name nothing but loopback.
BENCH_AIO_NAME  := dual.bench.test
BENCH_AIO_HOSTS := 127.0.0.1 localhost\n::1 localhost\n::1 $(BENCH_AIO_NAME)\n127.0.0.1 $(BENCH_AIO_NAME)
bench-python-aio: capi-lib ## hev2.aio.open_connection vs asyncio.open_connection(happy_eyeballs_delay=0.25), literal and hosts-file name (goal <= 1.1x)
	@if [ "$$(id -u)" != 0 ]; then \
		echo "SKIP (the hosts-file name): needs root for a namespace with its own hosts file"; \
		$(FRESH_NETNS) env $(PYTHON_ENV) $(PYTHON_DEB) $(PYTHON_DIR)/bench/bench_aio.py; exit; fi; \
	set -e; \
	scripts/hosts-netns.sh '$(BENCH_AIO_HOSTS)' env $(PYTHON_ENV) \
		bench/loopback-only.sh $(PYTHON_DEB) $(PYTHON_DIR)/bench/bench_aio.py --probe $(BENCH_AIO_NAME); \
	scripts/hosts-netns.sh '$(BENCH_AIO_HOSTS)' env $(PYTHON_ENV) $(PYTHON_DEB) $(PYTHON_DIR)/bench/bench_aio.py $(BENCH_AIO_NAME)

# A script that imports hev2 and connects once beside the same with socket,
# as whole fresh processes (BENCH_PAIRS pairs, 30 by default): wall time,
# where it goes, memory.
bench-python-fresh: capi-lib ## fresh processes: import hev2 + create_connection vs socket's (goal <= 15 ms), where the time goes, RSS
	$(FRESH_NETNS) env $(PYTHON_ENV) $(PYTHON_DEB) $(PYTHON_DIR)/bench/bench_fresh_process.py

# The shared scenario suite in the test bed's namespaces, through the Python
# client command, blocking and asyncio, with the default (system) and the
# built-in resolver (root only, like test-testbed), against $(BUILD)'s library.
TEST_TARGETS += test-python-scenarios
# The clients are test code (tests/client), not part of the package.
PYTHON_CLIENT_DIR := $(abspath $(PYTHON_DIR)/tests/client)
SCENARIO_CLIENTS += --client "hev2-python=$(PYTHON_CLIENT_DIR)/hev2-client" \
	--client "hev2-python-asyncio=$(PYTHON_CLIENT_DIR)/hev2-client-asyncio"

.PHONY: test-python-scenarios
test-python-scenarios: capi-lib testbed-tools ## the scenario suite through the Python clients, blocking and asyncio (root)
	@if [ "$$(id -u)" != 0 ]; then echo "SKIP: test-python-scenarios needs root (network namespaces)"; exit 0; fi; \
	set -e; \
	for client in hev2-client hev2-client-asyncio; do \
		$(PYTHON_ENV) $(TESTBED_SUITE) --require https-rr,ech --trace-files $(BUILD)/traces/$$client --client "$(PYTHON_CLIENT_DIR)/$$client"; \
		$(PYTHON_ENV) $(TESTBED_SUITE) --require https-rr,ech --client "$(PYTHON_CLIENT_DIR)/$$client --resolver builtin"; \
	done

# The HTTP clients on the test bed (root): requests, urllib3, urllib and
# http.client through hev2.install(), httpx (blocking and asyncio) through
# hev2.httpx's transports, aiohttp through hev2.aiohttp.TCPConnector, over
# HTTP and HTTPS, on "v6-blackhole" and "aaaa-never", judged as the suite
# judges a connect (testbed_tests/test_http_clients.py); each with its
# https_rr setting on and off against the bed's HTTPS-record redirect
# (testbed_tests/test_https_rr_redirect.py: on, the page from the record's
# port with the origin's name as SNI; off, refused); then the same clients
# without hev2, shown (capped at 3 s), not judged.
TEST_TARGETS += test-python-clients
.PHONY: test-python-clients
test-python-clients: capi-lib testbed-tools ## requests/urllib3/httpx/aiohttp/urllib with hev2 on the test bed, HTTP and HTTPS, https_rr's redirect (root)
	@if [ "$$(id -u)" != 0 ]; then echo "SKIP: test-python-clients needs root (network namespaces)"; exit 0; fi; \
	$(PYTHON_ENV) $(TESTBED_BIN) run -- sh -c '$(PYTHON_DEB) -m pytest -q -p no:cacheprovider $(PYTHON_DIR)/testbed_tests && \
		$(PYTHON_DEB) $(PYTHON_DIR)/testbed_tests/without_hev2.py'
