# python: the hev2 package (bindings/python) over libhev2.so via ctypes.
# Debian's Python and pytest (/usr/bin/python3), not pyenv's python3 on PATH.
PYTHON_DEB   := /usr/bin/python3
PYTHON_DIR   := bindings/python
PYTHON_ENV   := HEV2_LIBRARY=$(abspath $(BUILD)/libhev2.so) PYTHONPATH=$(abspath $(PYTHON_DIR)/src) PYTHONDONTWRITEBYTECODE=1

TEST_TARGETS  += test-python
BENCH_TARGETS += bench-python
# util-linux: unshare (private net+mount namespaces for the resolver tests);
# gcc/libc6-dev: the test that checks the ctypes structs against hev2.h;
# openssl: a throwaway certificate for the TLS-over-hev2.aio test.
# python3-mypy: the package's type hints are checked (--strict).
DEB_PACKAGES  += python3 python3-pytest python3-mypy util-linux iproute2 gcc libc6-dev openssl

.PHONY: test-python bench-python

# The package's type check, then its pytest suite against the freshly built library.
test-python: capi-lib
	$(PYTHON_DEB) -m mypy --strict --cache-dir=/dev/null $(PYTHON_DIR)/src/hev2
	$(PYTHON_ENV) $(PYTHON_DEB) -m pytest -q -p no:cacheprovider $(PYTHON_DIR)/tests

# hev2.create_connection vs socket.create_connection vs asyncio's
# create_connection(happy_eyeballs_delay=0.25), loopback, one run.
bench-python: capi-lib
	$(PYTHON_ENV) $(PYTHON_DEB) $(PYTHON_DIR)/bench/bench_connect.py

# The shared scenario suite in the test bed's namespaces, through the Python
# client command, blocking and asyncio (root only, like test-testbed).
TEST_TARGETS += test-python-scenarios
SCENARIO_CLIENTS += --client "hev2-python=$(PYTHON_DIR)/hev2-client" \
	--client "hev2-python-asyncio=$(PYTHON_DIR)/hev2-client-asyncio"

.PHONY: test-python-scenarios
test-python-scenarios: capi-lib testbed-tools
	@if [ "$$(id -u)" != 0 ]; then echo "SKIP: test-python-scenarios needs root (network namespaces)"; exit 0; fi; \
	set -e; \
	$(TESTBED_SUITE) --client "$(abspath $(PYTHON_DIR)/hev2-client)"; \
	$(TESTBED_SUITE) --client "$(abspath $(PYTHON_DIR)/hev2-client-asyncio)"
